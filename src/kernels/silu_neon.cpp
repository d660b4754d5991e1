// NEON SiLU·mul: silu_avx512.cpp's operations on 4 lanes; the tail through zero-padded buffers.
#include "kernels/exp_neon.h"
#include "kernels/simd_neon.h"

namespace edgeinfer {

namespace {

inline float32x4_t silu_mul4(float32x4_t g, float32x4_t u) {
  const float32x4_t e = neon::exp_ps(vnegq_f32(g));
  return vmulq_f32(vdivq_f32(g, vaddq_f32(vdupq_n_f32(1.0f), e)), u);
}

}  // namespace

void silu_mul_neon(const float* gate, const float* up, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(out + i, silu_mul4(vld1q_f32(gate + i), vld1q_f32(up + i)));
  if (i < n) {
    const size_t left = static_cast<size_t>(n - i);
    float g[4] = {}, u[4] = {}, o[4];
    std::memcpy(g, gate + i, left * sizeof(float));
    std::memcpy(u, up + i, left * sizeof(float));
    vst1q_f32(o, silu_mul4(vld1q_f32(g), vld1q_f32(u)));
    std::memcpy(out + i, o, left * sizeof(float));
  }
}

}  // namespace edgeinfer
