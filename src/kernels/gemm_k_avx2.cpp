// AVX2 prefill tiles (GemmTileFn) of the K-quants Q2_K..Q6_K against Q8_K activations.
//
// The algorithm of gemm_k_avx512.cpp on 256-bit registers: 8 weight rows in the 8 int32 lanes,
// a super-block's quants unpacked once per row group into 64 registers' worth of unsigned bytes
// (chunk k, lane r = elements 4k..4k+3 of row r) and reused for every column of the panel, whose
// 4 activation bytes per chunk are broadcast from memory. Without VNNI a chunk is one vpmaddubsw
// (int16 pairs, one pair per row); the pairs of a few consecutive chunks of one scale group are
// added in int16, and vpmaddwd with the rows' integer scale as an int16 pair (s, s) both sums the
// pair and scales it, so the super-block's sum stays exact in int32 with one instruction per
// chunk besides the vpmaddubsw and a few per group. How many chunks may share an int16 sum
// (kSpan) follows from the largest quant u and |a| <= 128 (Q8_K may hold -128): a chunk's pair
// is at most 2 * u * 128, so kSpan * 2 * u * 128 <= 32767: Q2_K (u <= 3) and Q3_K (u <= 7)
// take a whole 16-element group (4 chunks), Q4_K (u <= 15) a whole 32-element group (8 chunks:
// 30720), Q5_K (u <= 31) half of one (4 chunks: 31744) and Q6_K (u <= 63) two chunks (32256).
// vpmaddubsw itself cannot saturate: 2 * 63 * 128 < 2^15.
//
// As in gemm_k_avx512.cpp, the parts that depend only on a group's activation sum (Q2_K/Q4_K/
// Q5_K mins, Q3_K/Q6_K constant offsets) are vpmaddwd of per-row int16 pairs with the Q8_K
// block's bsums, so the activations need no preprocessing. Each output element sees the same
// operations in the same order whatever the tile's shape (one FMA or two per super-block, the
// partial sums held in a float buffer between super-blocks), so a row's bits do not depend on
// its batch mates.
#include "kernels/simd_avx2.h"

namespace edgeinfer {

namespace {

using namespace avx2;

constexpr int kRows = 8;
constexpr int kPanel = 64;
constexpr int kMaxCols = 4;  // columns per micro-kernel call: 2 accumulators each (16 registers)

// One row group's super-block.
struct KPack {
  __m256i q[64];     // q[k] lane r: unsigned quants of elements 4k..4k+3, row r
  __m256i sc[16];    // lane r: integer scale of group g (16 or 32 elements) as an int16 pair (s, s)
  __m256i pairs[8];  // lane r: int16 pair multiplying bsums[2t], bsums[2t + 1]
  __m256 d, dmin;    // lane r: super-block scales (dmin: of the pairs term, where it has its own)
};

// Transposes `bytes` (a multiple of 16) at rows[r] + off: out[i] lane r = dword i of row r.
inline void transpose_rows(const uint8_t* const* rows, size_t off, int bytes, __m256i* out) {
  for (int p = 0; p < bytes / 16; ++p) transpose8x4(rows, off + 16 * static_cast<size_t>(p), out + 4 * p);
}

// The 8 low (f16_lo) or high (f16_hi) halves of v's dwords as floats.
inline __m256 f16_lo(__m256i v) {
  const __m256i lo = _mm256_and_si256(v, _mm256_set1_epi32(0xffff));
  // packus keeps each 128-bit lane's 4 values in its low 8 bytes: qwords 0 and 2 hold all 8.
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, lo), 0x08);
  return _mm256_cvtph_ps(_mm256_castsi256_si128(packed));
}
inline __m256 f16_hi(__m256i v) { return f16_lo(_mm256_srli_epi32(v, 16)); }

inline __m256i byte_u(__m256i v, int i) { return _mm256_and_si256(_mm256_srli_epi32(v, 8 * i), _mm256_set1_epi32(0xff)); }
inline __m256i byte_s(__m256i v, int i) { return _mm256_srai_epi32(_mm256_slli_epi32(v, 24 - 8 * i), 24); }
// int16 pair (lo, hi) per lane from two int32 lanes in int16 range.
inline __m256i pair16(__m256i lo, __m256i hi) {
  return _mm256_or_si256(_mm256_and_si256(lo, _mm256_set1_epi32(0xffff)), _mm256_slli_epi32(hi, 16));
}
// Logical dword shift by a signed count (left when positive).
inline __m256i shift32(__m256i v, int count) {
  return count >= 0 ? _mm256_sll_epi32(v, _mm_cvtsi32_si128(count)) : _mm256_srl_epi32(v, _mm_cvtsi32_si128(-count));
}

// Q4_K/Q5_K scales and mins from the 12 packed bytes as dwords a0, a1, a2 (see dot_k_avx512.cpp).
inline void k4_scales(KPack& p, __m256i a0, __m256i a1, __m256i a2) {
  const __m256i m6 = _mm256_set1_epi32(0x3f3f3f3f), m4 = _mm256_set1_epi32(0x0f0f0f0f);
  const __m256i m2 = _mm256_set1_epi32(0x03030303);
  const __m256i sc_lo = _mm256_and_si256(a0, m6);
  const __m256i sc_hi =
      _mm256_or_si256(_mm256_and_si256(a2, m4), _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(a0, 6), m2), 4));
  const __m256i mn_lo = _mm256_and_si256(a1, m6);
  const __m256i mn_hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(a2, 4), m4),
                                        _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(a1, 6), m2), 4));
  for (int j = 0; j < 8; ++j) {
    const __m256i s = byte_u(j < 4 ? sc_lo : sc_hi, j % 4);
    p.sc[j] = pair16(s, s);
    const __m256i m = byte_u(j < 4 ? mn_lo : mn_hi, j % 4);
    p.pairs[j] = pair16(m, m);  // sub-block j covers bsums 2j and 2j + 1
  }
}

// Q4_K/Q5_K nibbles: qs dwords (32 per row) -> q[], sub-block 2c from the low nibbles of qs
// bytes [32c, 32c + 32), sub-block 2c + 1 from their high nibbles.
inline void k4_nibbles(KPack& p, const __m256i* qs) {
  const __m256i lo4 = _mm256_set1_epi8(0x0F);
  for (int c = 0; c < 4; ++c) {
    for (int k = 0; k < 8; ++k) {
      const __m256i v = qs[8 * c + k];
      p.q[16 * c + k] = _mm256_and_si256(v, lo4);
      p.q[16 * c + 8 + k] = _mm256_and_si256(_mm256_srli_epi16(v, 4), lo4);
    }
  }
}

// --- formats: kGroups scale groups per super-block, kSpan chunks per int16 sum (see the top),
// kMins: the pairs term is scaled by dmin (else it is part of the integer sum).

struct FmtQ4_K {
  using Block = BlockQ4_K;
  static constexpr int kGroups = 8;
  static constexpr int kSpan = 8;
  static constexpr bool kMins = true;
  static void unpack(const uint8_t* const* rows, size_t base, KPack& p) {
    __m256i head[4], qs[32];
    transpose8x4(rows, base, head);  // d|dmin, scale bytes 0-3, 4-7, 8-11
    p.d = f16_lo(head[0]);
    p.dmin = f16_hi(head[0]);
    k4_scales(p, head[1], head[2], head[3]);
    transpose_rows(rows, base + offsetof(Block, qs), 128, qs);
    k4_nibbles(p, qs);
  }
};

struct FmtQ5_K {
  using Block = BlockQ5_K;
  static constexpr int kGroups = 8;
  static constexpr int kSpan = 4;
  static constexpr bool kMins = true;
  static void unpack(const uint8_t* const* rows, size_t base, KPack& p) {
    __m256i head[4], qs[32], qh[8];
    transpose8x4(rows, base, head);
    p.d = f16_lo(head[0]);
    p.dmin = f16_hi(head[0]);
    k4_scales(p, head[1], head[2], head[3]);
    transpose_rows(rows, base + offsetof(Block, qs), 128, qs);
    k4_nibbles(p, qs);
    // Fifth bit of element 32 s + k: bit s of qh[k]. Chunk k' of sub-block s covers qh bytes
    // 4k'..4k'+3 = qh dword k'; move bit s of each byte to bit 4.
    transpose_rows(rows, base + offsetof(Block, qh), 32, qh);
    const __m256i bit4 = _mm256_set1_epi8(0x10);
    for (int s = 0; s < 8; ++s) {
      for (int k = 0; k < 8; ++k) {
        p.q[8 * s + k] = _mm256_or_si256(p.q[8 * s + k], _mm256_and_si256(shift32(qh[k], 4 - s), bit4));
      }
    }
  }
};

struct FmtQ6_K {
  using Block = BlockQ6_K;
  static constexpr int kGroups = 16;
  static constexpr int kSpan = 2;
  static constexpr bool kMins = false;
  static void unpack(const uint8_t* const* rows, size_t base, KPack& p) {
    __m256i ql[32], qh[16], sc[4];
    transpose_rows(rows, base + offsetof(Block, ql), 128, ql);
    transpose_rows(rows, base + offsetof(Block, qh), 64, qh);
    transpose8x4(rows, base + offsetof(Block, scales), sc);
    p.d = gather_f16x8(rows, base + offsetof(Block, d));
    // Element 128h + 32q + l (l < 32) has its low 4 bits in ql byte 64h + l + 32(q & 1) (the
    // high nibble when q >= 2) and its high 2 bits in bits 2q..2q+1 of qh byte 32h + l: for one
    // dword position l4 = l / 4, ql dwords 16h + l4 and 16h + 8 + l4 and qh dword 8h + l4 give
    // chunk 32h + 8q + l4 of all four quarters q (unsigned: stored + 32).
    const __m256i lo4 = _mm256_set1_epi8(0x0F), hi2 = _mm256_set1_epi8(0x30);
    for (int h = 0; h < 2; ++h) {
      for (int l4 = 0; l4 < 8; ++l4) {
        const __m256i a = ql[16 * h + l4], b = ql[16 * h + 8 + l4], hb = qh[8 * h + l4];
        p.q[32 * h + l4] = _mm256_or_si256(_mm256_and_si256(a, lo4), _mm256_and_si256(_mm256_slli_epi16(hb, 4), hi2));
        p.q[32 * h + 8 + l4] =
            _mm256_or_si256(_mm256_and_si256(b, lo4), _mm256_and_si256(_mm256_slli_epi16(hb, 2), hi2));
        p.q[32 * h + 16 + l4] =
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(a, 4), lo4), _mm256_and_si256(hb, hi2));
        p.q[32 * h + 24 + l4] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(b, 4), lo4),
                                                _mm256_and_si256(_mm256_srli_epi16(hb, 2), hi2));
      }
    }
    // The -32 offset: -32 * (sc[2t] * bsums[2t] + sc[2t+1] * bsums[2t+1]); |32 * sc| <= 4096.
    const __m256i m32 = _mm256_set1_epi32(-32);
    __m256i s[16];
    for (int g = 0; g < 16; ++g) {
      s[g] = byte_s(sc[g / 4], g % 4);
      p.sc[g] = pair16(s[g], s[g]);
    }
    for (int t = 0; t < 8; ++t) {
      p.pairs[t] = pair16(_mm256_mullo_epi32(s[2 * t], m32), _mm256_mullo_epi32(s[2 * t + 1], m32));
    }
  }
};

struct FmtQ3_K {
  using Block = BlockQ3_K;
  static constexpr int kGroups = 16;
  static constexpr int kSpan = 4;
  static constexpr bool kMins = false;
  static void unpack(const uint8_t* const* rows, size_t base, KPack& p) {
    __m256i hm[8], qs[16], sc3[4];
    transpose_rows(rows, base + offsetof(Block, hmask), 32, hm);
    transpose_rows(rows, base + offsetof(Block, qs), 64, qs);
    p.d = gather_f16x8(rows, base + offsetof(Block, d));
    const __m256i three = _mm256_set1_epi8(3), four = _mm256_set1_epi8(4);
    // Element 128h + 32j + l: bits 2j..2j+1 of qs[32h + l], high bit = bit 4h + j of hmask[l]
    // (the dword shifts move no wanted bit across a byte: the masks keep each byte's own).
    for (int k = 0; k < 64; ++k) {
      const int h = k / 32, j = (k % 32) / 8, l = 4 * (k % 8);
      const __m256i lo = _mm256_and_si256(shift32(qs[(32 * h + l) / 4], -2 * j), three);
      const __m256i hb = _mm256_and_si256(shift32(hm[l / 4], 2 - (4 * h + j)), four);
      p.q[k] = _mm256_or_si256(lo, hb);
    }
    // The 12 packed scale bytes, read as the last 12 of a 16-byte load that stays inside the
    // block (its first dword is the end of qs).
    transpose8x4(rows, base + offsetof(Block, scales) - 4, sc3);
    const __m256i m4 = _mm256_set1_epi32(0x0f0f0f0f), m2 = _mm256_set1_epi32(0x03030303);
    const __m256i a0 = sc3[1], a1 = sc3[2], a2 = sc3[3];
    const __m256i s4[4] = {
        _mm256_or_si256(_mm256_and_si256(a0, m4), _mm256_slli_epi32(_mm256_and_si256(a2, m2), 4)),
        _mm256_or_si256(_mm256_and_si256(a1, m4), _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(a2, 2), m2), 4)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(a0, 4), m4),
                        _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(a2, 4), m2), 4)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(a1, 4), m4),
                        _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(a2, 6), m2), 4))};
    // Scales are stored + 32; quants are stored + 4: -4 * (sc[2t] * bsums[2t] + ...).
    const __m256i m32 = _mm256_set1_epi32(32), mneg4 = _mm256_set1_epi32(-4);
    __m256i s[16];
    for (int g = 0; g < 16; ++g) {
      s[g] = _mm256_sub_epi32(byte_u(s4[g / 4], g % 4), m32);
      p.sc[g] = pair16(s[g], s[g]);
    }
    for (int t = 0; t < 8; ++t) {
      p.pairs[t] = pair16(_mm256_mullo_epi32(s[2 * t], mneg4), _mm256_mullo_epi32(s[2 * t + 1], mneg4));
    }
  }
};

struct FmtQ2_K {
  using Block = BlockQ2_K;
  static constexpr int kGroups = 16;
  static constexpr int kSpan = 4;
  static constexpr bool kMins = true;
  static void unpack(const uint8_t* const* rows, size_t base, KPack& p) {
    __m256i qs[16], sc[4];
    transpose_rows(rows, base + offsetof(Block, qs), 64, qs);
    transpose8x4(rows, base + offsetof(Block, scales), sc);
    p.d = gather_f16x8(rows, base + offsetof(Block, d));
    p.dmin = gather_f16x8(rows, base + offsetof(Block, dmin));
    const __m256i three = _mm256_set1_epi8(3);
    for (int k = 0; k < 64; ++k) {
      const int h = k / 32, j = (k % 32) / 8, l = 4 * (k % 8);
      p.q[k] = _mm256_and_si256(shift32(qs[(32 * h + l) / 4], -2 * j), three);
    }
    // Byte g of the scales: scale in the low nibble, min in the high nibble.
    const __m256i m4 = _mm256_set1_epi32(0x0f0f0f0f);
    __m256i mins[16];
    for (int g = 0; g < 16; ++g) {
      const __m256i s = byte_u(_mm256_and_si256(sc[g / 4], m4), g % 4);
      p.sc[g] = pair16(s, s);
      mins[g] = byte_u(_mm256_and_si256(_mm256_srli_epi32(sc[g / 4], 4), m4), g % 4);
    }
    for (int t = 0; t < 8; ++t) p.pairs[t] = pair16(mins[2 * t], mins[2 * t + 1]);
  }
};

inline __m256i bcast4(const void* p) { return _mm256_set1_epi32(static_cast<int>(load_u32(p))); }

// acc[c] (8 rows, float) += this super-block's dots for NC columns (xc: their Q8_K blocks). Per
// group, the chunks' vpmaddubsw run column by column with the chunk's weights in one register
// (one broadcast load per vpmaddubsw). The loops inside a group are unrolled so the sums stay
// in registers; the group loop is not (GCC, fully unrolled, hoisted the products of many groups
// and spilled them: Q4_K 135 -> 153 Gop/s rolled). The empty asm pins each int16 sum as a
// serial chain: GCC otherwise reassociates the vpaddw into a tree that keeps every product of
// the span alive and spills them (Q4_K 153 -> 211 Gop/s, gemm/avx2/q4_K/5632x2048/512).
template <class Fmt, int NC>
void micro_kernel(const KPack& p, const BlockQ8_K* const* xc, float (*acc)[kRows]) {
  constexpr int kChunks = 64 / Fmt::kGroups;  // chunks per scale group
  constexpr int kSpan = Fmt::kSpan;
  __m256i isum[NC];
#pragma GCC unroll 8
  for (int c = 0; c < NC; ++c) isum[c] = _mm256_setzero_si256();
#pragma GCC unroll 1
  for (int g = 0; g < Fmt::kGroups; ++g) {
    const __m256i s = p.sc[g];
#pragma GCC unroll 8
    for (int h = 0; h < kChunks / kSpan; ++h) {
      __m256i t[NC];
      const int k0 = kChunks * g + kSpan * h;
      {
        const __m256i w = p.q[k0];
#pragma GCC unroll 8
        for (int c = 0; c < NC; ++c) t[c] = _mm256_maddubs_epi16(w, bcast4(xc[c]->qs + 4 * k0));
      }
#pragma GCC unroll 8
      for (int k = 1; k < kSpan; ++k) {
        const __m256i w = p.q[k0 + k];
#pragma GCC unroll 8
        for (int c = 0; c < NC; ++c) {
          t[c] = _mm256_add_epi16(t[c], _mm256_maddubs_epi16(w, bcast4(xc[c]->qs + 4 * (k0 + k))));
          __asm__("" : "+x"(t[c]));
        }
      }
#pragma GCC unroll 8
      for (int c = 0; c < NC; ++c) isum[c] = _mm256_add_epi32(isum[c], _mm256_madd_epi16(t[c], s));
    }
  }
#pragma GCC unroll 8
  for (int c = 0; c < NC; ++c) {
    __m256i pt = _mm256_madd_epi16(p.pairs[0], bcast4(xc[c]->bsums));
#pragma GCC unroll 8
    for (int t = 1; t < 8; ++t) pt = _mm256_add_epi32(pt, _mm256_madd_epi16(p.pairs[t], bcast4(xc[c]->bsums + 2 * t)));
    float da;
    std::memcpy(&da, &xc[c]->d, sizeof da);
    const __m256 vda = _mm256_set1_ps(da);
    __m256 a = _mm256_load_ps(acc[c]);
    if constexpr (Fmt::kMins) {
      a = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[c]), _mm256_mul_ps(p.d, vda), a);
      a = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(pt), _mm256_mul_ps(p.dmin, vda), a);
    } else {
      a = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(isum[c], pt)), _mm256_mul_ps(p.d, vda), a);
    }
    _mm256_store_ps(acc[c], a);
  }
}

template <class Fmt, int NC>
void micro_dispatch(int nc, const KPack& p, const BlockQ8_K* const* xc, float (*acc)[kRows]) {
  if constexpr (NC > 0) {
    if (nc == NC) return micro_kernel<Fmt, NC>(p, xc, acc);
    return micro_dispatch<Fmt, NC - 1>(nc, p, xc, acc);
  }
}

template <class Fmt>
void gemm_tile(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
               size_t x_stride, float* y, size_t y_stride) {
  const int64_t nb = n / kQK_K;
  const uint8_t* wb = static_cast<const uint8_t*>(w);
  const uint8_t* xb = static_cast<const uint8_t*>(x);
  alignas(32) KPack pack;
  // The row group's sums for the panel, [column][row]: y's columns are a whole output row apart
  // (often a multiple of 4 KiB, all in one L1 set), so they meet y once the group's K is done.
  alignas(32) float acc[kPanel][kRows];
  // Row group outer, super-blocks inner: the group's partial sums stay in L1 while K is walked;
  // the panel's activations (64 x 292 bytes per super-block) come from L2.
  for (int64_t p0 = 0; p0 < n_cols; p0 += kPanel) {
    const int np = static_cast<int>(n_cols - p0 < kPanel ? n_cols - p0 : kPanel);
    for (int64_t r0 = 0; r0 < n_rows; r0 += kRows) {
      const int nr = static_cast<int>(n_rows - r0 < kRows ? n_rows - r0 : kRows);
      // Rows past the tile repeat its last row (read, never stored).
      const uint8_t* rows[kRows];
      for (int r = 0; r < kRows; ++r) rows[r] = wb + static_cast<size_t>(r0 + (r < nr ? r : nr - 1)) * w_stride;
      for (int c = 0; c < np; ++c) _mm256_store_ps(acc[c], _mm256_setzero_ps());
      for (int64_t sb = 0; sb < nb; ++sb) {
        Fmt::unpack(rows, static_cast<size_t>(sb) * sizeof(typename Fmt::Block), pack);
        for (int c0 = 0; c0 < np; c0 += kMaxCols) {
          const int nc = np - c0 < kMaxCols ? np - c0 : kMaxCols;
          const BlockQ8_K* xc[kMaxCols];
          for (int c = 0; c < nc; ++c) {
            xc[c] = reinterpret_cast<const BlockQ8_K*>(xb + static_cast<size_t>(p0 + c0 + c) * x_stride) + sb;
          }
          micro_dispatch<Fmt, kMaxCols>(nc, pack, xc, acc + c0);
        }
      }
      for (int c = 0; c < np; ++c) {
        float* yc = y + static_cast<size_t>(p0 + c) * y_stride + r0;
        if (nr == kRows) {
          _mm256_storeu_ps(yc, _mm256_load_ps(acc[c]));
        } else {
          for (int r = 0; r < nr; ++r) yc[r] = acc[c][r];
        }
      }
    }
  }
}

}  // namespace

void q2_k_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride) {
  gemm_tile<FmtQ2_K>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}
void q3_k_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride) {
  gemm_tile<FmtQ3_K>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}
void q4_k_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride) {
  gemm_tile<FmtQ4_K>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}
void q5_k_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride) {
  gemm_tile<FmtQ5_K>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}
void q6_k_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride) {
  gemm_tile<FmtQ6_K>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}

}  // namespace edgeinfer
