#include "util/probes.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "kernels/isa.h"
#include "util/error.h"
#include "util/probe_kernels.h"
#include "util/thread_pool.h"

namespace edgeinfer {

namespace probe {

uint64_t int8_dot_scalar(int64_t iters, int32_t seed, int32_t* sink) {
  int32_t acc[8] = {};
  uint8_t a[32];
  int8_t b[32];
  for (int i = 0; i < 32; ++i) {
    a[i] = static_cast<uint8_t>((seed + i) & 0x7f);
    b[i] = static_cast<int8_t>((seed >> 8) + i);
  }
  for (int64_t it = 0; it < iters; ++it) {
    for (int i = 0; i < 32; ++i) acc[i & 7] += a[i] * b[i];
    a[it & 31] ^= 1;
  }
  *sink = acc[0] + acc[7];
  return static_cast<uint64_t>(iters) * 32 * 2;
}

uint64_t fma_f32_scalar(int64_t iters, float seed, float* sink) {
  float acc[8];
  for (int k = 0; k < 8; ++k) acc[k] = seed + static_cast<float>(k);
  for (int64_t i = 0; i < iters; ++i) {
    for (float& v : acc) v = v * 0.999999f + 1e-7f;
  }
  *sink = acc[0] + acc[7];
  return static_cast<uint64_t>(iters) * 8 * 2;
}

uint64_t read_scalar(const void* p, size_t n) {
  const auto* v = static_cast<const uint64_t*>(p);
  uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  for (size_t i = 0; i < n / 8; i += 4) {
    a0 ^= v[i];
    a1 ^= v[i + 1];
    a2 ^= v[i + 2];
    a3 ^= v[i + 3];
  }
  return a0 ^ a1 ^ a2 ^ a3;
}

}  // namespace probe

namespace {

using Clock = std::chrono::steady_clock;

struct Paths {
  uint64_t (*int8)(int64_t, int32_t, int32_t*) = probe::int8_dot_scalar;
  uint64_t (*fma)(int64_t, float, float*) = probe::fma_f32_scalar;
  uint64_t (*read)(const void*, size_t) = probe::read_scalar;
  Isa isa = Isa::Scalar;
};

Paths paths() {
  Paths p;
#if defined(EDGEINFER_ARCH_X86)
  const Isa isa = select_isa();
  if (isa == Isa::Avx512) {
    p.int8 = probe::int8_dot_avx512;
    p.fma = probe::fma_f32_avx512;
    p.read = probe::read_avx512;
    p.isa = Isa::Avx512;
  } else if (isa == Isa::Avx2) {
    p.int8 = probe::int8_dot_avx2;
    p.fma = probe::fma_f32_avx2;
    p.read = probe::read_avx2;
    p.isa = Isa::Avx2;
  }
#elif defined(EDGEINFER_ARCH_ARM64)
  if (select_isa() == Isa::Neon) {
    p.int8 = probe::int8_dot_neon;
    p.fma = probe::fma_f32_neon;
    p.read = probe::read_neon;
    p.isa = Isa::Neon;
  }
#endif
  return p;
}

double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// Runs `loop(iters)` on every thread; calibrates iters to about `target` seconds on one thread
// first, then takes the best of 3 timed runs on all threads.
template <class Loop>
double measure_peak(ThreadPool& pool, double target, Loop loop) {
  int64_t iters = 1000;
  for (;;) {
    const auto t0 = Clock::now();
    loop(iters);
    const double s = seconds(t0, Clock::now());
    if (s >= target / 4 || iters > (int64_t{1} << 40)) {
      iters = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(iters) * target / std::max(s, 1e-9)));
      break;
    }
    iters *= 4;
  }
  const int nth = pool.size();
  std::vector<uint64_t> ops(static_cast<size_t>(nth));
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = Clock::now();
    pool.run([&](int ith, int) { ops[static_cast<size_t>(ith)] = loop(iters); });
    const double s = seconds(t0, Clock::now());
    uint64_t total = 0;
    for (uint64_t o : ops) total += o;
    best = std::max(best, static_cast<double>(total) / s);
  }
  return best;
}

}  // namespace

double probe_int8_peak(ThreadPool& pool, const ProbeOptions& opt) {
  const Paths p = paths();
  std::vector<int32_t> sinks(static_cast<size_t>(pool.size()) * 16);
  const int32_t seed = static_cast<int32_t>(reinterpret_cast<uintptr_t>(sinks.data()) >> 4) | 3;
  int32_t one_sink = 0;
  return measure_peak(pool, opt.compute_seconds, [&](int64_t iters) {
    return p.int8(iters, seed, &one_sink);
  });
}

double probe_fma_peak(ThreadPool& pool, const ProbeOptions& opt) {
  const Paths p = paths();
  float sink = 0;
  const float seed = static_cast<float>(reinterpret_cast<uintptr_t>(&sink) & 0xff) * 1e-3f + 1.0f;
  return measure_peak(pool, opt.compute_seconds, [&](int64_t iters) {
    float local = 0;
    const uint64_t ops = p.fma(iters, seed, &local);
    if (local == 12345.0f) sink = local;
    return ops;
  });
}

ReadProbe::ReadProbe(ThreadPool& pool, size_t bytes) : pool_(pool) {
  const int nth = pool.size();
  // Each thread's slice is a multiple of 4 KiB, so every slice is 64-byte aligned and a multiple
  // of 256 bytes as the read loops require.
  per_thread_ = std::max<size_t>(4096, bytes / static_cast<size_t>(nth) / 4096 * 4096);
  const size_t total = per_thread_ * static_cast<size_t>(nth);
  void* raw = std::aligned_alloc(4096, total);
  if (!raw) throw Error("bandwidth probe: cannot allocate " + std::to_string(total >> 20) + " MiB");
  buf_.reset(raw);
  auto* b = static_cast<uint8_t*>(raw);
  // Touch with nonzero data from the thread that will read it (first-touch placement; and the
  // kernel's shared zero page would make an untouched buffer look infinitely fast).
  const size_t per = per_thread_;
  pool.run([&](int ith, int) { std::memset(b + per * static_cast<size_t>(ith), 0x5a ^ ith, per); });
}

double ReadProbe::measure(int passes) {
  const Paths p = paths();
  const int nth = pool_.size();
  const size_t per = per_thread_;
  const auto* b = static_cast<const uint8_t*>(buf_.get());
  std::vector<uint64_t> sums(static_cast<size_t>(nth) * 8);
  double best = 0;
  for (int pass = 0; pass < std::max(1, passes); ++pass) {
    const auto t0 = Clock::now();
    pool_.run([&](int ith, int) { sums[static_cast<size_t>(ith) * 8] += p.read(b + per * static_cast<size_t>(ith), per); });
    const double s = seconds(t0, Clock::now());
    best = std::max(best, static_cast<double>(per * static_cast<size_t>(nth)) / s);
  }
  volatile uint64_t keep = sums[0];
  (void)keep;
  return best;
}

double probe_read_bandwidth(ThreadPool& pool, const ProbeOptions& opt) {
  ReadProbe probe(pool, opt.read_bytes);
  return probe.measure(opt.read_passes);
}

ProbeResult run_probes(ThreadPool& pool, const ProbeOptions& opt, ReadProbe* read) {
  ProbeResult r;
  r.threads = pool.size();
  r.isa = std::string(isa_name(paths().isa));
  r.read_bytes_per_s = read ? read->measure(opt.read_passes) : probe_read_bandwidth(pool, opt);
  r.int8_ops_per_s = probe_int8_peak(pool, opt);
  r.fma_flops = probe_fma_peak(pool, opt);
  return r;
}

}  // namespace edgeinfer
