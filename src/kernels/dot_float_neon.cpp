// NEON dot products of the float types: F32 x F32, F16 x F16, BF16 x BF16. Products are
// formed in float (FMA into 16 float lanes: four accumulators of four), halves and bfloats
// widened exactly to float first; the reference accumulates in double, the budget in
// tests/kernels allows for the float lanes.
#include "kernels/simd_neon.h"
#include "quant/type_traits.h"

namespace edgeinfer {

using namespace neon;

namespace {

static inline float reduce4(float32x4_t a, float32x4_t b, float32x4_t c, float32x4_t d) {
  return vaddvq_f32(vaddq_f32(vaddq_f32(a, b), vaddq_f32(c, d)));
}

// Widens 8 bfloats to two float vectors (a bfloat is the top half of a float).
static inline float32x4_t bf16_lo(uint16x8_t v) { return vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(v), 16)); }
static inline float32x4_t bf16_hi(uint16x8_t v) { return vreinterpretq_f32_u32(vshll_high_n_u16(v, 16)); }

}  // namespace

void f32_vec_dot_neon(int64_t n, float* s, const void* x, const void* y) {
  const float* a = static_cast<const float*>(x);
  const float* b = static_cast<const float*>(y);
  float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc0 = vfmaq_f32(acc0, vld1q_f32(a + i), vld1q_f32(b + i));
    acc1 = vfmaq_f32(acc1, vld1q_f32(a + i + 4), vld1q_f32(b + i + 4));
    acc2 = vfmaq_f32(acc2, vld1q_f32(a + i + 8), vld1q_f32(b + i + 8));
    acc3 = vfmaq_f32(acc3, vld1q_f32(a + i + 12), vld1q_f32(b + i + 12));
  }
  for (; i + 4 <= n; i += 4) acc0 = vfmaq_f32(acc0, vld1q_f32(a + i), vld1q_f32(b + i));
  float tail = 0.0f;
  for (; i < n; ++i) tail += a[i] * b[i];
  *s = reduce4(acc0, acc1, acc2, acc3) + tail;
}

void f16_vec_dot_neon(int64_t n, float* s, const void* x, const void* y) {
  const uint16_t* a = static_cast<const uint16_t*>(x);
  const uint16_t* b = static_cast<const uint16_t*>(y);
  float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const float16x8_t a0 = vreinterpretq_f16_u16(vld1q_u16(a + i)), a1 = vreinterpretq_f16_u16(vld1q_u16(a + i + 8));
    const float16x8_t b0 = vreinterpretq_f16_u16(vld1q_u16(b + i)), b1 = vreinterpretq_f16_u16(vld1q_u16(b + i + 8));
    acc0 = vfmaq_f32(acc0, vcvt_f32_f16(vget_low_f16(a0)), vcvt_f32_f16(vget_low_f16(b0)));
    acc1 = vfmaq_f32(acc1, vcvt_high_f32_f16(a0), vcvt_high_f32_f16(b0));
    acc2 = vfmaq_f32(acc2, vcvt_f32_f16(vget_low_f16(a1)), vcvt_f32_f16(vget_low_f16(b1)));
    acc3 = vfmaq_f32(acc3, vcvt_high_f32_f16(a1), vcvt_high_f32_f16(b1));
  }
  for (; i + 4 <= n; i += 4) {
    const float16x4_t a0 = vreinterpret_f16_u16(vld1_u16(a + i)), b0 = vreinterpret_f16_u16(vld1_u16(b + i));
    acc0 = vfmaq_f32(acc0, vcvt_f32_f16(a0), vcvt_f32_f16(b0));
  }
  float tail = 0.0f;
  for (; i < n; ++i) tail += f16_to_f32(a[i]) * f16_to_f32(b[i]);
  *s = reduce4(acc0, acc1, acc2, acc3) + tail;
}

void bf16_vec_dot_neon(int64_t n, float* s, const void* x, const void* y) {
  const uint16_t* a = static_cast<const uint16_t*>(x);
  const uint16_t* b = static_cast<const uint16_t*>(y);
  float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const uint16x8_t a0 = vld1q_u16(a + i), a1 = vld1q_u16(a + i + 8);
    const uint16x8_t b0 = vld1q_u16(b + i), b1 = vld1q_u16(b + i + 8);
    acc0 = vfmaq_f32(acc0, bf16_lo(a0), bf16_lo(b0));
    acc1 = vfmaq_f32(acc1, bf16_hi(a0), bf16_hi(b0));
    acc2 = vfmaq_f32(acc2, bf16_lo(a1), bf16_lo(b1));
    acc3 = vfmaq_f32(acc3, bf16_hi(a1), bf16_hi(b1));
  }
  for (; i + 4 <= n; i += 4) {
    const float32x4_t a0 = vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(a + i), 16));
    const float32x4_t b0 = vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(b + i), 16));
    acc0 = vfmaq_f32(acc0, a0, b0);
  }
  float tail = 0.0f;
  for (; i < n; ++i) tail += bf16_to_fp32(a[i]) * bf16_to_fp32(b[i]);
  *s = reduce4(acc0, acc1, acc2, acc3) + tail;
}

}  // namespace edgeinfer
