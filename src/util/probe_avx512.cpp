// AVX-512 inner loops of the machine probes (compiled with the AVX-512 + VNNI flags; called only
// when the CPU has them).
#include <immintrin.h>

#include "util/probe_kernels.h"

namespace edgeinfer::probe {

// The accumulators are named variables, not an array: GCC keeps an array of vectors in memory,
// and the store-forwarding latency would then be measured instead of the execution ports.
#define EI_PROBE_10(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9)
#define EI_PROBE_12(X) EI_PROBE_10(X) X(10) X(11)
#define EI_PROBE_16(X) EI_PROBE_12(X) X(12) X(13) X(14) X(15)

uint64_t int8_dot_avx512(int64_t iters, int32_t seed, int32_t* sink) {
  // vpdpbusd: 64 u8 x s8 multiply-adds into 16 int32 lanes per instruction. Two ports with a
  // latency of 5-6 cycles (Sapphire/Emerald Rapids) need 12 chains in flight; 16 leave room.
  // With 10, as this probe first had, it read ~575 Gop/s on one core of the Intel VM where 12
  // or 16 chains read 700-750 (2 per cycle at ~2.7 GHz): the int8 peak was understated by a
  // quarter, and the prefill rooflines overstated as much.
  __m512i a = _mm512_set1_epi8(static_cast<char>(seed & 0x7f));
  __m512i b = _mm512_set1_epi8(static_cast<char>((seed >> 8) & 0x3f));
  // Each chain starts from its own value: chains that start equal and take the same operands
  // are one chain to GCC, which then keeps a single vpdpbusd per iteration (the probe then
  // counted ten for each one it timed, and read 2.6x the real peak on Zen 4).
#define DECL(k) __m512i acc##k = _mm512_set1_epi32(k + 1);
  EI_PROBE_16(DECL)
#undef DECL
  for (int64_t i = 0; i < iters; ++i) {
    __asm__ volatile("" : "+v"(a), "+v"(b));
#define STEP(k) acc##k = _mm512_dpbusd_epi32(acc##k, a, b);
    EI_PROBE_16(STEP)
#undef STEP
  }
  __m512i s = _mm512_setzero_si512();
#define SUM(k) s = _mm512_add_epi32(s, acc##k);
  EI_PROBE_16(SUM)
#undef SUM
  // The lanes wrap after enough iterations (vpdpbusd and vpaddd wrap in hardware), and GCC's
  // _mm512_reduce_add_epi32 adds them as signed ints, undefined on overflow: fold them as
  // unsigned instead. Only the sink's dependence on the loop matters.
  alignas(64) uint32_t out[16];
  _mm512_store_si512(out, s);
  uint32_t folded = 0;
  for (const uint32_t lane : out) folded += lane;
  *sink = static_cast<int32_t>(folded);
  return static_cast<uint64_t>(iters) * 16 * 64 * 2;
}

uint64_t fma_f32_avx512(int64_t iters, float seed, float* sink) {
  __m512 m = _mm512_set1_ps(0.999999f);
  __m512 c = _mm512_set1_ps(seed * 1e-7f);
#define DECL(k) __m512 acc##k = _mm512_set1_ps(seed + static_cast<float>(k));
  EI_PROBE_12(DECL)
#undef DECL
  for (int64_t i = 0; i < iters; ++i) {
    __asm__ volatile("" : "+v"(m), "+v"(c));
#define STEP(k) acc##k = _mm512_fmadd_ps(acc##k, m, c);
    EI_PROBE_12(STEP)
#undef STEP
  }
  __m512 s = _mm512_setzero_ps();
#define SUM(k) s = _mm512_add_ps(s, acc##k);
  EI_PROBE_12(SUM)
#undef SUM
  // Lanes summed through memory: GCC 12's _mm512_reduce_add_ps warns (-Wuninitialized) inside
  // its own header.
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, s);
  float total = 0;
  for (float x : lanes) total += x;
  *sink = total;
  return static_cast<uint64_t>(iters) * 12 * 16 * 2;
}

uint64_t read_avx512(const void* p, size_t n) {
  const auto* v = static_cast<const __m512i*>(p);
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i < n / 64; i += 4) {
    a0 = _mm512_xor_si512(a0, _mm512_load_si512(v + i));
    a1 = _mm512_xor_si512(a1, _mm512_load_si512(v + i + 1));
    a2 = _mm512_xor_si512(a2, _mm512_load_si512(v + i + 2));
    a3 = _mm512_xor_si512(a3, _mm512_load_si512(v + i + 3));
  }
  const __m512i s = _mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a2, a3));
  alignas(64) uint64_t lanes[8];  // folded through memory, as in fma_f32_avx512
  _mm512_store_si512(lanes, s);
  uint64_t total = 0;
  for (uint64_t x : lanes) total ^= x;
  return total;
}

}  // namespace edgeinfer::probe
