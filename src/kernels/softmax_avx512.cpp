// AVX-512 online-softmax step for attention (SoftmaxStepFn, kernels/kernels.h): the block's
// scores scaled and their maximum taken in 16 lanes, e^(x - max) by range reduction to
// [-ln2/2, ln2/2] and a degree-6 polynomial (exp_avx512.h, within 2 ulp of expf), the block's
// sum in 16 f32 lanes. The correction of the earlier sums is computed only when the maximum
// moved (it is then below 1; otherwise exactly 1).
#include <immintrin.h>

#include <cmath>

#include "kernels/exp_avx512.h"
#include "kernels/simd_avx512.h"

namespace edgeinfer {

namespace {

using avx512::exp_ps;

inline __mmask16 mask_at(int64_t i, int64_t n) {
  return n - i >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1);
}

}  // namespace

float softmax_step_avx512(float* x, int64_t n, float scale, float* max, float* sum) {
  if (n <= 0) return 1.0f;
  const __m512 sc = _mm512_set1_ps(scale);
  __m512 mx = _mm512_set1_ps(-INFINITY);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = mask_at(i, n);
    const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + i), sc);
    _mm512_mask_storeu_ps(x + i, k, v);
    mx = _mm512_mask_max_ps(mx, k, mx, v);
  }
  const float old = *max, block_max = _mm512_reduce_max_ps(mx);
  const float m = block_max > old ? block_max : old;
  const __m512 mv = _mm512_set1_ps(m);
  __m512 s = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = mask_at(i, n);
    const __m512 e = _mm512_maskz_mov_ps(k, exp_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), mv)));
    _mm512_mask_storeu_ps(x + i, k, e);
    s = _mm512_add_ps(s, e);
  }
  float c = 1.0f;
  if (old == -INFINITY) {
    c = 0.0f;
  } else if (m != old) {
    c = _mm512_cvtss_f32(exp_ps(_mm512_set1_ps(old - m)));
  }
  // One explicit fused step (a builtin: no out-of-line copy built with these flags): a
  // contraction left to the compiler would differ between builds.
  *sum = __builtin_fmaf(*sum, c, _mm512_reduce_add_ps(s));
  *max = m;
  return c;
}

}  // namespace edgeinfer
