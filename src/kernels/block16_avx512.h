#pragma once
// Internal to the AVX-512 path (include only from *_avx512.cpp): the 16-block helpers shared by
// the 32-wide quant dot products (dot_q_avx512.cpp) and the tile-exact GEMV (gemv_q_avx512.cpp).
#include "kernels/simd_avx512.h"

namespace edgeinfer::avx512 {

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

}  // namespace edgeinfer::avx512
