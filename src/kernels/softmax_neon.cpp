// NEON online-softmax step for attention (SoftmaxStepFn): the algorithm of softmax_avx512.cpp
// on 4 lanes (exp_neon.h builds 2^n in the exponent bits), tails through a padded buffer.
#include "kernels/exp_neon.h"
#include "kernels/simd_neon.h"

namespace edgeinfer {

namespace {

using neon::exp_ps;

}  // namespace

float softmax_step_neon(float* x, int64_t n, float scale, float* max, float* sum) {
  if (n <= 0) return 1.0f;
  const int64_t full = n / 4 * 4;
  const float32x4_t sc = vdupq_n_f32(scale);
  float32x4_t mx = vdupq_n_f32(-__builtin_inff());
  for (int64_t i = 0; i < full; i += 4) {
    const float32x4_t v = vmulq_f32(vld1q_f32(x + i), sc);
    vst1q_f32(x + i, v);
    mx = vmaxq_f32(mx, v);
  }
  float block_max = vmaxvq_f32(mx);
  for (int64_t i = full; i < n; ++i) {
    x[i] *= scale;
    block_max = x[i] > block_max ? x[i] : block_max;
  }
  const float old = *max;
  const float m = block_max > old ? block_max : old;
  const float32x4_t mv = vdupq_n_f32(m);
  float32x4_t s = vdupq_n_f32(0.0f);
  for (int64_t i = 0; i < full; i += 4) {
    const float32x4_t e = exp_ps(vsubq_f32(vld1q_f32(x + i), mv));
    vst1q_f32(x + i, e);
    s = vaddq_f32(s, e);
  }
  if (full < n) {
    float t[4];
    for (int k = 0; k < 4; ++k) t[k] = full + k < n ? x[full + k] : -__builtin_inff();
    const float32x4_t e = exp_ps(vsubq_f32(vld1q_f32(t), mv));
    vst1q_f32(t, e);
    for (int64_t k = 0; full + k < n; ++k) x[full + k] = t[k];
    s = vaddq_f32(s, e);
  }
  float c = 1.0f;
  if (old == -__builtin_inff()) {
    c = 0.0f;
  } else if (m != old) {
    c = vgetq_lane_f32(exp_ps(vdupq_n_f32(old - m)), 0);
  }
  // One explicit fused step (a builtin: no out-of-line copy built with these flags): a
  // contraction left to the compiler would differ between builds.
  *sum = __builtin_fmaf(*sum, c, vaddvq_f32(s));
  *max = m;
  return c;
}

}  // namespace edgeinfer
