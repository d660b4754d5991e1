// NEON inner loops of the machine probes (compiled with -march=armv8.2-a+dotprod+fp16; called
// only where the CPU reports the dot-product extension, as for the NEON kernels). Before these,
// an aarch64 build probed with the scalar loops, a fraction of what the NEON kernels can do, so
// its prefill rooflines read far above 100%.
#include <arm_neon.h>

#include "util/probe_kernels.h"

namespace edgeinfer::probe {

// The accumulators are named variables, not an array (see probe_avx512.cpp).
#define EI_PROBE_16(X) \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)

uint64_t int8_dot_neon(int64_t iters, int32_t seed, int32_t* sink) {
  // sdot, the NEON kernels' dot product: 16 s8 x s8 multiply-adds into 4 int32 lanes per
  // instruction. 16 independent chains cover 4 pipes at a latency of 4 cycles. Each chain starts
  // from its own value, so that the compiler cannot merge them (see probe_avx512.cpp).
  int8x16_t a = vdupq_n_s8(static_cast<int8_t>(seed & 0x7f));
  int8x16_t b = vdupq_n_s8(static_cast<int8_t>((seed >> 8) & 0x3f));
#define DECL(k) int32x4_t acc##k = vdupq_n_s32(k + 1);
  EI_PROBE_16(DECL)
#undef DECL
  for (int64_t i = 0; i < iters; ++i) {
    __asm__ volatile("" : "+w"(a), "+w"(b));
#define STEP(k) acc##k = vdotq_s32(acc##k, a, b);
    EI_PROBE_16(STEP)
#undef STEP
  }
  // Lanes and chains added as unsigned: they wrap after enough iterations (as sdot does), and
  // signed overflow would be undefined here.
  uint32x4_t s = vdupq_n_u32(0);
#define SUM(k) s = vaddq_u32(s, vreinterpretq_u32_s32(acc##k));
  EI_PROBE_16(SUM)
#undef SUM
  *sink = static_cast<int32_t>(vaddvq_u32(s));
  return static_cast<uint64_t>(iters) * 16 * 16 * 2;
}

uint64_t fma_f32_neon(int64_t iters, float seed, float* sink) {
  // fmla on 4 lanes; 16 chains as above.
  float32x4_t m = vdupq_n_f32(0.999999f);
  float32x4_t c = vdupq_n_f32(seed * 1e-7f);
#define DECL(k) float32x4_t acc##k = vdupq_n_f32(seed + static_cast<float>(k));
  EI_PROBE_16(DECL)
#undef DECL
  for (int64_t i = 0; i < iters; ++i) {
    __asm__ volatile("" : "+w"(m), "+w"(c));
#define STEP(k) acc##k = vfmaq_f32(c, acc##k, m);
    EI_PROBE_16(STEP)
#undef STEP
  }
  float32x4_t s = vdupq_n_f32(0.0f);
#define SUM(k) s = vaddq_f32(s, acc##k);
  EI_PROBE_16(SUM)
#undef SUM
  alignas(16) float lanes[4];
  vst1q_f32(lanes, s);
  float total = 0;
  for (float x : lanes) total += x;
  *sink = total;
  return static_cast<uint64_t>(iters) * 16 * 4 * 2;
}

uint64_t read_neon(const void* p, size_t n) {
  const auto* v = static_cast<const uint64_t*>(p);
  uint64x2_t a0 = vdupq_n_u64(0), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i < n / 8; i += 8) {
    a0 = veorq_u64(a0, vld1q_u64(v + i));
    a1 = veorq_u64(a1, vld1q_u64(v + i + 2));
    a2 = veorq_u64(a2, vld1q_u64(v + i + 4));
    a3 = veorq_u64(a3, vld1q_u64(v + i + 6));
  }
  const uint64x2_t s = veorq_u64(veorq_u64(a0, a1), veorq_u64(a2, a3));
  return vgetq_lane_u64(s, 0) ^ vgetq_lane_u64(s, 1);
}

}  // namespace edgeinfer::probe
