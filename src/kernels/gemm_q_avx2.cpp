// AVX2 prefill tiles (GemmTileFn) of the 32-wide quant types: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0.
//
// The layout of gemm_q_avx512.cpp on 256-bit registers: 8 weight rows in the 8 int32 lanes,
// each block's quants unpacked once per row group (register j, lane r = bytes of elements
// 4j..4j+3 of row r) and reused for every activation column, whose 4 bytes are broadcast.
// Without VNNI, vpmaddubsw gives int16 pairs: Q4_0/Q4_1 sum all 8 of a block's pair vectors in
// int16 (|sum| <= 8 * 2 * 15 * 128 < 2^15) and widen once, Q5_0/Q5_1 (quants up to 31) sum
// two halves of 4 (4 * 2 * 31 * 128 < 2^15) and widen twice; Q8_0 uses the sign trick
// (|w| * (a * sign w), |pair| <= 2 * 128 * 127) and widens every chunk. The weight offset of
// Q4_0 (8) and Q5_0 (16) enters as the accumulator's initial value, -offset * sum(a), computed
// once per column; the affine Q4_1/Q5_1 add m * s per block, s = da * sum(a) as stored in the
// Q8_1 activation block (the reference's split, dw * da * isum + m * s).
// The micro-kernel walks a block chunk by chunk with the chunk's weights in one register and
// the columns inner (one broadcast load per vpmaddubsw), each column's int16 sum a serial chain.
#include "kernels/simd_avx2.h"

namespace edgeinfer {

namespace {

using namespace avx2;

constexpr int kRows = 8;
constexpr int kChunkBlocks = 8;
constexpr int kPanel = 64;
constexpr int kMaxCols = 4;

struct WeightPack {
  __m256i q[kChunkBlocks][8];    // lane r: quants 4j..4j+3 of block b, row r (unsigned; Q8_0 |w|)
  __m256i sgn[kChunkBlocks][8];  // Q8_0: the signed quants (for their signs)
  __m256 d[kChunkBlocks];
  __m256 m[kChunkBlocks];  // Q4_1/Q5_1: the block's min
};

struct ActPack {
  alignas(32) int32_t init[kPanel][kChunkBlocks];
  alignas(32) float d[kPanel][kChunkBlocks];
  alignas(32) float s[kPanel][kChunkBlocks];  // Q8_1: da * sum(a) as stored
};

// Q4 nibbles of the 8 rows' block at off: low nibbles -> q[0..3], high nibbles -> q[4..7].
inline void unpack_nibbles8(const uint8_t* const* rows, size_t off, __m256i q[8]) {
  __m256i t[4];
  transpose8x4(rows, off, t);
  const __m256i lo4 = _mm256_set1_epi8(0x0F);
  for (int j = 0; j < 4; ++j) {
    q[j] = _mm256_and_si256(t[j], lo4);
    q[j + 4] = _mm256_and_si256(_mm256_srli_epi16(t[j], 4), lo4);
  }
}

// The Q5 fifth bits, the 8 rows' 32-bit qh at rows[r] + off: adds 16 to byte k of q[j] when bit
// 4j + k is set. Every byte of a dword takes byte j / 2 of that dword (vpshufb); byte k then
// tests bit 4 (j % 2) + k of it.
inline void add_fifth_bits(const uint8_t* const* rows, size_t off, __m256i q[8]) {
  alignas(32) uint32_t h[kRows];
  for (int r = 0; r < kRows; ++r) std::memcpy(&h[r], rows[r] + off, 4);
  const __m256i qh = _mm256_load_si256(reinterpret_cast<const __m256i*>(h));
  const __m256i sixteen = _mm256_set1_epi8(16);
  // Byte index of each dword's first byte within its 128-bit lane, repeated over the dword.
  const __m256i first = _mm256_setr_epi8(0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12, 0, 0, 0, 0, 4, 4, 4, 4, 8, 8,
                                         8, 8, 12, 12, 12, 12);
  for (int j = 0; j < 8; ++j) {
    const __m256i idx = _mm256_add_epi8(first, _mm256_set1_epi8(static_cast<char>(j / 2)));
    const __m256i bytes = _mm256_shuffle_epi8(qh, idx);
    const unsigned sh = 4u * static_cast<unsigned>(j % 2);
    const __m256i bit =
        _mm256_set1_epi32(static_cast<int>((1u << sh) | ((2u << sh) << 8) | ((4u << sh) << 16) | ((8u << sh) << 24)));
    const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit);
    q[j] = _mm256_or_si256(q[j], _mm256_and_si256(set, sixteen));
  }
}

// --- formats: kOffset, the constant taken off the unsigned quants (through the initial value
// of a block's sum); kSpan, how many chunks' vpmaddubsw pairs share an int16 sum
// (kSpan * 2 * u_max * 128 <= 32767); kSigned, the sign trick instead (one chunk per sum).

struct FmtQ4_0 {
  using Block = BlockQ4_0;
  using XBlock = BlockQ8_0;
  static constexpr int kOffset = 8;
  static constexpr int kSpan = 8;
  static constexpr bool kSigned = false;
  static constexpr bool kAffine = false;
  static void unpack(const uint8_t* const* rows, int64_t blk, WeightPack& p, int b) {
    const size_t base = static_cast<size_t>(blk) * sizeof(Block);
    unpack_nibbles8(rows, base + offsetof(Block, qs), p.q[b]);
    p.d[b] = gather_f16x8(rows, base + offsetof(Block, d));
  }
};

struct FmtQ4_1 {
  using Block = BlockQ4_1;
  using XBlock = BlockQ8_1;
  static constexpr int kOffset = 0;
  static constexpr int kSpan = 8;
  static constexpr bool kSigned = false;
  static constexpr bool kAffine = true;
  static void unpack(const uint8_t* const* rows, int64_t blk, WeightPack& p, int b) {
    const size_t base = static_cast<size_t>(blk) * sizeof(Block);
    unpack_nibbles8(rows, base + offsetof(Block, qs), p.q[b]);
    p.d[b] = gather_f16x8(rows, base + offsetof(Block, d));
    p.m[b] = gather_f16x8(rows, base + offsetof(Block, m));
  }
};

struct FmtQ5_0 {
  using Block = BlockQ5_0;
  using XBlock = BlockQ8_0;
  static constexpr int kOffset = 16;
  static constexpr int kSpan = 4;
  static constexpr bool kSigned = false;
  static constexpr bool kAffine = false;
  static void unpack(const uint8_t* const* rows, int64_t blk, WeightPack& p, int b) {
    const size_t base = static_cast<size_t>(blk) * sizeof(Block);
    unpack_nibbles8(rows, base + offsetof(Block, qs), p.q[b]);
    add_fifth_bits(rows, base + offsetof(Block, qh), p.q[b]);
    p.d[b] = gather_f16x8(rows, base + offsetof(Block, d));
  }
};

struct FmtQ5_1 {
  using Block = BlockQ5_1;
  using XBlock = BlockQ8_1;
  static constexpr int kOffset = 0;
  static constexpr int kSpan = 4;
  static constexpr bool kSigned = false;
  static constexpr bool kAffine = true;
  static void unpack(const uint8_t* const* rows, int64_t blk, WeightPack& p, int b) {
    const size_t base = static_cast<size_t>(blk) * sizeof(Block);
    unpack_nibbles8(rows, base + offsetof(Block, qs), p.q[b]);
    add_fifth_bits(rows, base + offsetof(Block, qh), p.q[b]);
    p.d[b] = gather_f16x8(rows, base + offsetof(Block, d));
    p.m[b] = gather_f16x8(rows, base + offsetof(Block, m));
  }
};

struct FmtQ8_0 {
  using Block = BlockQ8_0;
  using XBlock = BlockQ8_0;
  static constexpr int kOffset = 0;
  static constexpr int kSpan = 1;
  static constexpr bool kSigned = true;
  static constexpr bool kAffine = false;
  static void unpack(const uint8_t* const* rows, int64_t blk, WeightPack& p, int b) {
    const size_t base = static_cast<size_t>(blk) * sizeof(Block);
    __m256i t[4];
    for (int h = 0; h < 2; ++h) {
      transpose8x4(rows, base + offsetof(Block, qs) + 16 * static_cast<size_t>(h), t);
      for (int j = 0; j < 4; ++j) {
        p.sgn[b][4 * h + j] = t[j];
        p.q[b][4 * h + j] = _mm256_abs_epi8(t[j]);  // |-128| = 128 as unsigned
      }
    }
    p.d[b] = gather_f16x8(rows, base + offsetof(Block, d));
  }
};

template <class Fmt>
void prepare_activations(const uint8_t* x, size_t x_stride, int np, int64_t k0, int kb, ActPack& a) {
  const __m256i ones8 = _mm256_set1_epi8(1);
  const __m256i ones16 = _mm256_set1_epi16(1);
  for (int c = 0; c < np; ++c) {
    const auto* xb = reinterpret_cast<const typename Fmt::XBlock*>(x + static_cast<size_t>(c) * x_stride) + k0;
    for (int b = 0; b < kb; ++b) {
      a.d[c][b] = f16_to_f32(xb[b].d);
      if constexpr (Fmt::kAffine) a.s[c][b] = f16_to_f32(xb[b].s);
      if constexpr (Fmt::kOffset != 0) {
        const __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, loadu256(xb[b].qs)), ones16);
        a.init[c][b] = -Fmt::kOffset * hsum_i32(s);
      } else {
        a.init[c][b] = 0;
      }
    }
  }
}

inline __m256i bcast4(const int8_t* p) { return _mm256_set1_epi32(static_cast<int>(load_u32(p))); }

// y[c][r] (+)= the chunk's dots for NC columns starting at panel column c0. Per block: the
// exact int32 sum from the column's initial value, then one FMA by dw * da per column (and one
// by m * s for the affine types).
template <class Fmt, int NC>
void micro_kernel(const WeightPack& w, int kb, const ActPack& a, int c0, const uint8_t* x, size_t x_stride, int64_t k0,
                  float* y, size_t y_stride, int nr, bool first) {
  using XB = typename Fmt::XBlock;
  const XB* xc[NC];
  __m256 acc[NC];
  alignas(32) float tmp[kRows];
#pragma GCC unroll 8
  for (int c = 0; c < NC; ++c) {
    xc[c] = reinterpret_cast<const XB*>(x + static_cast<size_t>(c0 + c) * x_stride) + k0;
    if (first) {
      acc[c] = _mm256_setzero_ps();
    } else {
      const float* yc = y + static_cast<size_t>(c0 + c) * y_stride;
      for (int r = 0; r < kRows; ++r) tmp[r] = r < nr ? yc[r] : 0.0f;
      acc[c] = _mm256_load_ps(tmp);
    }
  }
  const __m256i ones = _mm256_set1_epi16(1);
  for (int b = 0; b < kb; ++b) {
    __m256i s[NC];
#pragma GCC unroll 8
    for (int c = 0; c < NC; ++c) s[c] = _mm256_set1_epi32(a.init[c0 + c][b]);
    if constexpr (Fmt::kSigned) {
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) {
        const __m256i q = w.q[b][j], sg = w.sgn[b][j];
#pragma GCC unroll 8
        for (int c = 0; c < NC; ++c) {
          const __m256i p = _mm256_maddubs_epi16(q, _mm256_sign_epi8(bcast4(xc[c][b].qs + 4 * j), sg));
          s[c] = _mm256_add_epi32(s[c], _mm256_madd_epi16(p, ones));
        }
      }
    } else {
#pragma GCC unroll 8
      for (int h = 0; h < 8 / Fmt::kSpan; ++h) {
        __m256i t[NC];
#pragma GCC unroll 8
        for (int k = 0; k < Fmt::kSpan; ++k) {
          const int j = Fmt::kSpan * h + k;
          const __m256i q = w.q[b][j];
#pragma GCC unroll 8
          for (int c = 0; c < NC; ++c) {
            const __m256i p = _mm256_maddubs_epi16(q, bcast4(xc[c][b].qs + 4 * j));
            t[c] = k == 0 ? p : _mm256_add_epi16(t[c], p);
            // Keeps the sum a serial chain: GCC otherwise reassociates the vpaddw into a tree
            // that holds every product of the span and spills (see gemm_k_avx2.cpp).
            __asm__("" : "+x"(t[c]));
          }
        }
#pragma GCC unroll 8
        for (int c = 0; c < NC; ++c) s[c] = _mm256_add_epi32(s[c], _mm256_madd_epi16(t[c], ones));
      }
    }
    const __m256 dw = w.d[b];
#pragma GCC unroll 8
    for (int c = 0; c < NC; ++c) {
      acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[c]), _mm256_mul_ps(dw, _mm256_set1_ps(a.d[c0 + c][b])), acc[c]);
      if constexpr (Fmt::kAffine) acc[c] = _mm256_fmadd_ps(w.m[b], _mm256_set1_ps(a.s[c0 + c][b]), acc[c]);
    }
  }
#pragma GCC unroll 8
  for (int c = 0; c < NC; ++c) {
    float* yc = y + static_cast<size_t>(c0 + c) * y_stride;
    if (nr == kRows) {
      _mm256_storeu_ps(yc, acc[c]);
    } else {
      _mm256_store_ps(tmp, acc[c]);
      for (int r = 0; r < nr; ++r) yc[r] = tmp[r];
    }
  }
}

template <class Fmt, int NC>
void micro_dispatch(int nc, const WeightPack& w, int kb, const ActPack& a, int c0, const uint8_t* x, size_t x_stride,
                    int64_t k0, float* y, size_t y_stride, int nr, bool first) {
  if constexpr (NC > 0) {
    if (nc == NC) return micro_kernel<Fmt, NC>(w, kb, a, c0, x, x_stride, k0, y, y_stride, nr, first);
    return micro_dispatch<Fmt, NC - 1>(nc, w, kb, a, c0, x, x_stride, k0, y, y_stride, nr, first);
  }
}

template <class Fmt>
void gemm_tile(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
               size_t x_stride, float* y, size_t y_stride) {
  const int64_t nb = n / kQK;
  const uint8_t* wb = static_cast<const uint8_t*>(w);
  const uint8_t* xb = static_cast<const uint8_t*>(x);
  alignas(32) WeightPack wp;
  alignas(32) ActPack ap;
  for (int64_t p0 = 0; p0 < n_cols; p0 += kPanel) {
    const int np = static_cast<int>(n_cols - p0 < kPanel ? n_cols - p0 : kPanel);
    const uint8_t* xp = xb + static_cast<size_t>(p0) * x_stride;
    float* yp = y + static_cast<size_t>(p0) * y_stride;
    for (int64_t k0 = 0; k0 < nb; k0 += kChunkBlocks) {
      const int kb = static_cast<int>(nb - k0 < kChunkBlocks ? nb - k0 : kChunkBlocks);
      prepare_activations<Fmt>(xp, x_stride, np, k0, kb, ap);
      for (int64_t r0 = 0; r0 < n_rows; r0 += kRows) {
        const int nr = static_cast<int>(n_rows - r0 < kRows ? n_rows - r0 : kRows);
        const uint8_t* rows[kRows];
        for (int r = 0; r < kRows; ++r) rows[r] = wb + static_cast<size_t>(r0 + (r < nr ? r : nr - 1)) * w_stride;
        for (int b = 0; b < kb; ++b) Fmt::unpack(rows, k0 + b, wp, b);
        for (int c0 = 0; c0 < np; c0 += kMaxCols) {
          const int nc = np - c0 < kMaxCols ? np - c0 : kMaxCols;
          micro_dispatch<Fmt, kMaxCols>(nc, wp, kb, ap, c0, xp, x_stride, k0, yp + r0, y_stride, nr, k0 == 0);
        }
      }
    }
  }
}

}  // namespace

void q4_0_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride) {
  gemm_tile<FmtQ4_0>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}

void q4_1_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride) {
  gemm_tile<FmtQ4_1>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}

void q5_0_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride) {
  gemm_tile<FmtQ5_0>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}

void q5_1_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride) {
  gemm_tile<FmtQ5_1>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}

void q8_0_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride) {
  gemm_tile<FmtQ8_0>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}

}  // namespace edgeinfer
