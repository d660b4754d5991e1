// AVX-512 SiLU·mul for the feed-forward block: out = gate / (1 + e^-gate) * up, 16 lanes at a
// time with exp_avx512.h's exp and a true division, in the scalar reference's order (so each
// result is within a few ulp of it: the exp's 2 ulp, then two roundings as in the reference).
// The tail runs masked.
#include "kernels/exp_avx512.h"
#include "kernels/simd_avx512.h"

namespace edgeinfer {

namespace {

inline __m512 silu_mul16(__m512 g, __m512 u) {
  const __m512 e = avx512::exp_ps(_mm512_sub_ps(_mm512_setzero_ps(), g));
  return _mm512_mul_ps(_mm512_div_ps(g, _mm512_add_ps(_mm512_set1_ps(1.0f), e)), u);
}

}  // namespace

void silu_mul_avx512(const float* gate, const float* up, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 a = silu_mul16(_mm512_loadu_ps(gate + i), _mm512_loadu_ps(up + i));
    const __m512 b = silu_mul16(_mm512_loadu_ps(gate + i + 16), _mm512_loadu_ps(up + i + 16));
    _mm512_storeu_ps(out + i, a);
    _mm512_storeu_ps(out + i + 16, b);
  }
  for (; i < n; i += 16) {
    const __mmask16 k = n - i >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(out + i, k, silu_mul16(_mm512_maskz_loadu_ps(k, gate + i), _mm512_maskz_loadu_ps(k, up + i)));
  }
}

}  // namespace edgeinfer
