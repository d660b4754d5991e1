// NEON softmax for attention: the algorithm of softmax_avx512.cpp on 4 lanes (2^n built in the
// exponent bits), tails through a padded buffer; f16 rounding with vcvt (round to nearest even).
#include "kernels/exp_neon.h"
#include "kernels/simd_neon.h"

namespace edgeinfer {

namespace {

using neon::exp_ps;

static inline float32x4_t round_f16(float32x4_t v) { return vcvt_f32_f16(vcvt_f16_f32(v)); }

}  // namespace

void softmax_neon(float* x, int64_t n, bool round_f16_out) {
  if (n <= 0) return;
  const int64_t full = n / 4 * 4;
  float32x4_t mx = vdupq_n_f32(-__builtin_inff());
  for (int64_t i = 0; i < full; i += 4) mx = vmaxq_f32(mx, vld1q_f32(x + i));
  float m = vmaxvq_f32(mx);
  for (int64_t i = full; i < n; ++i) m = x[i] > m ? x[i] : m;
  const float32x4_t mv = vdupq_n_f32(m);
  float32x4_t s0 = vdupq_n_f32(0.0f), s1 = vdupq_n_f32(0.0f);
  int64_t i = 0;
  for (; i + 8 <= full; i += 8) {
    const float32x4_t e0 = exp_ps(vsubq_f32(vld1q_f32(x + i), mv));
    const float32x4_t e1 = exp_ps(vsubq_f32(vld1q_f32(x + i + 4), mv));
    vst1q_f32(x + i, e0);
    vst1q_f32(x + i + 4, e1);
    s0 = vaddq_f32(s0, e0);
    s1 = vaddq_f32(s1, e1);
  }
  for (; i < full; i += 4) {
    const float32x4_t e = exp_ps(vsubq_f32(vld1q_f32(x + i), mv));
    vst1q_f32(x + i, e);
    s0 = vaddq_f32(s0, e);
  }
  if (full < n) {
    float t[4];
    for (int k = 0; k < 4; ++k) t[k] = full + k < n ? x[full + k] : -__builtin_inff();
    const float32x4_t e = exp_ps(vsubq_f32(vld1q_f32(t), mv));
    vst1q_f32(t, e);
    for (int64_t k = 0; full + k < n; ++k) x[full + k] = t[k];
    s1 = vaddq_f32(s1, e);
  }
  const float inv = 1.0f / vaddvq_f32(vaddq_f32(s0, s1));
  const float32x4_t iv = vdupq_n_f32(inv);
  for (i = 0; i < full; i += 4) {
    float32x4_t v = vmulq_f32(vld1q_f32(x + i), iv);
    if (round_f16_out) v = round_f16(v);
    vst1q_f32(x + i, v);
  }
  if (full < n) {
    float t[4] = {0, 0, 0, 0};
    for (int64_t k = 0; full + k < n; ++k) t[k] = x[full + k];
    float32x4_t v = vmulq_f32(vld1q_f32(t), iv);
    if (round_f16_out) v = round_f16(v);
    vst1q_f32(t, v);
    for (int64_t k = 0; full + k < n; ++k) x[full + k] = t[k];
  }
}

}  // namespace edgeinfer
