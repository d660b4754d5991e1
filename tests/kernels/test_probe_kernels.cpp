// The machine probes' inner loops (util/probe_kernels.h) do all the work they count: each read
// loop returns the XOR of every 64-bit word of its buffer (one that skipped some bytes would
// report a bandwidth it never moved), and each SIMD compute loop's folded accumulators equal the
// closed form of `iters` iterations of its instruction mix on every lane of every chain (the
// int8 sums wrap as the instructions do; the FP32 chains are replayed with std::fma). Runs every
// path the machine supports; under qemu the NEON loops, which the cross build compiles.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <vector>

#include "kernels/isa.h"
#include "util/probe_kernels.h"

namespace edgeinfer::kernel_test {
namespace {

// One path's probe loops and their shape: 32-bit lanes per accumulator, int8 chains (each
// lane 4 multiply-adds per instruction; AVX2: 3 a_k times 2 operands) and FMA chains.
struct ProbePath {
  Isa isa;
  uint64_t (*read)(const void*, size_t);
  uint64_t (*int8)(int64_t, int32_t, int32_t*);  // nullptr: no closed form (scalar)
  uint64_t (*fma)(int64_t, float, float*);
  uint32_t lanes = 0;
  uint32_t int8_chains = 0;
  uint32_t fma_chains = 0;
};

std::vector<ProbePath> probe_paths() {
  std::vector<ProbePath> v = {{Isa::Scalar, probe::read_scalar, nullptr, nullptr}};
#if defined(EDGEINFER_ARCH_X86)
  if (isa_supported(Isa::Avx2)) {
    v.push_back({Isa::Avx2, probe::read_avx2, probe::int8_dot_avx2, probe::fma_f32_avx2, 8, 6, 12});
  }
  if (isa_supported(Isa::Avx512)) {
    v.push_back({Isa::Avx512, probe::read_avx512, probe::int8_dot_avx512, probe::fma_f32_avx512, 16, 16, 12});
  }
#elif defined(EDGEINFER_ARCH_ARM64)
  if (isa_supported(Isa::Neon)) {
    v.push_back({Isa::Neon, probe::read_neon, probe::int8_dot_neon, probe::fma_f32_neon, 4, 16, 16});
  }
#endif
  return v;
}

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

TEST(ProbeKernels, ReadLoopsReadEveryWordOnce) {
  std::mt19937_64 rng(7);
  for (const ProbePath& p : probe_paths()) {
    for (size_t n : {size_t{256}, size_t{4096}, size_t{65536 + 768}}) {
      std::unique_ptr<uint64_t, FreeDeleter> buf(static_cast<uint64_t*>(std::aligned_alloc(64, n)));
      ASSERT_NE(buf, nullptr);
      uint64_t want = 0;
      for (size_t i = 0; i < n / 8; ++i) {
        buf.get()[i] = rng();
        want ^= buf.get()[i];
      }
      EXPECT_EQ(p.read(buf.get(), n), want) << isa_name(p.isa) << " n=" << n;
      // One word changed changes the result: the loop reads the last word too.
      buf.get()[n / 8 - 1] ^= 0x10;
      EXPECT_EQ(p.read(buf.get(), n), want ^ 0x10) << isa_name(p.isa) << " n=" << n;
    }
  }
}

// Per path: lanes per accumulator and chains, and each iteration's product per int32 lane.
// AVX-512: vpdpbusd of u8 a = seed & 0x7f and s8 b = (seed >> 8) & 0x3f, chain k from k + 1.
// NEON: sdot of the same a and b (s8 x s8), chain k from k + 1. AVX2: three a_k = (seed + k) &
// 0x7f, each times b and c = (seed >> 16) & 0x3f (maddubs + madd), chains from 0.
uint32_t int8_closed_form(const ProbePath& p, int64_t iters, int32_t seed) {
  const uint32_t a = static_cast<uint32_t>(seed & 0x7f), b = static_cast<uint32_t>((seed >> 8) & 0x3f);
  const uint32_t n = static_cast<uint32_t>(iters);  // wrapping, as the lanes do
  if (p.isa == Isa::Avx2) {
    const uint32_t c = static_cast<uint32_t>((seed >> 16) & 0x3f);
    uint32_t lane = 0;
    for (int k = 0; k < 3; ++k) lane += n * 4u * (static_cast<uint32_t>((seed + k) & 0x7f) * (b + c));
    return p.lanes * lane;
  }
  const uint32_t starts = p.int8_chains * (p.int8_chains + 1) / 2;  // 1 + 2 + ... + chains
  return p.lanes * starts + p.lanes * p.int8_chains * n * 4u * a * b;
}

TEST(ProbeKernels, Int8LoopsDoEveryDotProductTheyCount) {
  for (const ProbePath& p : probe_paths()) {
    if (!p.int8) continue;
    const uint64_t per_iter = uint64_t{p.int8_chains} * p.lanes * 4 * 2;
    for (int64_t iters : {1, 7, 1000, 100003}) {
      for (int32_t seed : {0x123457, 0x7f3f3f, 0x010101}) {
        int32_t sink = 0;
        EXPECT_EQ(p.int8(iters, seed, &sink), static_cast<uint64_t>(iters) * per_iter) << isa_name(p.isa);
        EXPECT_EQ(static_cast<uint32_t>(sink), int8_closed_form(p, iters, seed))
            << isa_name(p.isa) << " iters=" << iters << " seed=" << seed;
      }
    }
  }
}

TEST(ProbeKernels, FmaLoopsDoEveryFmaTheyCount) {
  for (const ProbePath& p : probe_paths()) {
    if (!p.fma) continue;
    const int lanes = static_cast<int>(p.lanes), chains = static_cast<int>(p.fma_chains);
    for (int64_t iters : {1, 9, 5000}) {
      for (float seed : {1.0f, 1.25f, 0.5f}) {
        // Every lane of chain k: v = seed + k, then v = v * m + c fused, iters times; the chains
        // added in order from 0, then the lanes in order.
        const float m = 0.999999f, c = seed * 1e-7f;
        float chain_sum = 0;
        for (int k = 0; k < chains; ++k) {
          float v = seed + static_cast<float>(k);
          for (int64_t i = 0; i < iters; ++i) v = std::fma(v, m, c);
          chain_sum += v;
        }
        float want = 0;
        for (int l = 0; l < lanes; ++l) want += chain_sum;
        float sink = 0;
        EXPECT_EQ(p.fma(iters, seed, &sink), static_cast<uint64_t>(iters) * static_cast<uint64_t>(chains * lanes * 2))
            << isa_name(p.isa);
        EXPECT_EQ(sink, want) << isa_name(p.isa) << " iters=" << iters << " seed=" << seed;
      }
    }
  }
}

}  // namespace
}  // namespace edgeinfer::kernel_test
