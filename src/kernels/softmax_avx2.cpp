// AVX2 online-softmax step for attention (SoftmaxStepFn): the algorithm of softmax_avx512.cpp
// on 8 lanes (exp_avx2.h builds 2^n in the exponent bits), tails through a padded buffer.
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

float softmax_step_avx2(float* x, int64_t n, float scale, float* max, float* sum) {
  if (n <= 0) return 1.0f;
  const int64_t full = n / 8 * 8;
  const __m256 sc = _mm256_set1_ps(scale);
  __m256 mx = _mm256_set1_ps(-INFINITY);
  for (int64_t i = 0; i < full; i += 8) {
    const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + i), sc);
    _mm256_storeu_ps(x + i, v);
    mx = _mm256_max_ps(mx, v);
  }
  float block_max = hmax(mx);
  for (int64_t i = full; i < n; ++i) {
    x[i] *= scale;
    block_max = x[i] > block_max ? x[i] : block_max;
  }
  const float old = *max;
  const float m = block_max > old ? block_max : old;
  const __m256 mv = _mm256_set1_ps(m);
  __m256 s = _mm256_setzero_ps();
  for (int64_t i = 0; i < full; i += 8) {
    const __m256 e = exp_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv));
    _mm256_storeu_ps(x + i, e);
    s = _mm256_add_ps(s, e);
  }
  if (full < n) {
    alignas(32) float t[8];
    for (int k = 0; k < 8; ++k) t[k] = full + k < n ? x[full + k] : -INFINITY;
    const __m256 e = exp_ps(_mm256_sub_ps(_mm256_load_ps(t), mv));  // -inf lanes give 0
    _mm256_store_ps(t, e);
    for (int64_t k = 0; full + k < n; ++k) x[full + k] = t[k];
    s = _mm256_add_ps(s, e);
  }
  float c = 1.0f;
  if (old == -INFINITY) {
    c = 0.0f;
  } else if (m != old) {
    c = _mm256_cvtss_f32(exp_ps(_mm256_set1_ps(old - m)));
  }
  // One explicit fused step (a builtin: no out-of-line copy built with these flags): a
  // contraction left to the compiler would differ between builds.
  *sum = __builtin_fmaf(*sum, c, hadd(s));
  *max = m;
  return c;
}

}  // namespace edgeinfer
