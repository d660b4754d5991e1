#include "util/thread_pool.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define EDGEINFER_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define EDGEINFER_CPU_RELAX() asm volatile("yield" ::: "memory")
#else
#define EDGEINFER_CPU_RELAX() ((void)0)
#endif

namespace edgeinfer {

namespace {
// About 50-100 microseconds of spinning before a worker sleeps.
constexpr int kSpinIterations = 20000;
}  // namespace

int ThreadPool::hardware_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

ThreadPool::ThreadPool(int n_threads) {
  n_threads_ = n_threads <= 0 ? hardware_threads() : n_threads;
  workers_.reserve(n_threads_ - 1);
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_main(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_release);
  epoch_.fetch_add(1, std::memory_order_acq_rel);
  epoch_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_impl(JobFn fn, void* ctx) {
  if (n_threads_ == 1) {
    fn(ctx, 0, 1);
    return;
  }
  job_fn_ = fn;
  job_ctx_ = ctx;
  pending_.store(n_threads_ - 1, std::memory_order_relaxed);
  epoch_.fetch_add(1, std::memory_order_acq_rel);
  epoch_.notify_all();
  fn(ctx, 0, n_threads_);
  for (int spin = 0; pending_.load(std::memory_order_acquire) != 0; ++spin) {
    if (spin < kSpinIterations) {
      EDGEINFER_CPU_RELAX();
    } else {
      int p = pending_.load(std::memory_order_acquire);
      if (p != 0) pending_.wait(p, std::memory_order_acquire);
    }
  }
}

void ThreadPool::worker_main(int ith) {
  uint32_t seen = 0;
  for (;;) {
    uint32_t e;
    for (int spin = 0;; ++spin) {
      e = epoch_.load(std::memory_order_acquire);
      if (e != seen) break;
      if (spin < kSpinIterations) {
        EDGEINFER_CPU_RELAX();
      } else {
        epoch_.wait(seen, std::memory_order_acquire);
      }
    }
    seen = e;
    if (stop_.load(std::memory_order_acquire)) return;
    job_fn_(job_ctx_, ith, n_threads_);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

}  // namespace edgeinfer
