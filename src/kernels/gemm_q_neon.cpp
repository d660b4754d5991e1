// NEON prefill tiles (GemmTileFn) of the 32-wide quant types: Q4_0, Q5_0, Q8_0 against Q8_0
// activations, the affine Q4_1, Q5_1 against Q8_1.
//
// Micro-kernel: kRowBlock = 4 weight rows x NC <= kColBlock activation columns over all of K.
// For each 32-element block the 4 rows' quants are unpacked once into 8 int8 registers (signed,
// the type's offset taken off) and reused for every column of the micro-tile. Per (row, column)
// two SDOTs give the block's integer dot in 4 int32 lanes; per column, three pairwise adds fold
// the 4 rows' lanes into one vector with row r in lane r (exact: integers), which is converted
// and multiplied by d_w (the rows' scales, lane r) * d_x in one FMA into the column's float
// accumulator. Affine types add m_w * s_x with one more FMA per column.
//
// Cost per block and column, for 4 outputs: 2 activation loads, d_x's load and conversion,
// 4 x (zeroing + 2 SDOT), 3 ADDP, 1 convert, 1 multiply, 1 FMA (+ s_x's load, conversion and
// FMA when affine): ~22 instructions. The unpack (2-3 instructions per row for Q4/Q8, ~16 for
// Q5) and the rows' scales are shared by the NC columns. Compiled (GCC 12, 8 columns), per block
// and output: Q8_0 6.4, Q4_0 7.2, Q4_1 8.3, Q5_0 9.2, Q5_1 10.5 instructions, against 16.5,
// 19.5, 24, 37 and 40.5 in the vec_dot loops. 8 columns hold 8 accumulators + 8 weight + 2
// activation + 4 dot registers + scales: GCC spills a few per block, still cheaper than
// unpacking for 4 columns.
//
// Edge row groups repeat their last row (those lanes are not stored) and edge columns run a
// narrower micro-kernel: every output's arithmetic is the same whatever the tile's shape.
#include "kernels/simd_neon.h"

namespace edgeinfer {

using namespace neon;

namespace {

constexpr int kRowBlock = 4;
constexpr int kColBlock = 8;

// The weight side of a type: block layout, its activation block, and the unpack of one block
// into its 32 signed quants (elements 0..15 in lo, 16..31 in hi).
struct Q4_0Rows {
  using Block = BlockQ4_0;
  using Act = BlockQ8_0;
  static constexpr bool kAffine = false;
  static inline void unpack(const BlockQ4_0& b, int8x16_t& lo, int8x16_t& hi) {
    const uint8x16_t v = vld1q_u8(b.qs);
    const int8x16_t eight = vdupq_n_s8(8);
    lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(v, vdupq_n_u8(0x0f))), eight);
    hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(v, 4)), eight);
  }
};

struct Q4_1Rows {
  using Block = BlockQ4_1;
  using Act = BlockQ8_1;
  static constexpr bool kAffine = true;
  static inline void unpack(const BlockQ4_1& b, int8x16_t& lo, int8x16_t& hi) {
    const uint8x16_t v = vld1q_u8(b.qs);
    lo = vreinterpretq_s8_u8(vandq_u8(v, vdupq_n_u8(0x0f)));
    hi = vreinterpretq_s8_u8(vshrq_n_u8(v, 4));
  }
};

// The fifth bit of each element of a Q5 block, as 0x10 (elements 0..15 in lo, 16..31 in hi).
static inline void q5_high_bits(const uint8_t* qh, uint8x16_t& lo, uint8x16_t& hi) {
  const uint32_t bits = load_u32(qh);
  const uint8x16_t b16 = vdupq_n_u8(0x10);
  lo = vandq_u8(bits16_to_bytes(bits & 0xffffu), b16);
  hi = vandq_u8(bits16_to_bytes(bits >> 16), b16);
}

struct Q5_0Rows {
  using Block = BlockQ5_0;
  using Act = BlockQ8_0;
  static constexpr bool kAffine = false;
  static inline void unpack(const BlockQ5_0& b, int8x16_t& lo, int8x16_t& hi) {
    const uint8x16_t v = vld1q_u8(b.qs);
    uint8x16_t h_lo, h_hi;
    q5_high_bits(b.qh, h_lo, h_hi);
    const int8x16_t sixteen = vdupq_n_s8(16);
    lo = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(vandq_u8(v, vdupq_n_u8(0x0f)), h_lo)), sixteen);
    hi = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(v, 4), h_hi)), sixteen);
  }
};

struct Q5_1Rows {
  using Block = BlockQ5_1;
  using Act = BlockQ8_1;
  static constexpr bool kAffine = true;
  static inline void unpack(const BlockQ5_1& b, int8x16_t& lo, int8x16_t& hi) {
    const uint8x16_t v = vld1q_u8(b.qs);
    uint8x16_t h_lo, h_hi;
    q5_high_bits(b.qh, h_lo, h_hi);
    lo = vreinterpretq_s8_u8(vorrq_u8(vandq_u8(v, vdupq_n_u8(0x0f)), h_lo));
    hi = vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(v, 4), h_hi));
  }
};

struct Q8_0Rows {
  using Block = BlockQ8_0;
  using Act = BlockQ8_0;
  static constexpr bool kAffine = false;
  static inline void unpack(const BlockQ8_0& b, int8x16_t& lo, int8x16_t& hi) {
    lo = vld1q_s8(b.qs);
    hi = vld1q_s8(b.qs + 16);
  }
};

// Four halves (one per row) as floats, row r in lane r.
static inline float32x4_t f16x4(const uint16_t* h0, const uint16_t* h1, const uint16_t* h2, const uint16_t* h3) {
  uint16x4_t v = vld1_dup_u16(h0);
  v = vld1_lane_u16(h1, v, 1);
  v = vld1_lane_u16(h2, v, 2);
  v = vld1_lane_u16(h3, v, 3);
  return vcvt_f32_f16(vreinterpret_f16_u16(v));
}

// Lane r = the sum of the 4 lanes of t[r].
static inline int32x4_t rows_in_lanes(const int32x4_t t[kRowBlock]) {
  return vpaddq_s32(vpaddq_s32(t[0], t[1]), vpaddq_s32(t[2], t[3]));
}

// The first nr lanes of v to y[0..nr).
static inline void store_rows(float* y, float32x4_t v, int nr) {
  if (nr == kRowBlock) {
    vst1q_f32(y, v);
    return;
  }
  float t[kRowBlock];
  vst1q_f32(t, v);
  for (int r = 0; r < nr; ++r) y[r] = t[r];
}

template <typename Rows, int NC>
void micro_tile(int64_t nb, const uint8_t* const* w, const uint8_t* x, size_t x_stride, float* y, size_t y_stride,
                int nr) {
  using WBlock = typename Rows::Block;
  using XBlock = typename Rows::Act;
  const WBlock* wr[kRowBlock];
  const XBlock* xc[NC];
  for (int r = 0; r < kRowBlock; ++r) wr[r] = reinterpret_cast<const WBlock*>(w[r]);
  for (int c = 0; c < NC; ++c) xc[c] = reinterpret_cast<const XBlock*>(x + static_cast<size_t>(c) * x_stride);
  float32x4_t acc[NC];
#pragma GCC unroll 8
  for (int c = 0; c < NC; ++c) acc[c] = vdupq_n_f32(0.0f);
  for (int64_t i = 0; i < nb; ++i) {
    int8x16_t lo[kRowBlock], hi[kRowBlock];
#pragma GCC unroll 4
    for (int r = 0; r < kRowBlock; ++r) Rows::unpack(wr[r][i], lo[r], hi[r]);
    const float32x4_t dw = f16x4(&wr[0][i].d, &wr[1][i].d, &wr[2][i].d, &wr[3][i].d);
    float32x4_t mw = vdupq_n_f32(0.0f);
    if constexpr (Rows::kAffine) mw = f16x4(&wr[0][i].m, &wr[1][i].m, &wr[2][i].m, &wr[3][i].m);
#pragma GCC unroll 8
    for (int c = 0; c < NC; ++c) {
      const int8x16_t a0 = vld1q_s8(xc[c][i].qs), a1 = vld1q_s8(xc[c][i].qs + 16);
      int32x4_t t[kRowBlock];
#pragma GCC unroll 4
      for (int r = 0; r < kRowBlock; ++r) t[r] = vdotq_s32(vdotq_s32(vdupq_n_s32(0), lo[r], a0), hi[r], a1);
      acc[c] = vfmaq_f32(acc[c], vcvtq_f32_s32(rows_in_lanes(t)), vmulq_n_f32(dw, f16_to_f32(xc[c][i].d)));
      if constexpr (Rows::kAffine) acc[c] = vfmaq_n_f32(acc[c], mw, f16_to_f32(xc[c][i].s));
    }
  }
#pragma GCC unroll 8
  for (int c = 0; c < NC; ++c) store_rows(y + static_cast<size_t>(c) * y_stride, acc[c], nr);
}

// The micro-kernel for exactly nc (1..NC) columns.
template <typename Rows, int NC>
void micro_dispatch(int nc, int64_t nb, const uint8_t* const* w, const uint8_t* x, size_t x_stride, float* y,
                    size_t y_stride, int nr) {
  if constexpr (NC > 0) {
    if (nc == NC) return micro_tile<Rows, NC>(nb, w, x, x_stride, y, y_stride, nr);
    return micro_dispatch<Rows, NC - 1>(nc, nb, w, x, x_stride, y, y_stride, nr);
  }
}

template <typename Rows>
void gemm_tile(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
               size_t x_stride, float* y, size_t y_stride) {
  const int64_t nb = n / kQK;
  const uint8_t* wb = static_cast<const uint8_t*>(w);
  const uint8_t* xb = static_cast<const uint8_t*>(x);
  // Row group outer: its 4 rows (a few KiB per row) stay in L1 while the columns pass by.
  for (int64_t r0 = 0; r0 < n_rows; r0 += kRowBlock) {
    const int nr = static_cast<int>(n_rows - r0 < kRowBlock ? n_rows - r0 : kRowBlock);
    const uint8_t* rows[kRowBlock];
    for (int r = 0; r < kRowBlock; ++r) rows[r] = wb + static_cast<size_t>(r0 + (r < nr ? r : nr - 1)) * w_stride;
    for (int64_t c0 = 0; c0 < n_cols; c0 += kColBlock) {
      const int nc = static_cast<int>(n_cols - c0 < kColBlock ? n_cols - c0 : kColBlock);
      micro_dispatch<Rows, kColBlock>(nc, nb, rows, xb + static_cast<size_t>(c0) * x_stride, x_stride,
                                      y + static_cast<size_t>(c0) * y_stride + static_cast<size_t>(r0), y_stride, nr);
    }
  }
}

}  // namespace

#define EDGEINFER_Q_TILE(name, Rows)                                                                         \
  void name(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,        \
            size_t x_stride, float* y, size_t y_stride) {                                                    \
    gemm_tile<Rows>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);                               \
  }
EDGEINFER_Q_TILE(q4_0_gemm_tile_neon, Q4_0Rows)
EDGEINFER_Q_TILE(q4_1_gemm_tile_neon, Q4_1Rows)
EDGEINFER_Q_TILE(q5_0_gemm_tile_neon, Q5_0Rows)
EDGEINFER_Q_TILE(q5_1_gemm_tile_neon, Q5_1Rows)
EDGEINFER_Q_TILE(q8_0_gemm_tile_neon, Q8_0Rows)
#undef EDGEINFER_Q_TILE

}  // namespace edgeinfer
