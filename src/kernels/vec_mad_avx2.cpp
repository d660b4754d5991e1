// AVX2 (+F16C, FMA) y += w * x for attention's weighted sum of V rows: F32, F16 and Q8_0 caches.
#include <immintrin.h>

#include <cmath>

#include "kernels/simd_avx2.h"

namespace edgeinfer {

void f32_vec_mad_avx2(int64_t n, float* y, const void* x, float w) {
  const float* v = static_cast<const float*>(x);
  const __m256 wv = _mm256_set1_ps(w);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_fmadd_ps(wv, _mm256_loadu_ps(v + i), _mm256_loadu_ps(y + i)));
  for (; i < n; ++i) y[i] = std::fma(w, v[i], y[i]);
}

void f16_vec_mad_avx2(int64_t n, float* y, const void* x, float w) {
  const uint16_t* v = static_cast<const uint16_t*>(x);
  const __m256 wv = _mm256_set1_ps(w);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 xv = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v + i)));
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(wv, xv, _mm256_loadu_ps(y + i)));
  }
  for (; i < n; ++i) y[i] = std::fma(w, _cvtsh_ss(v[i]), y[i]);
}

// Q8_0 (n a multiple of 32): per element y + w * (d * q) with one FMA (the reference rounds
// w * (d * q) first).
void q8_0_vec_mad_avx2(int64_t n, float* y, const void* x, float w) {
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(x);
  const __m256 wv = _mm256_set1_ps(w);
  for (int64_t j = 0; j < n / 8; ++j) {
    _mm256_storeu_ps(y + 8 * j, _mm256_fmadd_ps(wv, avx2::q8_0_values8(b, j), _mm256_loadu_ps(y + 8 * j)));
  }
}

}  // namespace edgeinfer
