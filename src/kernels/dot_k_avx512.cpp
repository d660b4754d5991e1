// AVX-512 dot products of the K-quants against Q8_K activations.
// A super-block's 256 weights are expanded to unsigned bytes in element order, four 64-byte
// registers; vpmaddubsw multiplies them with the activation bytes into int16 pairs (no
// saturation: |q| <= 63, |a| <= 127) and vpdpwssd applies the per-group integer scale while
// accumulating int32. Constant offsets (Q3_K: 4, Q6_K: 32) and the affine mins (Q2_K, Q4_K,
// Q5_K) come from the activation's per-16 sums (bsums), so they cost no pass over the quants.
#include "kernels/simd_avx512.h"

namespace edgeinfer {

namespace {

using namespace avx512;

// Index vectors for vpermw: lane i of register v takes scale 4v + i/8 (16 scales of 16
// elements) or 2v + i/16 (8 scales of 32 elements).
inline __m512i group_index16(int v) {
  alignas(64) int16_t idx[32];
  for (int i = 0; i < 32; ++i) idx[i] = static_cast<int16_t>(4 * v + i / 8);
  return _mm512_load_si512(idx);
}
inline __m512i group_index32(int v) {
  alignas(64) int16_t idx[32];
  for (int i = 0; i < 32; ++i) idx[i] = static_cast<int16_t>(2 * v + i / 16);
  return _mm512_load_si512(idx);
}

// [v | v]: the 32 bytes at p in both 256-bit halves.
inline __m512i bcast256(const void* p) {
  return _mm512_broadcast_i64x4(_mm256_loadu_si256(static_cast<const __m256i*>(p)));
}

inline __m512i load512(const void* p) { return _mm512_loadu_si512(p); }

// acc += sum over 4-element groups of scale * (w . a), with scale per int16 lane of s.
inline __m512i scaled_dot(__m512i acc, __m512i w, __m512i a, __m512i s) {
  return _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(w, a), s);
}

// Per-16 activation sums of a Q8_K block times 16 int16 scales: 8 int32 lanes, lane k holding
// scale[2k] * bsum[2k] + scale[2k+1] * bsum[2k+1].
inline __m256i bsum_dot(const BlockQ8_K& b, __m256i scales16) {
  return _mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.bsums)), scales16);
}

// The 8 six-bit scales and 8 six-bit mins of Q4_K/Q5_K as bytes (scales in the low 8 bytes of
// the result, mins in the high 8). Scales 0-3 / mins 0-3 are the low 6 bits of bytes 0-3 / 4-7;
// scales 4-7 / mins 4-7 take their low 4 bits from the nibbles of bytes 8-11 and their top 2
// bits from the top of bytes 0-3 / 4-7.
inline __m128i k4_scales_mins(const uint8_t* packed) {
  const uint32_t a0 = load_u32(packed), a1 = load_u32(packed + 4), a2 = load_u32(packed + 8);
  const uint32_t sc_lo = a0 & 0x3f3f3f3fu;
  const uint32_t sc_hi = (a2 & 0x0f0f0f0fu) | (((a0 >> 6) & 0x03030303u) << 4);
  const uint32_t mn_lo = a1 & 0x3f3f3f3fu;
  const uint32_t mn_hi = ((a2 >> 4) & 0x0f0f0f0fu) | (((a1 >> 6) & 0x03030303u) << 4);
  return _mm_set_epi32(static_cast<int>(mn_hi), static_cast<int>(mn_lo), static_cast<int>(sc_hi),
                       static_cast<int>(sc_lo));
}

// The 16 signed Q3_K scales (stored + 32) as int8: low 4 bits from the nibbles of bytes 0-7
// (scales 0-7 low nibbles, 8-15 high nibbles), top 2 bits from bytes 8-11 (scale j: byte
// 8 + j % 4, bits 2 * (j / 4)).
inline __m128i q3_scales(const uint8_t* packed) {
  const uint32_t a0 = load_u32(packed), a1 = load_u32(packed + 4), a2 = load_u32(packed + 8);
  const uint32_t m4 = 0x0f0f0f0fu, m2 = 0x03030303u;
  const uint32_t s0 = (a0 & m4) | ((a2 & m2) << 4);
  const uint32_t s1 = (a1 & m4) | (((a2 >> 2) & m2) << 4);
  const uint32_t s2 = ((a0 >> 4) & m4) | (((a2 >> 4) & m2) << 4);
  const uint32_t s3 = ((a1 >> 4) & m4) | (((a2 >> 6) & m2) << 4);
  const __m128i v = _mm_set_epi32(static_cast<int>(s3), static_cast<int>(s2), static_cast<int>(s1), static_cast<int>(s0));
  return _mm_sub_epi8(v, _mm_set1_epi8(32));
}

// The 64 weights v (0..3) of a 4-bit-per-element half-split layout (Q4_K/Q5_K): qs chunk v of
// 32 bytes holds sub-block 2v in its low nibbles and 2v+1 in its high nibbles.
inline __m512i k4_nibbles(const uint8_t* qs, int v) {
  const __m512i d = bcast256(qs + 32 * v);
  return _mm512_and_si512(_mm512_mask_srli_epi16(d, 0xFFFF0000u, d, 4), _mm512_set1_epi8(0x0F));
}

// 2-bit fields of Q2_K/Q3_K: for register t (0, 1) of a 128-element half, elements
// [64t, 64t + 32) are bits 4t..4t+1 of the half's 32 bytes, [64t + 32, 64t + 64) bits 4t+2..4t+3.
inline __m512i crumbs(__m512i q2x, int t) {
  const __m512i shifts = _mm512_inserti64x4(_mm512_set1_epi16(static_cast<short>(4 * t)),
                                            _mm256_set1_epi16(static_cast<short>(4 * t + 2)), 1);
  return _mm512_and_si512(_mm512_srlv_epi16(q2x, shifts), _mm512_set1_epi8(3));
}

// Byte lanes whose bit `lo_bit` (lanes 0-31) / `lo_bit + 1` (lanes 32-63) is set in [h | h].
inline __mmask64 bit_lanes(__m512i hx, int lo_bit) {
  const __m512i pat = _mm512_inserti64x4(_mm512_set1_epi8(static_cast<char>(1u << lo_bit)),
                                         _mm256_set1_epi8(static_cast<char>(1u << (lo_bit + 1))), 1);
  return _mm512_test_epi8_mask(hx, pat);
}

}  // namespace

namespace {

// NC activation rows x + c * x_stride against one Q4_K row: y[c * y_stride] gets vec_dot's
// result for row c, bit for bit, because every column runs vec_dot's own operations in its own
// order; only the weights' unpacking (nibbles, scales, mins) is shared by the NC columns.
template <int NC>
void q4_k_cols(int64_t n, const void* x, const void* act, size_t act_stride, float* y, size_t y_stride) {
  const BlockQ4_K* a = static_cast<const BlockQ4_K*>(x);
  const BlockQ8_K* bc[NC];
  for (int c = 0; c < NC; ++c) bc[c] = reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(act) + c * act_stride);
  const __m512i idx0 = group_index32(0), idx1 = group_index32(1), idx2 = group_index32(2), idx3 = group_index32(3);
  const __m256i dup = _mm256_set_epi16(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
  __m512 acc[NC];
  __m256 accm[NC];
#pragma GCC unroll 8
  for (int c = 0; c < NC; ++c) {
    acc[c] = _mm512_setzero_ps();
    accm[c] = _mm256_setzero_ps();
  }
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const __m128i sm = k4_scales_mins(a[i].scales);
    const __m512i sc = _mm512_cvtepu8_epi16(_mm256_castsi128_si256(sm));           // lanes 0-7 scales
    const __m256i mn = _mm256_cvtepu8_epi16(_mm_unpackhi_epi64(sm, sm));           // lanes 0-7 mins
    const __m512i w0 = k4_nibbles(a[i].qs, 0), w1 = k4_nibbles(a[i].qs, 1), w2 = k4_nibbles(a[i].qs, 2),
                  w3 = k4_nibbles(a[i].qs, 3);
    const __m512i s0 = _mm512_permutexvar_epi16(idx0, sc), s1 = _mm512_permutexvar_epi16(idx1, sc),
                  s2 = _mm512_permutexvar_epi16(idx2, sc), s3 = _mm512_permutexvar_epi16(idx3, sc);
    const __m256i mnd = _mm256_permutexvar_epi16(dup, mn);
    const float dw = f16_to_f32(a[i].d), dmin = f16_to_f32(a[i].dmin);
#pragma GCC unroll 8
    for (int c = 0; c < NC; ++c) {
      const BlockQ8_K& b = bc[c][i];
      __m512i isum = _mm512_setzero_si512();
      isum = scaled_dot(isum, w0, load512(b.qs), s0);
      isum = scaled_dot(isum, w1, load512(b.qs + 64), s1);
      isum = scaled_dot(isum, w2, load512(b.qs + 128), s2);
      isum = scaled_dot(isum, w3, load512(b.qs + 192), s3);
      const float da = b.d;
      acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_set1_ps(dw * da), acc[c]);
      accm[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(bsum_dot(b, mnd)), _mm256_set1_ps(dmin * da), accm[c]);
    }
  }
#pragma GCC unroll 8
  for (int c = 0; c < NC; ++c) {
    const __m128 m4 = _mm_add_ps(_mm256_castps256_ps128(accm[c]), _mm256_extractf128_ps(accm[c], 1));
    const __m128 m2 = _mm_add_ps(m4, _mm_movehl_ps(m4, m4));
    y[c * y_stride] = hsum(acc[c]) - _mm_cvtss_f32(_mm_add_ss(m2, _mm_movehdup_ps(m2)));
  }
}

// The same for Q6_K.
template <int NC>
void q6_k_cols(int64_t n, const void* x, const void* act, size_t act_stride, float* y, size_t y_stride) {
  const BlockQ6_K* a = static_cast<const BlockQ6_K*>(x);
  const BlockQ8_K* bc[NC];
  for (int c = 0; c < NC; ++c) bc[c] = reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(act) + c * act_stride);
  const __m512i idx[4] = {group_index16(0), group_index16(1), group_index16(2), group_index16(3)};
  const __m512i lo4 = _mm512_set1_epi8(0x0F), hi2 = _mm512_set1_epi8(0x30);
  // Shift counts that move the right pair of qh bits to bits 4-5: elements [0, 32) use bits
  // 0-1, [32, 64) bits 2-3, [64, 96) bits 4-5, [96, 128) bits 6-7 of qh[k].
  const __m512i shl = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
  const __m512i shr = _mm512_inserti64x4(_mm512_set1_epi16(0), _mm256_set1_epi16(2), 1);
  __m512 acc[NC];
#pragma GCC unroll 8
  for (int c = 0; c < NC; ++c) acc[c] = _mm512_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a[i].scales)));
    const __m512i sc = _mm512_castsi256_si512(sc16);
    __m512i w[4], sp[4];  // elements [64k, 64k + 64): quants (unsigned, + 32) and group scales
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m512i l = load512(a[i].ql + 64 * h);
      const __m512i hx = bcast256(a[i].qh + 32 * h);
      w[2 * h] = _mm512_or_si512(_mm512_and_si512(l, lo4), _mm512_and_si512(_mm512_sllv_epi16(hx, shl), hi2));
      w[2 * h + 1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), lo4),
                                     _mm512_and_si512(_mm512_srlv_epi16(hx, shr), hi2));
      sp[2 * h] = _mm512_permutexvar_epi16(idx[2 * h], sc);
      sp[2 * h + 1] = _mm512_permutexvar_epi16(idx[2 * h + 1], sc);
    }
    const float dw = f16_to_f32(a[i].d);
#pragma GCC unroll 8
    for (int c = 0; c < NC; ++c) {
      const BlockQ8_K& b = bc[c][i];
      __m512i isum = _mm512_setzero_si512();
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) isum = scaled_dot(isum, w[k], load512(b.qs + 64 * k), sp[k]);
      // The +32 offset of every quant: 32 * sum over groups of scale * bsum.
      const __m256i off = _mm256_slli_epi32(bsum_dot(b, sc16), 5);
      isum = _mm512_sub_epi32(isum, _mm512_zextsi256_si512(off));
      acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_set1_ps(dw * b.d), acc[c]);
    }
  }
#pragma GCC unroll 8
  for (int c = 0; c < NC; ++c) y[c * y_stride] = hsum(acc[c]);
}

// VecDotColsFn over groups of at most 8 columns (the accumulators of 8 stay in registers).
template <template <int> class F>
void cols_dispatch(int64_t n, const void* w, int64_t n_x, const void* x, size_t x_stride, float* y, size_t y_stride) {
  const uint8_t* xb = static_cast<const uint8_t*>(x);
  for (int64_t c0 = 0; c0 < n_x; c0 += 8) {
    const void* xc = xb + static_cast<size_t>(c0) * x_stride;
    float* yc = y + static_cast<size_t>(c0) * y_stride;
    switch (n_x - c0 < 8 ? n_x - c0 : 8) {
      case 1: F<1>::run(n, w, xc, x_stride, yc, y_stride); break;
      case 2: F<2>::run(n, w, xc, x_stride, yc, y_stride); break;
      case 3: F<3>::run(n, w, xc, x_stride, yc, y_stride); break;
      case 4: F<4>::run(n, w, xc, x_stride, yc, y_stride); break;
      case 5: F<5>::run(n, w, xc, x_stride, yc, y_stride); break;
      case 6: F<6>::run(n, w, xc, x_stride, yc, y_stride); break;
      case 7: F<7>::run(n, w, xc, x_stride, yc, y_stride); break;
      default: F<8>::run(n, w, xc, x_stride, yc, y_stride); break;
    }
  }
}
template <int NC>
struct Q4KCols {
  static void run(int64_t n, const void* w, const void* x, size_t xs, float* y, size_t ys) { q4_k_cols<NC>(n, w, x, xs, y, ys); }
};
template <int NC>
struct Q6KCols {
  static void run(int64_t n, const void* w, const void* x, size_t xs, float* y, size_t ys) { q6_k_cols<NC>(n, w, x, xs, y, ys); }
};

}  // namespace

void q4_k_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y) { q4_k_cols<1>(n, x, y, 0, s, 0); }
void q4_k_vec_dot_cols_avx512(int64_t n, const void* w, int64_t n_x, const void* x, size_t x_stride, float* y,
                              size_t y_stride) {
  cols_dispatch<Q4KCols>(n, w, n_x, x, x_stride, y, y_stride);
}

void q5_k_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ5_K* a = static_cast<const BlockQ5_K*>(x);
  const BlockQ8_K* b = static_cast<const BlockQ8_K*>(y);
  const __m512i idx0 = group_index32(0), idx1 = group_index32(1), idx2 = group_index32(2), idx3 = group_index32(3);
  const __m256i dup = _mm256_set_epi16(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
  const __m512i sixteen = _mm512_set1_epi8(16);
  __m512 acc = _mm512_setzero_ps();
  __m256 accm = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const __m128i sm = k4_scales_mins(a[i].scales);
    const __m512i sc = _mm512_cvtepu8_epi16(_mm256_castsi128_si256(sm));
    const __m256i mn = _mm256_cvtepu8_epi16(_mm_unpackhi_epi64(sm, sm));
    const __m512i hx = bcast256(a[i].qh);  // bit s of qh[k]: fifth bit of element 32 s + k
    auto w = [&](int v) {
      const __m512i lo = k4_nibbles(a[i].qs, v);
      return _mm512_mask_add_epi8(lo, bit_lanes(hx, 2 * v), lo, sixteen);
    };
    __m512i isum = _mm512_setzero_si512();
    isum = scaled_dot(isum, w(0), load512(b[i].qs), _mm512_permutexvar_epi16(idx0, sc));
    isum = scaled_dot(isum, w(1), load512(b[i].qs + 64), _mm512_permutexvar_epi16(idx1, sc));
    isum = scaled_dot(isum, w(2), load512(b[i].qs + 128), _mm512_permutexvar_epi16(idx2, sc));
    isum = scaled_dot(isum, w(3), load512(b[i].qs + 192), _mm512_permutexvar_epi16(idx3, sc));
    const float da = b[i].d;
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_set1_ps(f16_to_f32(a[i].d) * da), acc);
    const __m256i msum = bsum_dot(b[i], _mm256_permutexvar_epi16(dup, mn));
    accm = _mm256_fmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_set1_ps(f16_to_f32(a[i].dmin) * da), accm);
  }
  const __m128 m4 = _mm_add_ps(_mm256_castps256_ps128(accm), _mm256_extractf128_ps(accm, 1));
  const __m128 m2 = _mm_add_ps(m4, _mm_movehl_ps(m4, m4));
  *s = hsum(acc) - _mm_cvtss_f32(_mm_add_ss(m2, _mm_movehdup_ps(m2)));
}

void q6_k_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y) { q6_k_cols<1>(n, x, y, 0, s, 0); }
void q6_k_vec_dot_cols_avx512(int64_t n, const void* w, int64_t n_x, const void* x, size_t x_stride, float* y,
                              size_t y_stride) {
  cols_dispatch<Q6KCols>(n, w, n_x, x, x_stride, y, y_stride);
}

void q3_k_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ3_K* a = static_cast<const BlockQ3_K*>(x);
  const BlockQ8_K* b = static_cast<const BlockQ8_K*>(y);
  const __m512i idx[4] = {group_index16(0), group_index16(1), group_index16(2), group_index16(3)};
  const __m512i four = _mm512_set1_epi8(4);
  __m512 acc = _mm512_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const __m256i sc16 = _mm256_cvtepi8_epi16(q3_scales(a[i].scales));
    const __m512i sc = _mm512_castsi256_si512(sc16);
    const __m512i hm = bcast256(a[i].hmask);  // bit j of hmask[k]: high bit of element 32 j + k
    __m512i isum = _mm512_setzero_si512();
    for (int h = 0; h < 2; ++h) {
      const __m512i q = bcast256(a[i].qs + 32 * h);
      for (int t = 0; t < 2; ++t) {
        const __m512i lo = crumbs(q, t);
        const __m512i w = _mm512_mask_add_epi8(lo, bit_lanes(hm, 4 * h + 2 * t), lo, four);
        isum = scaled_dot(isum, w, load512(b[i].qs + 128 * h + 64 * t), _mm512_permutexvar_epi16(idx[2 * h + t], sc));
      }
    }
    // Quants are stored + 4 (high bit set means no -4): take 4 * sum of scale * bsum off.
    const __m256i off = _mm256_slli_epi32(bsum_dot(b[i], sc16), 2);
    isum = _mm512_sub_epi32(isum, _mm512_zextsi256_si512(off));
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_set1_ps(f16_to_f32(a[i].d) * b[i].d), acc);
  }
  *s = hsum(acc);
}

void q2_k_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ2_K* a = static_cast<const BlockQ2_K*>(x);
  const BlockQ8_K* b = static_cast<const BlockQ8_K*>(y);
  const __m512i idx[4] = {group_index16(0), group_index16(1), group_index16(2), group_index16(3)};
  __m512 acc = _mm512_setzero_ps();
  __m256 accm = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a[i].scales));
    const __m256i sc16 = _mm256_cvtepu8_epi16(_mm_and_si128(raw, _mm_set1_epi8(0x0F)));
    const __m256i mn16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(raw, 4), _mm_set1_epi8(0x0F)));
    const __m512i sc = _mm512_castsi256_si512(sc16);
    __m512i isum = _mm512_setzero_si512();
    for (int h = 0; h < 2; ++h) {
      const __m512i q = bcast256(a[i].qs + 32 * h);
      for (int t = 0; t < 2; ++t) {
        isum = scaled_dot(isum, crumbs(q, t), load512(b[i].qs + 128 * h + 64 * t),
                          _mm512_permutexvar_epi16(idx[2 * h + t], sc));
      }
    }
    const float da = b[i].d;
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_set1_ps(f16_to_f32(a[i].d) * da), acc);
    accm = _mm256_fmadd_ps(_mm256_cvtepi32_ps(bsum_dot(b[i], mn16)), _mm256_set1_ps(f16_to_f32(a[i].dmin) * da), accm);
  }
  const __m128 m4 = _mm_add_ps(_mm256_castps256_ps128(accm), _mm256_extractf128_ps(accm, 1));
  const __m128 m2 = _mm_add_ps(m4, _mm_movehl_ps(m4, m4));
  *s = hsum(acc) - _mm_cvtss_f32(_mm_add_ss(m2, _mm_movehdup_ps(m2)));
}

}  // namespace edgeinfer
