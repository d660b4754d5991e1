// AVX-512 activation conversions (float row -> F16, BF16, Q8_0, Q8_1, Q8_K). Each is bit-exact
// with its reference in quant/: the same IEEE operations in the same order (x * (1/d), not
// x / d), the reference's rounding rule (ties away from zero for Q8_0/Q8_1, GGML's
// nearest_int ties-to-even for Q8_K), and narrowing by truncation as a scalar int8 cast does.
#include "kernels/simd_avx512.h"

namespace edgeinfer {

namespace {

using namespace avx512;

inline __m512 abs_ps(__m512 v) { return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7fffffff))); }

// C's roundf for every lane: truncate, then step away from zero when the dropped fraction is
// at least one half (v - trunc(v) is exact, so this is exact for all finite v).
inline __m512 round_away(__m512 v) {
  const __m512 t = _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __mmask16 up = _mm512_cmp_ps_mask(abs_ps(_mm512_sub_ps(v, t)), _mm512_set1_ps(0.5f), _CMP_GE_OQ);
  const __m512i sign = _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(static_cast<int>(0x80000000u)));
  const __m512 step = _mm512_castsi512_ps(_mm512_or_si512(sign, _mm512_castps_si512(_mm512_set1_ps(1.0f))));
  return _mm512_mask_add_ps(t, up, t, step);
}

// GGML's nearest_int (add 1.5 * 2^23, keep the low mantissa bits), lane-wise and literally.
inline __m512i nearest_int(__m512 v) {
  const __m512i b = _mm512_castps_si512(_mm512_add_ps(v, _mm512_set1_ps(12582912.0f)));
  return _mm512_sub_epi32(_mm512_and_si512(b, _mm512_set1_epi32(0x007fffff)), _mm512_set1_epi32(0x00400000));
}

// Quantizes one 32-float block with multiplier inv into qs; returns the sum of the stored int8s.
inline int quantize32_away(const float* src, float inv, int8_t* qs) {
  const __m512 m = _mm512_set1_ps(inv);
  const __m512i q0 = _mm512_cvttps_epi32(round_away(_mm512_mul_ps(_mm512_loadu_ps(src), m)));
  const __m512i q1 = _mm512_cvttps_epi32(round_away(_mm512_mul_ps(_mm512_loadu_ps(src + 16), m)));
  const __m128i b0 = _mm512_cvtepi32_epi8(q0);  // truncating, as static_cast<int8_t>
  const __m128i b1 = _mm512_cvtepi32_epi8(q1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(qs), b0);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(qs + 16), b1);
  return hsum_i32(_mm512_add_epi32(_mm512_cvtepi8_epi32(b0), _mm512_cvtepi8_epi32(b1)));
}

inline float amax32(const float* src) {
  const __m512 a = _mm512_max_ps(abs_ps(_mm512_loadu_ps(src)), abs_ps(_mm512_loadu_ps(src + 16)));
  return _mm512_reduce_max_ps(a);
}

}  // namespace

void f16_from_float_avx512(const float* src, void* dst, int64_t n) {
  uint16_t* h = static_cast<uint16_t*>(dst);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i r = _mm512_cvtps_ph(_mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(h + i), r);
  }
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m256i r = _mm512_cvtps_ph(_mm512_maskz_loadu_ps(m, src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_mask_storeu_epi16(h + i, m, r);
  }
}

void bf16_from_float_avx512(const float* src, void* dst, int64_t n) {
  // The reference's integer rounding (round to nearest even on the dropped 16 bits, NaN
  // truncated and made quiet), not vcvtneps2bf16, which flushes subnormals.
  uint16_t* h = static_cast<uint16_t*>(dst);
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
  const __m512i bias = _mm512_set1_epi32(0x7fff), one = _mm512_set1_epi32(1), quiet = _mm512_set1_epi32(0x40);
  auto convert = [&](__m512i x) {
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(x, abs_mask), inf);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), one);
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(x, bias), lsb), 16);
    r = _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(x, 16), quiet);
    return _mm512_cvtepi32_epi16(r);
  };
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(h + i), convert(_mm512_castps_si512(_mm512_loadu_ps(src + i))));
  }
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm256_mask_storeu_epi16(h + i, m, convert(_mm512_castps_si512(_mm512_maskz_loadu_ps(m, src + i))));
  }
}

void q8_0_from_float_avx512(const float* src, void* dst, int64_t n) {
  BlockQ8_0* b = static_cast<BlockQ8_0*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    const float d = amax32(src) / 127.0f;
    const float inv = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = _cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT);
    quantize32_away(src, inv, b[i].qs);
  }
}

void q8_1_from_float_avx512(const float* src, void* dst, int64_t n) {
  BlockQ8_1* b = static_cast<BlockQ8_1*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    const float d = amax32(src) / 127.0f;
    const float inv = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = _cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT);
    const int qsum = quantize32_away(src, inv, b[i].qs);
    b[i].s = _cvtss_sh(static_cast<float>(qsum) * d, _MM_FROUND_TO_NEAREST_INT);
  }
}

void q8_k_from_float_avx512(const float* src, void* dst, int64_t n) {
  BlockQ8_K* b = static_cast<BlockQ8_K*>(dst);
  constexpr int kVecs = kQK_K / 16;
  for (int64_t i = 0; i < n / kQK_K; ++i, src += kQK_K) {
    __m512 m = _mm512_setzero_ps();
    for (int v = 0; v < kVecs; ++v) m = _mm512_max_ps(m, abs_ps(_mm512_loadu_ps(src + 16 * v)));
    const float amax = _mm512_reduce_max_ps(m);
    if (amax == 0.0f) {
      std::memset(&b[i], 0, sizeof(BlockQ8_K));
      continue;
    }
    // The reference keeps the first element of largest magnitude (strict >), sign included.
    float vmax = 0.0f;
    const __m512 am = _mm512_set1_ps(amax);
    for (int v = 0; v < kVecs; ++v) {
      const __mmask16 eq = _mm512_cmp_ps_mask(abs_ps(_mm512_loadu_ps(src + 16 * v)), am, _CMP_EQ_OQ);
      if (eq) {
        vmax = src[16 * v + __builtin_ctz(eq)];
        break;
      }
    }
    const float iscale = -127.0f / vmax;
    const __m512 is = _mm512_set1_ps(iscale);
    const __m512i cap = _mm512_set1_epi32(127);
    for (int v = 0; v < kVecs; ++v) {
      const __m512i q = _mm512_min_epi32(cap, nearest_int(_mm512_mul_ps(is, _mm512_loadu_ps(src + 16 * v))));
      const __m128i q8 = _mm512_cvtepi32_epi8(q);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(b[i].qs + 16 * v), q8);
      b[i].bsums[v] = static_cast<int16_t>(hsum_i32(_mm512_cvtepi8_epi32(q8)));
    }
    b[i].d = 1.0f / iscale;
  }
}

}  // namespace edgeinfer
