// AVX2 softmax for attention: the algorithm of softmax_avx512.cpp on 8 lanes (2^n built in the
// exponent bits), tails through a zero-padded buffer.
#include <immintrin.h>

#include <cmath>

#include "kernels/exp_avx2.h"
#include "kernels/simd_avx2.h"

namespace edgeinfer {

namespace {

using avx2::exp_ps;

inline float hmax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}

inline float hadd(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

}  // namespace

void softmax_avx2(float* x, int64_t n, bool round_f16) {
  if (n <= 0) return;
  const int64_t full = n / 8 * 8;
  __m256 mx = _mm256_set1_ps(-INFINITY);
  for (int64_t i = 0; i < full; i += 8) mx = _mm256_max_ps(mx, _mm256_loadu_ps(x + i));
  float m = hmax(mx);
  for (int64_t i = full; i < n; ++i) m = x[i] > m ? x[i] : m;
  const __m256 mv = _mm256_set1_ps(m);
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= full; i += 16) {
    const __m256 e0 = exp_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv));
    const __m256 e1 = exp_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), mv));
    _mm256_storeu_ps(x + i, e0);
    _mm256_storeu_ps(x + i + 8, e1);
    s0 = _mm256_add_ps(s0, e0);
    s1 = _mm256_add_ps(s1, e1);
  }
  for (; i < full; i += 8) {
    const __m256 e = exp_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv));
    _mm256_storeu_ps(x + i, e);
    s0 = _mm256_add_ps(s0, e);
  }
  if (full < n) {
    alignas(32) float t[8];
    for (int k = 0; k < 8; ++k) t[k] = full + k < n ? x[full + k] : -INFINITY;
    const __m256 e = exp_ps(_mm256_sub_ps(_mm256_load_ps(t), mv));  // -inf lanes give 0
    _mm256_store_ps(t, e);
    for (int64_t k = 0; full + k < n; ++k) x[full + k] = t[k];
    s1 = _mm256_add_ps(s1, e);
  }
  const __m256 inv = _mm256_set1_ps(1.0f / hadd(_mm256_add_ps(s0, s1)));
  for (i = 0; i < full; i += 8) {
    __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + i), inv);
    if (round_f16) v = _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    _mm256_storeu_ps(x + i, v);
  }
  for (; i < n; ++i) {
    __m128 v = _mm_mul_ss(_mm_set_ss(x[i]), _mm256_castps256_ps128(inv));
    if (round_f16) v = _mm_cvtph_ps(_mm_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    x[i] = _mm_cvtss_f32(v);
  }
}

}  // namespace edgeinfer
