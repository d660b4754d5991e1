#pragma once
// e^x on 16 f32 lanes: range reduction to [-ln2/2, ln2/2] (n = round(x / ln2), ln2 in two
// parts), a degree-6 polynomial, and 2^n applied with vscalefps; within 2 ulp of expf. x below
// -87.33654 (e^x under the smallest normal) gives 0; x is clamped at 88.37626 (NaN gives 0).
#include <immintrin.h>

namespace edgeinfer::avx512 {

static inline __m512 exp_ps(__m512 x) {
  const __m512 lo = _mm512_set1_ps(-87.33654f);  // below: e^x is under the smallest normal, taken as 0
  const __mmask16 keep = _mm512_cmp_ps_mask(x, lo, _CMP_GE_OQ);
  x = _mm512_min_ps(_mm512_max_ps(x, lo), _mm512_set1_ps(88.37626f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  const __m512 y = _mm512_add_ps(_mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
  return _mm512_maskz_mov_ps(keep, _mm512_scalef_ps(y, n));
}

}  // namespace edgeinfer::avx512
