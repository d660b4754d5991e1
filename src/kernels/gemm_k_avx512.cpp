// AVX-512 prefill tiles (GemmTileFn) of the K-quants Q2_K..Q6_K against Q8_K activations.
//
// Same layout as gemm_q_avx512.cpp: 16 weight rows in the 16 int32 lanes, a super-block's
// quants unpacked once per row group into 64 registers' worth of interleaved unsigned bytes
// (chunk k, lane r = elements 4k..4k+3 of row r) and reused for every column, with the
// column's activation bytes broadcast from memory into vpdpbusd. Per sub-block the int32 sum
// is multiplied by the rows' integer scales (vpmulld) and accumulated in int32 for the whole
// super-block. The parts that depend on a group's activation sum only (Q2_K/Q4_K/Q5_K mins,
// Q3_K/Q6_K constant offsets) use vpdpwssd of per-row int16 pairs with the activation's bsums,
// read straight from the Q8_K block, so K-quants need no activation preprocessing.
#include "kernels/simd_avx512.h"
#include "quant/x16_layout.h"

namespace edgeinfer {

namespace {

using namespace avx512;

constexpr int kRows = 16;
constexpr int kPanel = 64;
constexpr int kMaxCols = 6;

// One row group's super-block.
struct KPack {
  __m512i q[64];      // q[k] lane r: unsigned quants of elements 4k..4k+3, row r
  __m512i sc[16];     // lane r: integer scale of sub-block j (8 of 32 or 16 of 16 elements)
  __m512i pairs[8];   // lane r: int16 pair multiplying bsums[2t], bsums[2t + 1]
  __m512 d, dmin;     // lane r: super-block scales (dmin: of the pairs term, if any)
};

// 16 rows x 16 bytes at rows[r] + off -> t[d] lane r = dword d of row r (see gemm_q_avx512.cpp).
inline void transpose16x4(const uint8_t* const* rows, size_t off, __m512i t[4]) {
  __m512i z[4];
  for (int g = 0; g < 4; ++g) {
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[g] + off)));
    v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[g + 4] + off)), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[g + 8] + off)), 2);
    z[g] = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[g + 12] + off)), 3);
  }
  const __m512i a0 = _mm512_unpacklo_epi32(z[0], z[1]), a1 = _mm512_unpackhi_epi32(z[0], z[1]);
  const __m512i a2 = _mm512_unpacklo_epi32(z[2], z[3]), a3 = _mm512_unpackhi_epi32(z[2], z[3]);
  t[0] = _mm512_unpacklo_epi64(a0, a2);
  t[1] = _mm512_unpackhi_epi64(a0, a2);
  t[2] = _mm512_unpacklo_epi64(a1, a3);
  t[3] = _mm512_unpackhi_epi64(a1, a3);
}

// Transposes `bytes` (a multiple of 16) at rows[r] + off: out[i] lane r = dword i of row r.
inline void transpose_rows(const uint8_t* const* rows, size_t off, int bytes, __m512i* out) {
  for (int p = 0; p < bytes / 16; ++p) transpose16x4(rows, off + 16 * static_cast<size_t>(p), out + 4 * p);
}

inline __m512 f16_lo(__m512i v) { return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(v)); }
inline __m512 f16_hi(__m512i v) { return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(v, 16))); }

inline __m512 gather_f16(const uint8_t* const* rows, size_t off) {
  alignas(32) uint16_t h[kRows];
  for (int r = 0; r < kRows; ++r) std::memcpy(&h[r], rows[r] + off, 2);
  return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(h)));
}

inline __m512i byte_u(__m512i v, int i) { return _mm512_and_si512(_mm512_srli_epi32(v, 8 * i), _mm512_set1_epi32(0xff)); }
inline __m512i byte_s(__m512i v, int i) { return _mm512_srai_epi32(_mm512_slli_epi32(v, 24 - 8 * i), 24); }
// int16 pair (lo, hi) per lane from two int32 lanes in int16 range.
inline __m512i pair16(__m512i lo, __m512i hi) {
  return _mm512_or_si512(_mm512_and_si512(lo, _mm512_set1_epi32(0xffff)), _mm512_slli_epi32(hi, 16));
}
// Logical dword shift by a signed count (left when positive).
inline __m512i shift32(__m512i v, int count) {
  return count >= 0 ? _mm512_sll_epi32(v, _mm_cvtsi32_si128(count)) : _mm512_srl_epi32(v, _mm_cvtsi32_si128(-count));
}

// Q4_K/Q5_K scales and mins from the 12 packed bytes as dwords a0, a1, a2 (see dot_k_avx512.cpp).
// The 6-bit scales and mins of 16 rows' Q4_K/Q5_K blocks as bytes, from the three dword
// vectors of their 12 scale bytes: sc_lo/mn_lo byte i of a row's dword = sub-block i,
// sc_hi/mn_hi byte i = sub-block 4 + i.
struct K4ScaleBytes {
  __m512i sc_lo, sc_hi, mn_lo, mn_hi;
};
inline K4ScaleBytes k4_scale_bytes(__m512i a0, __m512i a1, __m512i a2) {
  const __m512i m6 = _mm512_set1_epi32(0x3f3f3f3f), m4 = _mm512_set1_epi32(0x0f0f0f0f), m2 = _mm512_set1_epi32(0x03030303);
  return {_mm512_and_si512(a0, m6),
          _mm512_or_si512(_mm512_and_si512(a2, m4), _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(a0, 6), m2), 4)),
          _mm512_and_si512(a1, m6),
          _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(a2, 4), m4),
                          _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(a1, 6), m2), 4))};
}

inline void k4_scales(KPack& p, __m512i a0, __m512i a1, __m512i a2) {
  const K4ScaleBytes s = k4_scale_bytes(a0, a1, a2);
  for (int j = 0; j < 8; ++j) {
    p.sc[j] = byte_u(j < 4 ? s.sc_lo : s.sc_hi, j % 4);
    const __m512i m = byte_u(j < 4 ? s.mn_lo : s.mn_hi, j % 4);
    p.pairs[j] = pair16(m, m);  // sub-block j covers bsums 2j and 2j + 1
  }
}

// Q4_K/Q5_K nibbles: qs dwords (32 per row) -> q[], sub-block 2c from the low nibbles of qs
// bytes [32c, 32c + 32), sub-block 2c + 1 from their high nibbles.
inline void k4_nibbles(KPack& p, const __m512i* qs) {
  const __m512i lo4 = _mm512_set1_epi8(0x0F);
  for (int c = 0; c < 4; ++c) {
    for (int k = 0; k < 8; ++k) {
      const __m512i v = qs[8 * c + k];
      p.q[16 * c + k] = _mm512_and_si512(v, lo4);
      p.q[16 * c + 8 + k] = _mm512_and_si512(_mm512_srli_epi16(v, 4), lo4);
    }
  }
}

struct FmtQ4_K {
  using Block = BlockQ4_K;
  static constexpr int kGroups = 8;  // scales per super-block
  static constexpr bool kMins = true;
  static void unpack(const uint8_t* const* rows, size_t base, KPack& p) {
    __m512i head[4], qs[32];
    transpose16x4(rows, base, head);  // d|dmin, scale bytes 0-3, 4-7, 8-11
    transpose_rows(rows, base + offsetof(Block, qs), 128, qs);
    build(head, qs, p);
  }
  // The x16 layout (quant/x16_layout.h): the block's 36 dwords are the transposed vectors.
  static constexpr size_t kX16Bytes = kX16Q4KBytes;
  static constexpr size_t kQs = 4 * 64;  // the qs vectors, after d|dmin and the scales
  static void unpack_x16(const uint8_t* sb, KPack& p) {
    __m512i head[4], qs[32];
    for (int j = 0; j < 4; ++j) head[j] = _mm512_loadu_si512(sb + 64 * j);
    for (int j = 0; j < 32; ++j) qs[j] = _mm512_loadu_si512(sb + kQs + 64 * j);
    build(head, qs, p);
  }
  static void build(const __m512i* head, const __m512i* qs, KPack& p) {
    p.d = f16_lo(head[0]);
    p.dmin = f16_hi(head[0]);
    k4_scales(p, head[1], head[2], head[3]);
    k4_nibbles(p, qs);
  }
};

struct FmtQ5_K {
  using Block = BlockQ5_K;
  static constexpr int kGroups = 8;
  static constexpr bool kMins = true;
  static void unpack(const uint8_t* const* rows, size_t base, KPack& p) {
    __m512i head[4], qs[32], qh[8];
    transpose16x4(rows, base, head);
    p.d = f16_lo(head[0]);
    p.dmin = f16_hi(head[0]);
    k4_scales(p, head[1], head[2], head[3]);
    transpose_rows(rows, base + offsetof(Block, qs), 128, qs);
    k4_nibbles(p, qs);
    // Fifth bit of element 32 s + k: bit s of qh[k]. Chunk k' of sub-block s covers qh bytes
    // 4k'..4k'+3 = qh dword k'; move bit s of each byte to bit 4.
    transpose_rows(rows, base + offsetof(Block, qh), 32, qh);
    const __m512i bit4 = _mm512_set1_epi8(0x10);
    for (int s = 0; s < 8; ++s) {
      for (int k = 0; k < 8; ++k) {
        p.q[8 * s + k] = _mm512_or_si512(p.q[8 * s + k], _mm512_and_si512(shift32(qh[k], 4 - s), bit4));
      }
    }
  }
};

struct FmtQ6_K {
  using Block = BlockQ6_K;
  static constexpr int kGroups = 16;
  static constexpr bool kMins = false;
  static void unpack(const uint8_t* const* rows, size_t base, KPack& p) {
    __m512i ql[32], qh[16], sc[4];
    transpose_rows(rows, base + offsetof(Block, ql), 128, ql);
    transpose_rows(rows, base + offsetof(Block, qh), 64, qh);
    transpose16x4(rows, base + offsetof(Block, scales), sc);
    build(ql, qh, sc, gather_f16(rows, base + offsetof(Block, d)), p);
  }
  // The x16 layout (quant/x16_layout.h): the super-block's fields are the transposed vectors.
  static constexpr size_t kX16Bytes = kX16Q6KBytes;
  static void unpack_x16(const uint8_t* sb, KPack& p) {
    __m512i ql[32], qh[16], sc[4];
    for (int j = 0; j < 32; ++j) ql[j] = _mm512_loadu_si512(sb + 64 * j);
    for (int j = 0; j < 16; ++j) qh[j] = _mm512_loadu_si512(sb + kQh + 64 * j);
    for (int j = 0; j < 4; ++j) sc[j] = _mm512_loadu_si512(sb + kSc + 64 * j);
    build(ql, qh, sc, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(sb + kD))), p);
  }
  static constexpr size_t kQh = 32 * 64, kSc = kQh + 16 * 64, kD = kSc + 4 * 64;
  static_assert(kD + 64 == kX16Q6KBytes);
  // Element 128h + 32q + l (l < 32) has its low 4 bits in ql byte 64h + l + 32(q & 1) (the high
  // nibble when q >= 2) and its high 2 bits in bits 2q..2q+1 of qh byte 32h + l. So for one
  // dword position l4 = l / 4, the ql vectors a = ql[16h + l4], b = ql[16h + 8 + l4] and the qh
  // vector hb = qh[8h + l4] (transposed: lane r = row r) give the chunks (4 elements, unsigned:
  // stored + 32) of all four quarters q at once: out[q] = chunk 32h + 8q + l4.
  static void chunks4(__m512i a, __m512i b, __m512i hb, __m512i out[4]) {
    const __m512i lo4 = _mm512_set1_epi8(0x0F), hi2 = _mm512_set1_epi8(0x30);
    out[0] = _mm512_or_si512(_mm512_and_si512(a, lo4), _mm512_and_si512(_mm512_slli_epi16(hb, 4), hi2));
    out[1] = _mm512_or_si512(_mm512_and_si512(b, lo4), _mm512_and_si512(_mm512_slli_epi16(hb, 2), hi2));
    out[2] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(a, 4), lo4), _mm512_and_si512(hb, hi2));
    out[3] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(b, 4), lo4), _mm512_and_si512(_mm512_srli_epi16(hb, 2), hi2));
  }
  static void build(const __m512i* ql, const __m512i* qh, const __m512i* sc, __m512 d, KPack& p) {
    p.d = d;
#pragma GCC unroll 16
    for (int j = 0; j < 16; ++j) {
      const int h = j / 8, l4 = j % 8;
      __m512i c[4];
      chunks4(_mm512_loadu_si512(ql + 16 * h + l4), _mm512_loadu_si512(ql + 16 * h + 8 + l4), _mm512_loadu_si512(qh + 8 * h + l4), c);
      for (int q = 0; q < 4; ++q) p.q[32 * h + 8 * q + l4] = c[q];
    }
    for (int g = 0; g < 16; ++g) p.sc[g] = byte_s(sc[g / 4], g % 4);
    // The -32 offset: -32 * (sc[2t] * bsums[2t] + sc[2t+1] * bsums[2t+1]).
    const __m512i m32 = _mm512_set1_epi32(-32);
    for (int t = 0; t < 8; ++t) p.pairs[t] = pair16(_mm512_mullo_epi32(p.sc[2 * t], m32), _mm512_mullo_epi32(p.sc[2 * t + 1], m32));
  }
};

struct FmtQ3_K {
  using Block = BlockQ3_K;
  static constexpr int kGroups = 16;
  static constexpr bool kMins = false;
  static void unpack(const uint8_t* const* rows, size_t base, KPack& p) {
    __m512i hm[8], qs[16], sc3[4];
    transpose_rows(rows, base + offsetof(Block, hmask), 32, hm);
    transpose_rows(rows, base + offsetof(Block, qs), 64, qs);
    p.d = gather_f16(rows, base + offsetof(Block, d));
    const __m512i three = _mm512_set1_epi8(3), four = _mm512_set1_epi8(4);
    // Element 128h + 32j + l: bits 2j..2j+1 of qs[32h + l], high bit = bit 4h + j of hmask[l].
    for (int k = 0; k < 64; ++k) {
      const int h = k / 32, j = (k % 32) / 8, l = 4 * (k % 8);
      const __m512i lo = _mm512_and_si512(shift32(qs[(32 * h + l) / 4], -2 * j), three);
      const __m512i hb = _mm512_and_si512(shift32(hm[l / 4], 2 - (4 * h + j)), four);
      p.q[k] = _mm512_or_si512(lo, hb);
    }
    // The 12 packed scale bytes, read as the last 12 of a 16-byte load that stays inside the
    // block (its first dword is the end of qs).
    transpose16x4(rows, base + offsetof(Block, scales) - 4, sc3);
    const __m512i m4 = _mm512_set1_epi32(0x0f0f0f0f), m2 = _mm512_set1_epi32(0x03030303);
    const __m512i a0 = sc3[1], a1 = sc3[2], a2 = sc3[3];
    const __m512i s[4] = {
        _mm512_or_si512(_mm512_and_si512(a0, m4), _mm512_slli_epi32(_mm512_and_si512(a2, m2), 4)),
        _mm512_or_si512(_mm512_and_si512(a1, m4), _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(a2, 2), m2), 4)),
        _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(a0, 4), m4), _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(a2, 4), m2), 4)),
        _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(a1, 4), m4), _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(a2, 6), m2), 4))};
    const __m512i m32 = _mm512_set1_epi32(32), mneg4 = _mm512_set1_epi32(-4);
    for (int g = 0; g < 16; ++g) p.sc[g] = _mm512_sub_epi32(byte_u(s[g / 4], g % 4), m32);
    // Quants are stored + 4: -4 * (sc[2t] * bsums[2t] + sc[2t+1] * bsums[2t+1]).
    for (int t = 0; t < 8; ++t) p.pairs[t] = pair16(_mm512_mullo_epi32(p.sc[2 * t], mneg4), _mm512_mullo_epi32(p.sc[2 * t + 1], mneg4));
  }
};

struct FmtQ2_K {
  using Block = BlockQ2_K;
  static constexpr int kGroups = 16;
  static constexpr bool kMins = true;
  static void unpack(const uint8_t* const* rows, size_t base, KPack& p) {
    __m512i qs[16], sc[4];
    transpose_rows(rows, base + offsetof(Block, qs), 64, qs);
    transpose16x4(rows, base + offsetof(Block, scales), sc);
    p.d = gather_f16(rows, base + offsetof(Block, d));
    p.dmin = gather_f16(rows, base + offsetof(Block, dmin));
    const __m512i three = _mm512_set1_epi8(3);
    for (int k = 0; k < 64; ++k) {
      const int h = k / 32, j = (k % 32) / 8, l = 4 * (k % 8);
      p.q[k] = _mm512_and_si512(shift32(qs[(32 * h + l) / 4], -2 * j), three);
    }
    // Byte g of the scales: scale in the low nibble, min in the high nibble.
    const __m512i m4 = _mm512_set1_epi32(0x0f0f0f0f);
    __m512i mins[16];
    for (int g = 0; g < 16; ++g) {
      p.sc[g] = byte_u(_mm512_and_si512(sc[g / 4], m4), g % 4);
      mins[g] = byte_u(_mm512_and_si512(_mm512_srli_epi32(sc[g / 4], 4), m4), g % 4);
    }
    for (int t = 0; t < 8; ++t) p.pairs[t] = pair16(mins[2 * t], mins[2 * t + 1]);
  }
};

// y[c][r0 + r] (+)= this super-block's dots for NC columns (x points at their blocks `sb`).
template <class Fmt, int NC>
void micro_kernel(const KPack& p, const BlockQ8_K* const* xc, float* y, size_t y_stride, __mmask16 rmask, bool first) {
  constexpr int kChunks = 64 / Fmt::kGroups;  // 4-element chunks per scale group
  __m512i isum[NC];
  for (int c = 0; c < NC; ++c) isum[c] = _mm512_setzero_si512();
  for (int g = 0; g < Fmt::kGroups; ++g) {
    __m512i q[kChunks];
    for (int k = 0; k < kChunks; ++k) q[k] = p.q[kChunks * g + k];
    const __m512i s = p.sc[g];
    for (int c = 0; c < NC; ++c) {
      const int8_t* qa = xc[c]->qs + 4 * kChunks * g;
      __m512i t = dpbusd_bcast(_mm512_setzero_si512(), q[0], qa);
      for (int k = 1; k < kChunks; ++k) t = dpbusd_bcast(t, q[k], qa + 4 * k);
      isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(t, s));
    }
  }
  for (int c = 0; c < NC; ++c) {
    __m512i pt = _mm512_setzero_si512();
    for (int t = 0; t < 8; ++t) pt = dpwssd_bcast(pt, p.pairs[t], xc[c]->bsums + 2 * t);
    float* yc = y + static_cast<size_t>(c) * y_stride;
    __m512 acc = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(rmask, yc);
    const __m512 da = _mm512_set1_ps(xc[c]->d);
    if constexpr (Fmt::kMins) {
      acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[c]), _mm512_mul_ps(p.d, da), acc);
      acc = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(pt), _mm512_mul_ps(p.dmin, da), acc);
    } else {
      acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(isum[c], pt)), _mm512_mul_ps(p.d, da), acc);
    }
    _mm512_mask_storeu_ps(yc, rmask, acc);
  }
}

template <class Fmt, int NC>
void micro_dispatch(int nc, const KPack& p, const BlockQ8_K* const* xc, float* y, size_t y_stride, __mmask16 rmask,
                    bool first) {
  if constexpr (NC > 0) {
    if (nc == NC) return micro_kernel<Fmt, NC>(p, xc, y, y_stride, rmask, first);
    return micro_dispatch<Fmt, NC - 1>(nc, p, xc, y, y_stride, rmask, first);
  }
}

// Where a tile's super-blocks come from. RowSource: GGUF rows `stride` bytes apart.
// X16Source: a matrix in the x16 layout (Fmt::unpack_x16 reads one super-block of a group of
// Fmt::kX16Bytes), `stride` = group bytes.
template <class Fmt>
struct RowSource {
  const uint8_t* wb;
  size_t stride;
  struct Group {
    const uint8_t* rows[kRows];
  };
  Group group(int64_t r0, int nr) const {
    Group g;
    for (int r = 0; r < kRows; ++r) g.rows[r] = wb + static_cast<size_t>(r0 + (r < nr ? r : nr - 1)) * stride;
    return g;
  }
  void unpack(const Group& g, int64_t sb, KPack& p) const {
    Fmt::unpack(g.rows, static_cast<size_t>(sb) * sizeof(typename Fmt::Block), p);
  }
};

// How far ahead of the super-block being unpacked the x16 sources request the stream (bytes;
// as the 32-wide types' x16 kernels, into L2).
constexpr size_t kX16PrefetchAhead = 4096;

// Super-block sb of an x16 group of kBytes-long super-blocks, with the stream that far ahead
// of it requested, one request per kStep bytes. kUnrolled: the prefetches written out
// (q4_k_gemv_x16 from L2: ~8% faster; the tile and q6_k_gemv_x16: slower, so they keep the
// loop). kStep 128 (every other line; the L2's adjacent-line prefetch brings the pair's other
// half): on Zen 4, q4_k_gemv_x16 5632x2048 from DRAM on 1 thread 250-270 us against 324-359 with
// a request per line; q6_k_gemv_x16 did not gain (433-498 vs 437-450 us), so it keeps 64. On
// Intel (Xeon, model 207) a request per line streams faster, so its table takes that variant:
// the same benchmark 569 us against 619 (medians of 10, interleaved), and tiny1b Q4_K_M tg128 on
// 2 threads 79.9/87.2/87.0% of the probed read bandwidth against 80.2/79.1/83.9 (alternating).
template <size_t kBytes, bool kUnrolled = false, size_t kStep = 64>
inline const uint8_t* x16_superblock(const uint8_t* group, int64_t sb) {
  const uint8_t* at = group + static_cast<size_t>(sb) * kBytes;
  if constexpr (kUnrolled) {
#pragma GCC unroll 64
    for (size_t o = 0; o < kBytes; o += kStep) _mm_prefetch(reinterpret_cast<const char*>(at) + kX16PrefetchAhead + o, _MM_HINT_T2);
  } else {
    for (size_t o = 0; o < kBytes; o += kStep) _mm_prefetch(reinterpret_cast<const char*>(at) + kX16PrefetchAhead + o, _MM_HINT_T2);
  }
  return at;
}

template <class Fmt>
struct X16Source {
  const uint8_t* wb;
  size_t stride;
  struct Group {
    const uint8_t* p;
  };
  Group group(int64_t r0, int) const { return {wb + static_cast<size_t>(r0 / kRows) * stride}; }
  void unpack(const Group& g, int64_t sb, KPack& p) const { Fmt::unpack_x16(x16_superblock<Fmt::kX16Bytes>(g.p, sb), p); }
};

template <class Fmt, class Src>
void gemm_tile(const Src& src, int64_t n, int64_t n_rows, int64_t n_cols, const void* x, size_t x_stride, float* y,
               size_t y_stride) {
  const int64_t nb = n / kQK_K;
  const uint8_t* xb = static_cast<const uint8_t*>(x);
  alignas(64) KPack pack;
  // Row group outer, super-blocks inner: the group's outputs for the panel (16 x 64 floats)
  // stay in L1 while K is walked; the panel's activations come from L2.
  for (int64_t p0 = 0; p0 < n_cols; p0 += kPanel) {
    const int np = static_cast<int>(n_cols - p0 < kPanel ? n_cols - p0 : kPanel);
    for (int64_t r0 = 0; r0 < n_rows; r0 += kRows) {
      const int nr = static_cast<int>(n_rows - r0 < kRows ? n_rows - r0 : kRows);
      const typename Src::Group g = src.group(r0, nr);
      const __mmask16 rmask = static_cast<__mmask16>((1u << nr) - 1);
      for (int64_t sb = 0; sb < nb; ++sb) {
        src.unpack(g, sb, pack);
        for (int c0 = 0; c0 < np; c0 += kMaxCols) {
          const int nc = np - c0 < kMaxCols ? np - c0 : kMaxCols;
          const BlockQ8_K* xc[kMaxCols];
          for (int c = 0; c < nc; ++c) {
            xc[c] = reinterpret_cast<const BlockQ8_K*>(xb + static_cast<size_t>(p0 + c0 + c) * x_stride) + sb;
          }
          micro_dispatch<Fmt, kMaxCols>(nc, pack, xc, y + static_cast<size_t>(p0 + c0) * y_stride + r0, y_stride,
                                        rmask, sb == 0);
        }
      }
    }
  }
}

template <class Fmt>
void gemm_tile_rows(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                    size_t x_stride, float* y, size_t y_stride) {
  gemm_tile<Fmt>(RowSource<Fmt>{static_cast<const uint8_t*>(w), w_stride}, n, n_rows, n_cols, x, x_stride, y, y_stride);
}

// One column over a Q6_K x16 matrix, straight from the loaded vectors: per scale group, its 4
// chunks dotted with the activation (vpdpbusd from -32 * bsum, which takes the +32 of the
// stored quants off), times the group's scales, summed over the super-block in int32, then one
// FMA by d * da. The integer sum equals micro_kernel's isum + pt exactly (integer arithmetic,
// wrapping), and the FMA is the same, so every row has the tile's bits. The four quarters q of
// a half (h, l4 < 4 or >= 4) come from the same three loads (chunks4): four independent
// vpdpbusd chains, one per group 8h + 2q + half.
void q6_k_gemv_x16(int64_t n, int64_t n_rows, const uint8_t* w, size_t group_bytes, const BlockQ8_K* x, float* y) {
  const int64_t nb = n / kQK_K;
  for (int64_t r0 = 0; r0 < n_rows; r0 += kRows) {
    const int nr = static_cast<int>(n_rows - r0 < kRows ? n_rows - r0 : kRows);
    const uint8_t* g = w + static_cast<size_t>(r0 / kRows) * group_bytes;
    __m512 acc = _mm512_setzero_ps();
    for (int64_t sb = 0; sb < nb; ++sb) {
      const uint8_t* at = x16_superblock<kX16Q6KBytes>(g, sb);
      const auto* ql = reinterpret_cast<const __m512i*>(at);
      const auto* qh = reinterpret_cast<const __m512i*>(at + FmtQ6_K::kQh);
      const BlockQ8_K& b = x[sb];
      __m512i sc4[4];
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v) sc4[v] = _mm512_loadu_si512(at + FmtQ6_K::kSc + 64 * v);
      __m512i isum = _mm512_setzero_si512();
#pragma GCC unroll 4
      for (int hh = 0; hh < 4; ++hh) {
        const int h = hh / 2, half = hh % 2;
        __m512i t[4];
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) t[q] = _mm512_set1_epi32(-32 * static_cast<int32_t>(b.bsums[8 * h + 2 * q + half]));
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) {
          const int l4 = 4 * half + j;
          __m512i c[4];
          FmtQ6_K::chunks4(_mm512_loadu_si512(ql + 16 * h + l4), _mm512_loadu_si512(ql + 16 * h + 8 + l4),
                           _mm512_loadu_si512(qh + 8 * h + l4), c);
#pragma GCC unroll 4
          for (int q = 0; q < 4; ++q) {
            t[q] = dpbusd_bcast(t[q], c[q], b.qs + 4 * (32 * h + 8 * q + l4));
          }
        }
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) {
          const int grp = 8 * h + 2 * q + half;
          isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(t[q], byte_s(sc4[grp / 4], grp % 4)));
        }
      }
      const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + FmtQ6_K::kD)));
      acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(d, _mm512_set1_ps(b.d)), acc);
    }
    _mm512_mask_storeu_ps(y + r0, static_cast<__mmask16>((1u << nr) - 1), acc);
  }
}

// One column over a Q4_K x16 matrix, straight from the loaded vectors. The integer sums are
// micro_kernel<FmtQ4_K, 1>'s, computed in another order and form (exact: every partial sum
// below stays far inside int32, so the order of the additions does not matter):
//   isum = sum over sub-blocks g of sc[g] * (g's 8 chunks dotted with the activation). qs
//     vector 8c + k holds chunk k of sub-block 2c in its low nibbles and of 2c + 1 in its high
//     nibbles: eight independent vpdpbusd chains per super-block. The high nibbles are dotted
//     in place (q & 0xF0 = 16 q', one AND instead of a shift and an AND per vector): those
//     chains and their scaled sum hi16 are 16 times the true ones (|hi16| <= 16 * 4 sub-blocks
//     * 63 * 32 * 15 * 128 < 2^28) and one arithmetic shift takes the 16 off exactly;
//   pt = sum over g of min[g] * (bsums[2g] + bsums[2g + 1]), as 4 vpdpwssd of int16 pairs of
//     mins (g, g + 2) against the activation's pair sums (the tile: 8 of (min, min) pairs
//     against (bsums[2g], bsums[2g + 1])).
// Then the tile's two float steps in its order: fma by d * da, fnmadd by dmin * da, so every
// row has the tile's bits. kStep: one request per kStep bytes of the stream ahead (x16_superblock;
// 128, every other line, unless a maker's table asks for another).
template <size_t kStep = 128>
void q4_k_gemv_x16(int64_t n, int64_t n_rows, const uint8_t* w, size_t group_bytes, const BlockQ8_K* x, float* y) {
  const int64_t nb = n / kQK_K;
  const __m512i lo4 = _mm512_set1_epi8(0x0F), hi4 = _mm512_set1_epi8(static_cast<char>(0xF0)),
                even16 = _mm512_set1_epi32(0x00ff00ff);
  // vpshufb controls that zero-extend byte i of every dword (a scale byte) to the dword.
  __m512i byte_of[4];
  for (int i = 0; i < 4; ++i) {
    const int z = static_cast<int>(0x80808000u);
    byte_of[i] = _mm512_set4_epi32(z | (12 + i), z | (8 + i), z | (4 + i), z | i);
  }
  // Words of the activation's pair sums B[g] = bsums[2g] + bsums[2g + 1] (after _mm_hadd_epi16:
  // B0..B7) reordered to dwords (B0, B2), (B1, B3), (B4, B6), (B5, B7), the pairs the mins'
  // even and odd bytes meet.
  const __m128i pair_order = _mm_setr_epi8(0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15);
  for (int64_t r0 = 0; r0 < n_rows; r0 += kRows) {
    const int nr = static_cast<int>(n_rows - r0 < kRows ? n_rows - r0 : kRows);
    const uint8_t* g = w + static_cast<size_t>(r0 / kRows) * group_bytes;
    __m512 acc = _mm512_setzero_ps();
    for (int64_t sb = 0; sb < nb; ++sb) {
      const uint8_t* at = x16_superblock<kX16Q4KBytes, true, kStep>(g, sb);
      const BlockQ8_K& b = x[sb];
      const __m512i h0 = _mm512_loadu_si512(at);
      const auto [sc_lo, sc_hi, mn_lo, mn_hi] =
          k4_scale_bytes(_mm512_loadu_si512(at + 64), _mm512_loadu_si512(at + 128), _mm512_loadu_si512(at + 192));
      const auto* qs = reinterpret_cast<const __m512i*>(at + FmtQ4_K::kQs);
      __m512i lo = _mm512_setzero_si512(), hi16 = _mm512_setzero_si512();
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) {
        const int8_t* qa = b.qs + 64 * c;
        __m512i tl = _mm512_setzero_si512(), th = _mm512_setzero_si512();
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) {
          const __m512i v = _mm512_loadu_si512(qs + 8 * c + k);
          tl = dpbusd_bcast(tl, _mm512_and_si512(v, lo4), qa + 4 * k);
          th = dpbusd_bcast(th, _mm512_and_si512(v, hi4), qa + 32 + 4 * k);
        }
        const __m512i sv = c < 2 ? sc_lo : sc_hi;
        lo = _mm512_add_epi32(lo, _mm512_mullo_epi32(tl, _mm512_shuffle_epi8(sv, byte_of[(2 * c) % 4])));
        hi16 = _mm512_add_epi32(hi16, _mm512_mullo_epi32(th, _mm512_shuffle_epi8(sv, byte_of[(2 * c + 1) % 4])));
      }
      const __m512i isum = _mm512_add_epi32(lo, _mm512_srai_epi32(hi16, 4));
      const __m128i bp = _mm_shuffle_epi8(
          _mm_hadd_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.bsums)),
                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.bsums + 8))),
          pair_order);
      const __m512i bpv = _mm512_broadcast_i32x4(bp);
      __m512i pt = _mm512_dpwssd_epi32(_mm512_setzero_si512(), _mm512_and_si512(mn_lo, even16), _mm512_shuffle_epi32(bpv, _MM_PERM_AAAA));
      pt = _mm512_dpwssd_epi32(pt, _mm512_srli_epi16(mn_lo, 8), _mm512_shuffle_epi32(bpv, _MM_PERM_BBBB));
      pt = _mm512_dpwssd_epi32(pt, _mm512_and_si512(mn_hi, even16), _mm512_shuffle_epi32(bpv, _MM_PERM_CCCC));
      pt = _mm512_dpwssd_epi32(pt, _mm512_srli_epi16(mn_hi, 8), _mm512_shuffle_epi32(bpv, _MM_PERM_DDDD));
      const __m512 da = _mm512_set1_ps(b.d);
      acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(f16_lo(h0), da), acc);
      acc = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(pt), _mm512_mul_ps(f16_hi(h0), da), acc);
    }
    _mm512_mask_storeu_ps(y + r0, static_cast<__mmask16>((1u << nr) - 1), acc);
  }
}

}  // namespace

#define EDGEINFER_K_TILE(name, Fmt)                                                                         \
  void name(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,        \
            size_t x_stride, float* y, size_t y_stride) {                                                    \
    gemm_tile_rows<Fmt>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);                           \
  }
EDGEINFER_K_TILE(q2_k_gemm_tile_avx512, FmtQ2_K)
EDGEINFER_K_TILE(q3_k_gemm_tile_avx512, FmtQ3_K)
EDGEINFER_K_TILE(q4_k_gemm_tile_avx512, FmtQ4_K)
EDGEINFER_K_TILE(q5_k_gemm_tile_avx512, FmtQ5_K)
EDGEINFER_K_TILE(q6_k_gemm_tile_avx512, FmtQ6_K)
#undef EDGEINFER_K_TILE

// The x16 entries (simd_avx512.h): the tile through X16Source, the one-column GEMV.
#define EDGEINFER_K_X16(prefix, Fmt)                                                                             \
  void prefix##_gemm_tile_x16_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, \
                                     const void* x, size_t x_stride, float* y, size_t y_stride) {                \
    gemm_tile<Fmt>(X16Source<Fmt>{static_cast<const uint8_t*>(w), w_stride}, n, n_rows, n_cols, x, x_stride, y,  \
                   y_stride);                                                                                    \
  }                                                                                                              \
  void prefix##_gemv_x16_avx512(int64_t n, int64_t n_rows, const void* w, size_t w_stride, const void* x,        \
                                float* y) {                                                                      \
    prefix##_gemv_x16(n, n_rows, static_cast<const uint8_t*>(w), w_stride, static_cast<const BlockQ8_K*>(x), y); \
  }
EDGEINFER_K_X16(q6_k, FmtQ6_K)
EDGEINFER_K_X16(q4_k, FmtQ4_K)
#undef EDGEINFER_K_X16

// Intel's Q4_K GEMV: a request per line (x16_superblock's figures).
void q4_k_gemv_x16_line_avx512(int64_t n, int64_t n_rows, const void* w, size_t w_stride, const void* x, float* y) {
  q4_k_gemv_x16<64>(n, n_rows, static_cast<const uint8_t*>(w), w_stride, static_cast<const BlockQ8_K*>(x), y);
}

}  // namespace edgeinfer
