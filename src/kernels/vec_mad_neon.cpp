// NEON y += w * x for attention's weighted sum of V rows: F32, F16 and Q8_0 caches.
#include <arm_neon.h>

#include <cmath>

#include "kernels/simd_neon.h"

namespace edgeinfer {

void f32_vec_mad_neon(int64_t n, float* y, const void* x, float w) {
  const float* v = static_cast<const float*>(x);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vfmaq_n_f32(vld1q_f32(y + i), vld1q_f32(v + i), w));
  for (; i < n; ++i) y[i] = std::fma(w, v[i], y[i]);
}

void f16_vec_mad_neon(int64_t n, float* y, const void* x, float w) {
  const uint16_t* v = static_cast<const uint16_t*>(x);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(v + i));
    vst1q_f32(y + i, vfmaq_n_f32(vld1q_f32(y + i), vcvt_f32_f16(vget_low_f16(h)), w));
    vst1q_f32(y + i + 4, vfmaq_n_f32(vld1q_f32(y + i + 4), vcvt_high_f32_f16(h), w));
  }
  for (; i < n; ++i) {
    const float16x4_t h = vreinterpret_f16_u16(vdup_n_u16(v[i]));
    y[i] = std::fma(w, vgetq_lane_f32(vcvt_f32_f16(h), 0), y[i]);
  }
}

// Q8_0 (n a multiple of 32): per element y + w * (d * q) with one FMA (the reference rounds
// w * (d * q) first).
void q8_0_vec_mad_neon(int64_t n, float* y, const void* x, float w) {
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(x);
  for (int64_t j = 0; j < n / 16; ++j) {
    float32x4_t v[4];
    neon::q8_0_values16(b, j, v);
    for (int k = 0; k < 4; ++k) vst1q_f32(y + 16 * j + 4 * k, vfmaq_n_f32(vld1q_f32(y + 16 * j + 4 * k), v[k], w));
  }
}

}  // namespace edgeinfer
