// AVX-512 softmax for attention: vector max, e^(x - max) by range reduction to
// [-ln2/2, ln2/2] and a degree-6 polynomial (within 2 ulp of expf), the denominator in 16 f32
// lanes, and, for an F16 cache, the probabilities rounded to f16 with the hardware conversion
// (round to nearest even, as fp32_to_fp16).
#include <immintrin.h>

#include <cmath>

#include "kernels/exp_avx512.h"
#include "kernels/simd_avx512.h"

namespace edgeinfer {

namespace {

using avx512::exp_ps;

inline __mmask16 tail_mask(int64_t left) { return static_cast<__mmask16>((1u << left) - 1); }

}  // namespace

void softmax_avx512(float* x, int64_t n, bool round_f16) {
  if (n <= 0) return;
  __m512 mx = _mm512_set1_ps(-INFINITY);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) mx = _mm512_max_ps(mx, _mm512_loadu_ps(x + i));
  if (i < n) mx = _mm512_mask_max_ps(mx, tail_mask(n - i), mx, _mm512_maskz_loadu_ps(tail_mask(n - i), x + i));
  const __m512 m = _mm512_set1_ps(_mm512_reduce_max_ps(mx));
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 e0 = exp_ps(_mm512_sub_ps(_mm512_loadu_ps(x + i), m));
    const __m512 e1 = exp_ps(_mm512_sub_ps(_mm512_loadu_ps(x + i + 16), m));
    _mm512_storeu_ps(x + i, e0);
    _mm512_storeu_ps(x + i + 16, e1);
    s0 = _mm512_add_ps(s0, e0);
    s1 = _mm512_add_ps(s1, e1);
  }
  for (; i < n; i += 16) {
    const __mmask16 k = n - i >= 16 ? static_cast<__mmask16>(0xFFFF) : tail_mask(n - i);
    const __m512 e = _mm512_maskz_mov_ps(k, exp_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), m)));
    _mm512_mask_storeu_ps(x + i, k, e);
    s0 = _mm512_add_ps(s0, e);
  }
  const __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(_mm512_add_ps(s0, s1)));
  for (i = 0; i < n; i += 16) {
    const __mmask16 k = n - i >= 16 ? static_cast<__mmask16>(0xFFFF) : tail_mask(n - i);
    __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + i), inv);
    if (round_f16) v = _mm512_cvtph_ps(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    _mm512_mask_storeu_ps(x + i, k, v);
  }
}

}  // namespace edgeinfer
