// AVX2 dot products of the K-quants against Q8_K activations. Each 32 weights become unsigned
// bytes in element order; vpmaddubsw with the activation bytes gives int16 pairs (no
// saturation: |q| <= 63, |a| <= 127) and vpmaddwd with the per-group integer scales gives
// int32. Constant offsets (Q3_K: 4, Q6_K: 32) and affine mins (Q2_K, Q4_K, Q5_K) are applied
// through the activation's per-16 sums (bsums).
#include "kernels/simd_avx2.h"

namespace edgeinfer {

namespace {

using namespace avx2;

// Logical shift of the 16-bit lanes by a signed count (left when positive).
inline __m256i shift16(__m256i v, int count) {
  return count >= 0 ? _mm256_sll_epi16(v, _mm_cvtsi32_si128(count)) : _mm256_srl_epi16(v, _mm_cvtsi32_si128(-count));
}

// Per-32-element scale vectors from 16 int16 group scales (one per 16 elements): register v
// takes group 2v in its low 8 int16 lanes and 2v + 1 in the high 8.
struct GroupScales {
  __m256i lo, hi;  // dwords (s | s << 16) of groups [0..3 | 8..11] and [4..7 | 12..15]
  explicit GroupScales(__m256i sc16) : lo(_mm256_unpacklo_epi16(sc16, sc16)), hi(_mm256_unpackhi_epi16(sc16, sc16)) {}
  __m256i operator()(int v) const {
    const int g = 2 * v;
    const int lane = (g % 4) + 4 * (g / 8);
    const __m256i idx = _mm256_setr_epi32(lane, lane, lane, lane, lane + 1, lane + 1, lane + 1, lane + 1);
    return _mm256_permutevar8x32_epi32(g % 8 < 4 ? lo : hi, idx);
  }
};

// int32 lanes of scale * (w . a) for unsigned w, signed a and int16 scales per lane pair.
inline __m256i scaled_dot(__m256i w, __m256i a, __m256i s) { return _mm256_madd_epi16(_mm256_maddubs_epi16(w, a), s); }

inline __m256i bsums(const BlockQ8_K& b) { return loadu256(b.bsums); }

// Q4_K/Q5_K scales (bytes 0-7) and mins (bytes 8-15); see dot_k_avx512.cpp for the layout.
inline __m128i k4_scales_mins(const uint8_t* packed) {
  const uint32_t a0 = load_u32(packed), a1 = load_u32(packed + 4), a2 = load_u32(packed + 8);
  const uint32_t sc_lo = a0 & 0x3f3f3f3fu;
  const uint32_t sc_hi = (a2 & 0x0f0f0f0fu) | (((a0 >> 6) & 0x03030303u) << 4);
  const uint32_t mn_lo = a1 & 0x3f3f3f3fu;
  const uint32_t mn_hi = ((a2 >> 4) & 0x0f0f0f0fu) | (((a1 >> 6) & 0x03030303u) << 4);
  return _mm_set_epi32(static_cast<int>(mn_hi), static_cast<int>(mn_lo), static_cast<int>(sc_hi),
                       static_cast<int>(sc_lo));
}

// The 16 signed Q3_K scales as int8 (stored + 32; layout in dot_k_avx512.cpp).
inline __m128i q3_scales(const uint8_t* packed) {
  const uint32_t a0 = load_u32(packed), a1 = load_u32(packed + 4), a2 = load_u32(packed + 8);
  const uint32_t m4 = 0x0f0f0f0fu, m2 = 0x03030303u;
  const uint32_t s0 = (a0 & m4) | ((a2 & m2) << 4);
  const uint32_t s1 = (a1 & m4) | (((a2 >> 2) & m2) << 4);
  const uint32_t s2 = ((a0 >> 4) & m4) | (((a2 >> 4) & m2) << 4);
  const uint32_t s3 = ((a1 >> 4) & m4) | (((a2 >> 6) & m2) << 4);
  return _mm_sub_epi8(_mm_set_epi32(static_cast<int>(s3), static_cast<int>(s2), static_cast<int>(s1), static_cast<int>(s0)),
                      _mm_set1_epi8(32));
}

// 8 int16 values duplicated pairwise into 16 lanes (v0 v0 v1 v1 ...).
inline __m256i dup_pairs(__m128i v8) {
  return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi16(v8, v8)), _mm_unpackhi_epi16(v8, v8), 1);
}

inline float finish(__m256 acc, __m256 accm) { return hsum(acc) - hsum(accm); }

}  // namespace

void q4_k_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ4_K* a = static_cast<const BlockQ4_K*>(x);
  const BlockQ8_K* b = static_cast<const BlockQ8_K*>(y);
  const __m256i lo4 = _mm256_set1_epi8(0x0F);
  __m256 acc = _mm256_setzero_ps(), accm = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const __m128i sm = k4_scales_mins(a[i].scales);
    alignas(16) uint8_t sc[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(sc), sm);
    __m256i isum = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
      const __m256i q = loadu256(a[i].qs + 32 * c);
      const __m256i w0 = _mm256_and_si256(q, lo4), w1 = _mm256_and_si256(_mm256_srli_epi16(q, 4), lo4);
      isum = _mm256_add_epi32(isum, scaled_dot(w0, loadu256(b[i].qs + 64 * c), _mm256_set1_epi16(sc[2 * c])));
      isum = _mm256_add_epi32(isum, scaled_dot(w1, loadu256(b[i].qs + 64 * c + 32), _mm256_set1_epi16(sc[2 * c + 1])));
    }
    const float da = b[i].d;
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(f16_to_f32(a[i].d) * da), acc);
    const __m256i msum = _mm256_madd_epi16(bsums(b[i]), dup_pairs(_mm_cvtepu8_epi16(_mm_unpackhi_epi64(sm, sm))));
    accm = _mm256_fmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_set1_ps(f16_to_f32(a[i].dmin) * da), accm);
  }
  *s = finish(acc, accm);
}

void q5_k_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ5_K* a = static_cast<const BlockQ5_K*>(x);
  const BlockQ8_K* b = static_cast<const BlockQ8_K*>(y);
  const __m256i lo4 = _mm256_set1_epi8(0x0F), bit4 = _mm256_set1_epi8(0x10);
  __m256 acc = _mm256_setzero_ps(), accm = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const __m128i sm = k4_scales_mins(a[i].scales);
    alignas(16) uint8_t sc[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(sc), sm);
    const __m256i qh = loadu256(a[i].qh);  // bit s of qh[k]: fifth bit of element 32 s + k
    __m256i isum = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
      const __m256i q = loadu256(a[i].qs + 32 * c);
      const __m256i h0 = _mm256_and_si256(shift16(qh, 4 - 2 * c), bit4);
      const __m256i h1 = _mm256_and_si256(shift16(qh, 3 - 2 * c), bit4);
      const __m256i w0 = _mm256_or_si256(_mm256_and_si256(q, lo4), h0);
      const __m256i w1 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), lo4), h1);
      isum = _mm256_add_epi32(isum, scaled_dot(w0, loadu256(b[i].qs + 64 * c), _mm256_set1_epi16(sc[2 * c])));
      isum = _mm256_add_epi32(isum, scaled_dot(w1, loadu256(b[i].qs + 64 * c + 32), _mm256_set1_epi16(sc[2 * c + 1])));
    }
    const float da = b[i].d;
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(f16_to_f32(a[i].d) * da), acc);
    const __m256i msum = _mm256_madd_epi16(bsums(b[i]), dup_pairs(_mm_cvtepu8_epi16(_mm_unpackhi_epi64(sm, sm))));
    accm = _mm256_fmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_set1_ps(f16_to_f32(a[i].dmin) * da), accm);
  }
  *s = finish(acc, accm);
}

void q6_k_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ6_K* a = static_cast<const BlockQ6_K*>(x);
  const BlockQ8_K* b = static_cast<const BlockQ8_K*>(y);
  const __m256i lo4 = _mm256_set1_epi8(0x0F), hi2 = _mm256_set1_epi8(0x30);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const __m256i sc16 = _mm256_cvtepi8_epi16(loadu128(a[i].scales));
    const GroupScales gs(sc16);
    __m256i isum = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i l0 = loadu256(a[i].ql + 64 * h), l1 = loadu256(a[i].ql + 64 * h + 32);
      const __m256i qh = loadu256(a[i].qh + 32 * h);
      // Elements [0,32) take qh bits 0-1, [32,64) bits 2-3, [64,96) bits 4-5, [96,128) bits 6-7,
      // moved to bits 4-5.
      const __m256i w[4] = {
          _mm256_or_si256(_mm256_and_si256(l0, lo4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), hi2)),
          _mm256_or_si256(_mm256_and_si256(l1, lo4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), hi2)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), lo4), _mm256_and_si256(qh, hi2)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), lo4), _mm256_and_si256(_mm256_srli_epi16(qh, 2), hi2))};
      for (int k = 0; k < 4; ++k) {
        const int v = 4 * h + k;
        isum = _mm256_add_epi32(isum, scaled_dot(w[k], loadu256(b[i].qs + 32 * v), gs(v)));
      }
    }
    // The -32 offset of every quant: 32 * sum over groups of scale * bsum.
    isum = _mm256_sub_epi32(isum, _mm256_slli_epi32(_mm256_madd_epi16(bsums(b[i]), sc16), 5));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(f16_to_f32(a[i].d) * b[i].d), acc);
  }
  *s = hsum(acc);
}

void q3_k_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ3_K* a = static_cast<const BlockQ3_K*>(x);
  const BlockQ8_K* b = static_cast<const BlockQ8_K*>(y);
  const __m256i three = _mm256_set1_epi8(3), four = _mm256_set1_epi8(4);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const __m256i sc16 = _mm256_cvtepi8_epi16(q3_scales(a[i].scales));
    const GroupScales gs(sc16);
    const __m256i hm = loadu256(a[i].hmask);  // bit j of hmask[k]: high bit of element 32 j + k
    __m256i isum = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i q = loadu256(a[i].qs + 32 * h);
      for (int j = 0; j < 4; ++j) {
        const int v = 4 * h + j;
        const __m256i lo = _mm256_and_si256(shift16(q, -2 * j), three);
        const __m256i hb = _mm256_and_si256(shift16(hm, 2 - v), four);
        isum = _mm256_add_epi32(isum, scaled_dot(_mm256_or_si256(lo, hb), loadu256(b[i].qs + 32 * v), gs(v)));
      }
    }
    // Quants are stored + 4: take 4 * sum of scale * bsum off.
    isum = _mm256_sub_epi32(isum, _mm256_slli_epi32(_mm256_madd_epi16(bsums(b[i]), sc16), 2));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(f16_to_f32(a[i].d) * b[i].d), acc);
  }
  *s = hsum(acc);
}

void q2_k_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ2_K* a = static_cast<const BlockQ2_K*>(x);
  const BlockQ8_K* b = static_cast<const BlockQ8_K*>(y);
  const __m256i three = _mm256_set1_epi8(3);
  __m256 acc = _mm256_setzero_ps(), accm = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const __m128i raw = loadu128(a[i].scales);
    const __m256i sc16 = _mm256_cvtepu8_epi16(_mm_and_si128(raw, _mm_set1_epi8(0x0F)));
    const __m256i mn16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(raw, 4), _mm_set1_epi8(0x0F)));
    const GroupScales gs(sc16);
    __m256i isum = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i q = loadu256(a[i].qs + 32 * h);
      for (int j = 0; j < 4; ++j) {
        const int v = 4 * h + j;
        const __m256i w = _mm256_and_si256(shift16(q, -2 * j), three);
        isum = _mm256_add_epi32(isum, scaled_dot(w, loadu256(b[i].qs + 32 * v), gs(v)));
      }
    }
    const float da = b[i].d;
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(f16_to_f32(a[i].d) * da), acc);
    accm = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(bsums(b[i]), mn16)),
                           _mm256_set1_ps(f16_to_f32(a[i].dmin) * da), accm);
  }
  *s = finish(acc, accm);
}

}  // namespace edgeinfer
