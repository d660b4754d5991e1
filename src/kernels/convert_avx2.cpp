// AVX2 activation conversions (float row -> F16, BF16, Q8_0, Q8_1, Q8_K), bit-exact with the
// references in quant/: same IEEE operations in the same order, the reference's rounding rule
// (ties away from zero for Q8_0/Q8_1, GGML's nearest_int for Q8_K) and narrowing by
// truncation to the low byte, as a scalar int8 cast does.
#include "kernels/simd_avx2.h"
#include "quant/type_traits.h"

namespace edgeinfer {

namespace {

using namespace avx2;

inline __m256 abs_ps(__m256 v) { return _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff))); }

// C's roundf lane-wise: truncate, then step away from zero when the (exact) dropped fraction
// is at least one half.
inline __m256 round_away(__m256 v) {
  const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m256 up = _mm256_cmp_ps(abs_ps(_mm256_sub_ps(v, t)), _mm256_set1_ps(0.5f), _CMP_GE_OQ);
  const __m256 step = _mm256_or_ps(_mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(0x80000000u)))),
                                   _mm256_set1_ps(1.0f));
  return _mm256_add_ps(t, _mm256_and_ps(up, step));
}

// GGML's nearest_int, literally: add 1.5 * 2^23 and keep the low mantissa bits.
inline __m256i nearest_int(__m256 v) {
  const __m256i b = _mm256_castps_si256(_mm256_add_ps(v, _mm256_set1_ps(12582912.0f)));
  return _mm256_sub_epi32(_mm256_and_si256(b, _mm256_set1_epi32(0x007fffff)), _mm256_set1_epi32(0x00400000));
}

// The int32 lanes as a scalar int8 cast leaves them: sign-extended low byte.
inline __m256i wrap_i8(__m256i q) { return _mm256_srai_epi32(_mm256_slli_epi32(q, 24), 24); }

// 32 int32 (already in int8 range) to 32 bytes in order.
inline __m256i pack32(__m256i q0, __m256i q1, __m256i q2, __m256i q3) {
  const __m256i ff = _mm256_set1_epi32(0xff);
  const __m256i a = _mm256_packus_epi32(_mm256_and_si256(q0, ff), _mm256_and_si256(q1, ff));
  const __m256i b = _mm256_packus_epi32(_mm256_and_si256(q2, ff), _mm256_and_si256(q3, ff));
  return _mm256_permutevar8x32_epi32(_mm256_packus_epi16(a, b), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

inline float amax32(const float* src) {
  __m256 m = _mm256_max_ps(abs_ps(_mm256_loadu_ps(src)), abs_ps(_mm256_loadu_ps(src + 8)));
  m = _mm256_max_ps(m, _mm256_max_ps(abs_ps(_mm256_loadu_ps(src + 16)), abs_ps(_mm256_loadu_ps(src + 24))));
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_max_ss(h, _mm_movehdup_ps(h)));
}

// One 32-float block times inv, rounded away from zero, into qs; returns the sum of the int8s.
inline int quantize32_away(const float* src, float inv, int8_t* qs) {
  const __m256 m = _mm256_set1_ps(inv);
  __m256i q[4];
  for (int k = 0; k < 4; ++k) q[k] = wrap_i8(_mm256_cvttps_epi32(round_away(_mm256_mul_ps(_mm256_loadu_ps(src + 8 * k), m))));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs), pack32(q[0], q[1], q[2], q[3]));
  return hsum_i32(_mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3])));
}

}  // namespace

void f16_from_float_avx2(const float* src, void* dst, int64_t n) {
  uint16_t* h = static_cast<uint16_t*>(dst);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(h + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  for (; i < n; ++i) h[i] = _cvtss_sh(src[i], _MM_FROUND_TO_NEAREST_INT);
}

void bf16_from_float_avx2(const float* src, void* dst, int64_t n) {
  uint16_t* h = static_cast<uint16_t*>(dst);
  int64_t i = 0;
  const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
  const __m256i bias = _mm256_set1_epi32(0x7fff), one = _mm256_set1_epi32(1), quiet = _mm256_set1_epi32(0x40);
  for (; i + 8 <= n; i += 8) {
    const __m256i x = _mm256_castps_si256(_mm256_loadu_ps(src + i));
    // Signed compare is right here: both sides are non-negative int32.
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, abs_mask), inf);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), one);
    const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(x, bias), lsb), 16);
    const __m256i quieted = _mm256_or_si256(_mm256_srli_epi32(x, 16), quiet);
    const __m256i r = _mm256_blendv_epi8(rounded, quieted, nan);
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(h + i), _mm256_castsi256_si128(packed));
  }
  for (; i < n; ++i) h[i] = fp32_to_bf16(src[i]);
}

void q8_0_from_float_avx2(const float* src, void* dst, int64_t n) {
  BlockQ8_0* b = static_cast<BlockQ8_0*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    const float d = amax32(src) / 127.0f;
    const float inv = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = _cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT);
    quantize32_away(src, inv, b[i].qs);
  }
}

void q8_1_from_float_avx2(const float* src, void* dst, int64_t n) {
  BlockQ8_1* b = static_cast<BlockQ8_1*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    const float d = amax32(src) / 127.0f;
    const float inv = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = _cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT);
    const int qsum = quantize32_away(src, inv, b[i].qs);
    b[i].s = _cvtss_sh(static_cast<float>(qsum) * d, _MM_FROUND_TO_NEAREST_INT);
  }
}

void q8_k_from_float_avx2(const float* src, void* dst, int64_t n) {
  BlockQ8_K* b = static_cast<BlockQ8_K*>(dst);
  for (int64_t i = 0; i < n / kQK_K; ++i, src += kQK_K) {
    __m256 m = _mm256_setzero_ps();
    for (int v = 0; v < kQK_K / 8; ++v) m = _mm256_max_ps(m, abs_ps(_mm256_loadu_ps(src + 8 * v)));
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    const float amax = _mm_cvtss_f32(_mm_max_ss(h, _mm_movehdup_ps(h)));
    if (amax == 0.0f) {
      std::memset(&b[i], 0, sizeof(BlockQ8_K));
      continue;
    }
    // The reference keeps the first element of largest magnitude (strict >), sign included.
    float vmax = 0.0f;
    const __m256 am = _mm256_set1_ps(amax);
    for (int v = 0; v < kQK_K / 8; ++v) {
      const int eq = _mm256_movemask_ps(_mm256_cmp_ps(abs_ps(_mm256_loadu_ps(src + 8 * v)), am, _CMP_EQ_OQ));
      if (eq) {
        vmax = src[8 * v + __builtin_ctz(static_cast<unsigned>(eq))];
        break;
      }
    }
    const float iscale = -127.0f / vmax;
    const __m256 is = _mm256_set1_ps(iscale);
    const __m256i cap = _mm256_set1_epi32(127);
    for (int g = 0; g < kQK_K / 32; ++g) {
      __m256i q[4];
      for (int k = 0; k < 4; ++k) {
        q[k] = wrap_i8(_mm256_min_epi32(cap, nearest_int(_mm256_mul_ps(is, _mm256_loadu_ps(src + 32 * g + 8 * k)))));
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(b[i].qs + 32 * g), pack32(q[0], q[1], q[2], q[3]));
      b[i].bsums[2 * g] = static_cast<int16_t>(hsum_i32(_mm256_add_epi32(q[0], q[1])));
      b[i].bsums[2 * g + 1] = static_cast<int16_t>(hsum_i32(_mm256_add_epi32(q[2], q[3])));
    }
    b[i].d = 1.0f / iscale;
  }
}

}  // namespace edgeinfer
