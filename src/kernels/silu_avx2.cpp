// AVX2 SiLU·mul: silu_avx512.cpp's operations on 8 lanes; the tail through zero-padded buffers.
#include <cstring>

#include "kernels/exp_avx2.h"
#include "kernels/simd_avx2.h"

namespace edgeinfer {

namespace {

inline __m256 silu_mul8(__m256 g, __m256 u) {
  const __m256 e = avx2::exp_ps(_mm256_sub_ps(_mm256_setzero_ps(), g));
  return _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e)), u);
}

}  // namespace

void silu_mul_avx2(const float* gate, const float* up, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, silu_mul8(_mm256_loadu_ps(gate + i), _mm256_loadu_ps(up + i)));
  if (i < n) {
    const size_t left = static_cast<size_t>(n - i);
    alignas(32) float g[8] = {}, u[8] = {}, o[8];
    std::memcpy(g, gate + i, left * sizeof(float));
    std::memcpy(u, up + i, left * sizeof(float));
    _mm256_store_ps(o, silu_mul8(_mm256_load_ps(g), _mm256_load_ps(u)));
    std::memcpy(out + i, o, left * sizeof(float));
  }
}

}  // namespace edgeinfer
