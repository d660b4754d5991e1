// NEON prefill tiles (GemmTileFn) of Q4_0 and Q8_0 against Q8_0 activations.
//
// Micro-kernel: kRowBlock weight rows x kColBlock activation columns. For each 32-element block
// the rows' quants are unpacked once into int8 registers and reused for every column of the
// micro-tile; each (row, column) pair keeps four float lanes that accumulate
// float(SDOT lanes) * (d_w * d_x), reduced once at the end. 4 x 4 uses 16 accumulators + 8
// weight + 2 activation registers of the 32. Edge rows/columns use 1-wide variants.
#include "kernels/simd_neon.h"

namespace edgeinfer {

using namespace neon;

namespace {

constexpr int kRowBlock = 4;
constexpr int kColBlock = 4;

struct Q4_0Rows {
  using Block = BlockQ4_0;
  static inline void unpack(const BlockQ4_0& b, int8x16_t& lo, int8x16_t& hi) {
    const uint8x16_t v = vld1q_u8(b.qs);
    const int8x16_t eight = vdupq_n_s8(8);
    lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(v, vdupq_n_u8(0x0f))), eight);
    hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(v, 4)), eight);
  }
};

struct Q8_0Rows {
  using Block = BlockQ8_0;
  static inline void unpack(const BlockQ8_0& b, int8x16_t& lo, int8x16_t& hi) {
    lo = vld1q_s8(b.qs);
    hi = vld1q_s8(b.qs + 16);
  }
};

template <typename Rows, int RB, int CB>
void micro_tile(int64_t nb, const uint8_t* w, size_t w_stride, const uint8_t* x, size_t x_stride, float* y,
                size_t y_stride) {
  using WBlock = typename Rows::Block;
  float32x4_t acc[RB][CB];
  for (int r = 0; r < RB; ++r) {
    for (int c = 0; c < CB; ++c) acc[r][c] = vdupq_n_f32(0.0f);
  }
  const WBlock* wr[RB];
  const BlockQ8_0* xc[CB];
  for (int r = 0; r < RB; ++r) wr[r] = reinterpret_cast<const WBlock*>(w + static_cast<size_t>(r) * w_stride);
  for (int c = 0; c < CB; ++c) xc[c] = reinterpret_cast<const BlockQ8_0*>(x + static_cast<size_t>(c) * x_stride);
  for (int64_t i = 0; i < nb; ++i) {
    int8x16_t lo[RB], hi[RB];
    float dw[RB];
    for (int r = 0; r < RB; ++r) {
      Rows::unpack(wr[r][i], lo[r], hi[r]);
      dw[r] = f16_to_f32(wr[r][i].d);
    }
    for (int c = 0; c < CB; ++c) {
      const int8x16_t a0 = vld1q_s8(xc[c][i].qs), a1 = vld1q_s8(xc[c][i].qs + 16);
      const float dx = f16_to_f32(xc[c][i].d);
      for (int r = 0; r < RB; ++r) {
        const int32x4_t lanes = vdotq_s32(vdotq_s32(vdupq_n_s32(0), lo[r], a0), hi[r], a1);
        acc[r][c] = vfmaq_n_f32(acc[r][c], vcvtq_f32_s32(lanes), dw[r] * dx);
      }
    }
  }
  for (int c = 0; c < CB; ++c) {
    for (int r = 0; r < RB; ++r) y[static_cast<size_t>(c) * y_stride + static_cast<size_t>(r)] = vaddvq_f32(acc[r][c]);
  }
}

template <typename Rows, int RB>
void row_group(int64_t nb, int64_t n_cols, const uint8_t* w, size_t w_stride, const uint8_t* x, size_t x_stride,
               float* y, size_t y_stride) {
  int64_t c = 0;
  for (; c + kColBlock <= n_cols; c += kColBlock) {
    micro_tile<Rows, RB, kColBlock>(nb, w, w_stride, x + static_cast<size_t>(c) * x_stride, x_stride,
                                    y + static_cast<size_t>(c) * y_stride, y_stride);
  }
  for (; c < n_cols; ++c) {
    micro_tile<Rows, RB, 1>(nb, w, w_stride, x + static_cast<size_t>(c) * x_stride, x_stride,
                            y + static_cast<size_t>(c) * y_stride, y_stride);
  }
}

template <typename Rows>
void gemm_tile(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
               size_t x_stride, float* y, size_t y_stride) {
  const int64_t nb = n / kQK;
  const uint8_t* wb = static_cast<const uint8_t*>(w);
  const uint8_t* xb = static_cast<const uint8_t*>(x);
  int64_t r = 0;
  for (; r + kRowBlock <= n_rows; r += kRowBlock) {
    row_group<Rows, kRowBlock>(nb, n_cols, wb + static_cast<size_t>(r) * w_stride, w_stride, xb, x_stride, y + r,
                               y_stride);
  }
  for (; r < n_rows; ++r) {
    row_group<Rows, 1>(nb, n_cols, wb + static_cast<size_t>(r) * w_stride, w_stride, xb, x_stride, y + r, y_stride);
  }
}

}  // namespace

void q4_0_gemm_tile_neon(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride) {
  gemm_tile<Q4_0Rows>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}

void q8_0_gemm_tile_neon(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride) {
  gemm_tile<Q8_0Rows>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}

}  // namespace edgeinfer
