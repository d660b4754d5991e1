#pragma once
// One persistent pool of worker threads. `run` executes a function on every thread (the caller
// is thread 0) and returns when all are done. Workers spin briefly between jobs and then sleep
// on a futex (std::atomic::wait), so back-to-back matmuls cost no thread wake-ups while a busy
// decode loop is running, and an idle server burns no CPU. No allocation per job.
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace edgeinfer {

class ThreadPool {
 public:
  // n_threads: total threads including the caller; <= 0 means the number of hardware threads.
  explicit ThreadPool(int n_threads = 1);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Calls fn(thread_index, n_threads) once on each thread; thread_index 0 is the caller.
  // Not reentrant: fn must not call run() on the same pool.
  template <class F>
  void run(F&& fn) {
    using Fn = std::remove_reference_t<F>;
    run_impl([](void* ctx, int ith, int nth) { (*static_cast<Fn*>(ctx))(ith, nth); }, &fn);
  }

  // Splits [0, n) into n_threads contiguous ranges and calls fn(begin, end) for each non-empty one.
  // Runs inline on the caller when n < 2 * min_per_thread: waking threads for a few microseconds
  // of work costs more than it saves (and far more when other processes hold the cores).
  template <class F>
  void parallel_for(int64_t n, F&& fn, int64_t min_per_thread = 1) {
    if (n <= 0) return;
    if (n_threads_ == 1 || n < 2 * min_per_thread) {
      fn(int64_t{0}, n);
      return;
    }
    run([&](int ith, int nth) {
      int64_t begin = n * ith / nth, end = n * (ith + 1) / nth;
      if (begin < end) fn(begin, end);
    });
  }

  static int hardware_threads();

 private:
  using JobFn = void (*)(void* ctx, int ith, int nth);
  void run_impl(JobFn fn, void* ctx);
  void worker_main(int ith);

  int n_threads_ = 1;
  std::vector<std::thread> workers_;
  JobFn job_fn_ = nullptr;
  void* job_ctx_ = nullptr;
  alignas(64) std::atomic<uint32_t> epoch_{0};
  alignas(64) std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace edgeinfer
