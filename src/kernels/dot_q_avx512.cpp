// AVX-512 dot products of the 32-wide quant types against Q8_0/Q8_1 activations.
// Two blocks per 512-bit register: weights become unsigned bytes (the nibble, plus the fifth
// bit for Q5, or the int8 plus 128 for Q8_0) and vpdpbusd multiplies them with the signed
// activation bytes; the constant offset is removed with a second vpdpbusd that sums the
// activations (offset * sum(a)). Each block's int32 lanes are scaled by dw * da in float.
#include "kernels/simd_avx512.h"

namespace edgeinfer {

namespace {

using namespace avx512;

// Per-lane sum over 4-byte groups of u * s, where u is the unsigned operand.
inline __m512i dot_u8s8(__m512i u, __m512i s) { return _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, s); }

// int32 lanes of sum((u - off) * s) for a byte offset off (as set1_epi8).
inline __m512i dot_off(__m512i u, __m512i s, __m512i off) {
  return _mm512_sub_epi32(dot_u8s8(u, s), dot_u8s8(off, s));
}

// The Q5 fifth bits of two blocks as a 64-lane mask (lane j of block k is bit j of qh_k).
inline __mmask64 q5_high_mask(const uint8_t* qh0, const uint8_t* qh1) {
  return static_cast<__mmask64>(load_u32(qh0)) | (static_cast<__mmask64>(load_u32(qh1)) << 32);
}

// Loop over block pairs; `pair(i, j)` handles blocks i and j (j == i for an odd last block,
// whose second half the caller zeroes through the scale).
template <typename Pair>
inline void for_pairs(int64_t nb, Pair pair) {
  int64_t i = 0;
  for (; i + 1 < nb; i += 2) pair(i, i + 1, true);
  if (i < nb) pair(i, i, false);
}

}  // namespace

// Blocks are processed 16 at a time: their int32 sums are reduced to one register (lane =
// block, in the order kBlockOrder) and scaled by 16 dw * da at once; the f16 scales come from
// wide loads of the rows and vpermt2w instead of 32 scalar conversions.
namespace {

// Lane k of reduce16's result holds the sum of block kBlockOrder[k].
constexpr int kBlockOrder[16] = {0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15};

// v[p]: int32 lanes 0-7 belong to block 2p, lanes 8-15 to block 2p + 1.
inline __m512i reduce16(const __m512i v[8]) {
  __m512i x[4], yv[2];
  for (int p = 0; p < 4; ++p) {
    x[p] = _mm512_add_epi32(_mm512_unpacklo_epi32(v[2 * p], v[2 * p + 1]), _mm512_unpackhi_epi32(v[2 * p], v[2 * p + 1]));
  }
  for (int p = 0; p < 2; ++p) {
    yv[p] = _mm512_add_epi32(_mm512_unpacklo_epi64(x[2 * p], x[2 * p + 1]), _mm512_unpackhi_epi64(x[2 * p], x[2 * p + 1]));
  }
  // yv[p] 128-bit lane L, dword q: partial sum (over lane L) of v[4p + q].
  return _mm512_add_epi32(_mm512_shuffle_i32x4(yv[0], yv[1], 0x88), _mm512_shuffle_i32x4(yv[0], yv[1], 0xDD));
}

// Index vectors for vpermt2w: word position k takes word stride * order[k] - base of a 64-word
// table, for the blocks order[k] in [lo, hi] (other positions: word 0, blended away).
struct WordIndex {
  alignas(64) int16_t v[32];
};
constexpr WordIndex word_index(int stride, int base, int lo, int hi) {
  WordIndex w{};
  for (int k = 0; k < 16; ++k) {
    const int blk = kBlockOrder[k];
    if (blk >= lo && blk <= hi) w.v[k] = static_cast<int16_t>(stride * blk - base);
  }
  return w;
}
constexpr __mmask32 order_mask(int lo, int hi) {
  __mmask32 m = 0;
  for (int k = 0; k < 16; ++k) {
    if (kBlockOrder[k] >= lo && kBlockOrder[k] <= hi) m |= 1u << k;
  }
  return m;
}

inline __m512i load_index(const WordIndex& w) { return _mm512_load_si512(w.v); }

// The f16 field at byte 0 of 16 consecutive 18-byte blocks (Q4_0), in kBlockOrder; reads
// exactly the 288 bytes of the blocks.
constexpr WordIndex kS18a = word_index(9, 0, 0, 7), kS18b = word_index(9, 64, 8, 14), kS18c = word_index(9, 112, 15, 15);
inline __m512 scales_stride18(const uint8_t* p) {
  auto ld = [&](int off) { return _mm512_loadu_si512(p + off); };
  __m512i r = _mm512_permutex2var_epi16(ld(0), load_index(kS18a), ld(64));
  r = _mm512_mask_blend_epi16(order_mask(8, 14), r, _mm512_permutex2var_epi16(ld(128), load_index(kS18b), ld(192)));
  r = _mm512_mask_blend_epi16(order_mask(15, 15), r, _mm512_permutexvar_epi16(load_index(kS18c), ld(224)));
  return _mm512_cvtph_ps(_mm512_castsi512_si256(r));
}

// The f16 field at byte 0 of 16 consecutive 34-byte blocks (Q8_0), in kBlockOrder.
constexpr WordIndex kS34[4] = {word_index(17, 0, 0, 3), word_index(17, 64, 4, 7), word_index(17, 128, 8, 11),
                               word_index(17, 192, 12, 15)};
inline __m512 scales_stride34(const uint8_t* p) {
  __m512i r = _mm512_setzero_si512();
  for (int q = 0; q < 4; ++q) {
    const __m512i t = _mm512_permutex2var_epi16(_mm512_loadu_si512(p + 128 * q), load_index(kS34[q]),
                                                _mm512_loadu_si512(p + 128 * q + 64));
    r = _mm512_mask_blend_epi16(order_mask(4 * q, 4 * q + 3), r, t);
  }
  return _mm512_cvtph_ps(_mm512_castsi512_si256(r));
}

}  // namespace

void q4_0_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ4_0* a = static_cast<const BlockQ4_0*>(x);
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(y);
  const int64_t nb = n / kQK;
  const __m512i eight = _mm512_set1_epi8(8);
  __m512 acc = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= nb; i += 16) {
    __m512i v[8];
    for (int p = 0; p < 8; ++p) {
      const int64_t j = i + 2 * p;
      const __m512i w = unpack_nibbles2(a[j].qs, a[j + 1].qs);
      const __m512i q = load2x256(b[j].qs, b[j + 1].qs);
      v[p] = dot_off(w, q, eight);
    }
    const __m512 sc = _mm512_mul_ps(scales_stride18(reinterpret_cast<const uint8_t*>(a + i)),
                                    scales_stride34(reinterpret_cast<const uint8_t*>(b + i)));
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(reduce16(v)), sc, acc);
  }
  for_pairs(nb - i, [&](int64_t i0, int64_t j0, bool two) {
    const int64_t bi = i + i0, bj = i + j0;
    const __m512i w = unpack_nibbles2(a[bi].qs, a[bj].qs);
    const __m512i q = load2x256(b[bi].qs, b[bj].qs);
    const __m512 sc = two_scales(f16_to_f32(a[bi].d) * f16_to_f32(b[bi].d),
                                 two ? f16_to_f32(a[bj].d) * f16_to_f32(b[bj].d) : 0.0f);
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot_off(w, q, eight)), sc, acc);
  });
  *s = hsum(acc);
}

void q8_0_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ8_0* a = static_cast<const BlockQ8_0*>(x);
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(y);
  const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512 acc = _mm512_setzero_ps();
  for_pairs(n / kQK, [&](int64_t i, int64_t j, bool two) {
    // int8 w becomes the unsigned byte w + 128 (flip of the sign bit); 128 * sum(a) comes off.
    const __m512i w = _mm512_xor_si512(load2x256(a[i].qs, a[j].qs), bias);
    const __m512i q = load2x256(b[i].qs, b[j].qs);
    const __m512 sc = two_scales(f16_to_f32(a[i].d) * f16_to_f32(b[i].d),
                                 two ? f16_to_f32(a[j].d) * f16_to_f32(b[j].d) : 0.0f);
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot_off(w, q, bias)), sc, acc);
  });
  *s = hsum(acc);
}

void q4_1_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ4_1* a = static_cast<const BlockQ4_1*>(x);
  const BlockQ8_1* b = static_cast<const BlockQ8_1*>(y);
  __m512 acc = _mm512_setzero_ps();
  float mins = 0.0f;  // sum of m * (da * sum(a)), the affine part
  for_pairs(n / kQK, [&](int64_t i, int64_t j, bool two) {
    const __m512i w = unpack_nibbles2(a[i].qs, a[j].qs);
    const __m512i q = load2x256(b[i].qs, b[j].qs);
    const __m512 sc = two_scales(f16_to_f32(a[i].d) * f16_to_f32(b[i].d),
                                 two ? f16_to_f32(a[j].d) * f16_to_f32(b[j].d) : 0.0f);
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot_u8s8(w, q)), sc, acc);
    mins += f16_to_f32(a[i].m) * f16_to_f32(b[i].s);
    if (two) mins += f16_to_f32(a[j].m) * f16_to_f32(b[j].s);
  });
  *s = hsum(acc) + mins;
}

void q5_0_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ5_0* a = static_cast<const BlockQ5_0*>(x);
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(y);
  const __m512i sixteen = _mm512_set1_epi8(16);
  __m512 acc = _mm512_setzero_ps();
  for_pairs(n / kQK, [&](int64_t i, int64_t j, bool two) {
    __m512i w = unpack_nibbles2(a[i].qs, a[j].qs);
    w = _mm512_mask_add_epi8(w, q5_high_mask(a[i].qh, a[j].qh), w, sixteen);
    const __m512i q = load2x256(b[i].qs, b[j].qs);
    const __m512 sc = two_scales(f16_to_f32(a[i].d) * f16_to_f32(b[i].d),
                                 two ? f16_to_f32(a[j].d) * f16_to_f32(b[j].d) : 0.0f);
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot_off(w, q, sixteen)), sc, acc);
  });
  *s = hsum(acc);
}

void q5_1_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ5_1* a = static_cast<const BlockQ5_1*>(x);
  const BlockQ8_1* b = static_cast<const BlockQ8_1*>(y);
  const __m512i sixteen = _mm512_set1_epi8(16);
  __m512 acc = _mm512_setzero_ps();
  float mins = 0.0f;
  for_pairs(n / kQK, [&](int64_t i, int64_t j, bool two) {
    __m512i w = unpack_nibbles2(a[i].qs, a[j].qs);
    w = _mm512_mask_add_epi8(w, q5_high_mask(a[i].qh, a[j].qh), w, sixteen);
    const __m512i q = load2x256(b[i].qs, b[j].qs);
    const __m512 sc = two_scales(f16_to_f32(a[i].d) * f16_to_f32(b[i].d),
                                 two ? f16_to_f32(a[j].d) * f16_to_f32(b[j].d) : 0.0f);
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot_u8s8(w, q)), sc, acc);
    mins += f16_to_f32(a[i].m) * f16_to_f32(b[i].s);
    if (two) mins += f16_to_f32(a[j].m) * f16_to_f32(b[j].s);
  });
  *s = hsum(acc) + mins;
}

}  // namespace edgeinfer
