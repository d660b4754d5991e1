// NEON prefill tiles (GemmTileFn) of the float types F32, F16 and BF16 (activations of the same
// type: each one's vec_dot_type).
//
// With no per-block scales the register tile runs along K: accumulator (r, c) holds 4 float
// lanes of partial sums of w_r . x_c, so each loaded (and, for F16/BF16, widened) weight vector
// serves kCols columns and each activation vector kRows rows. Per 8 elements, 4 x 4 tile: 8 + 8
// vector loads (F32) or 4 + 4 loads and 8 + 8 widenings (F16, BF16) for 32 FMAs of 4
// multiply-adds; compiled (GCC 12) the loop is 54 (F32) or 61 (F16, BF16) instructions per 32
// FMAs, against 3 (F32) and 4.75 (F16, BF16) per FMA in the vec_dot loops. 16 accumulators + 8
// weight + 2 activation registers of the 32. F16 widens with FCVTL and BF16 with a 16-bit left
// shift (both exact); products and sums are F32 FMAs. The K tail (n % 8) is one more step over
// zero-padded copies; horizontal sums happen once per output at the end, so every output's
// arithmetic is the same whatever the tile's shape. A lane sums n / 4 products (vec_dot's 16
// lanes: n / 16); on the tests' rows the error stays under 0.2 of the written budget.
#include "kernels/simd_neon.h"

namespace edgeinfer {

namespace {

constexpr int kRows = 4;
constexpr int kCols = 4;
constexpr int kStep = 8;    // elements per step: two float vectors per row / column
constexpr int kPanel = 48;  // columns whose activations stay in L2 (48 x 2048 F16 = 192 KiB)

// Element type policies: load(p, lo, hi) widens p[0..8) to two float vectors.
struct F32Ops {
  using T = float;
  static inline void load(const float* p, float32x4_t& lo, float32x4_t& hi) {
    lo = vld1q_f32(p);
    hi = vld1q_f32(p + 4);
  }
};

struct F16Ops {
  using T = uint16_t;
  static inline void load(const uint16_t* p, float32x4_t& lo, float32x4_t& hi) {
    const float16x8_t v = vreinterpretq_f16_u16(vld1q_u16(p));
    lo = vcvt_f32_f16(vget_low_f16(v));
    hi = vcvt_high_f32_f16(v);
  }
};

struct BF16Ops {
  using T = uint16_t;
  // A bfloat is the top half of a float.
  static inline void load(const uint16_t* p, float32x4_t& lo, float32x4_t& hi) {
    const uint16x8_t v = vld1q_u16(p);
    lo = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(v), 16));
    hi = vreinterpretq_f32_u32(vshll_high_n_u16(v, 16));
  }
};

// One step of 8 elements: acc[r][c] += w_r[0..8) . x_c[0..8) lane-wise.
template <class Ops, int R, int C>
static inline void step(float32x4_t (&acc)[R][C], const typename Ops::T* const* w, const typename Ops::T* const* x,
                        int64_t k) {
  float32x4_t wl[R], wh[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) Ops::load(w[r] + k, wl[r], wh[r]);
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c) {
    float32x4_t xl, xh;
    Ops::load(x[c] + k, xl, xh);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[r][c] = vfmaq_f32(vfmaq_f32(acc[r][c], wl[r], xl), wh[r], xh);
  }
}

template <class Ops, int R, int C>
void micro_kernel(int64_t n, const uint8_t* w, size_t w_stride, const uint8_t* x, size_t x_stride, float* y,
                  size_t y_stride) {
  using T = typename Ops::T;
  const T* wr[R];
  const T* xc[C];
  for (int r = 0; r < R; ++r) wr[r] = reinterpret_cast<const T*>(w + static_cast<size_t>(r) * w_stride);
  for (int c = 0; c < C; ++c) xc[c] = reinterpret_cast<const T*>(x + static_cast<size_t>(c) * x_stride);
  // Unrolled where the loops are written, so that the accumulators are registers from the
  // start (GCC keeps a late-unrolled array in memory next to the loads, which may alias it).
  float32x4_t acc[R][C];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) acc[r][c] = vdupq_n_f32(0.0f);
  }
  int64_t k = 0;
  for (; k + kStep <= n; k += kStep) step<Ops, R, C>(acc, wr, xc, k);
  if (k < n) {
    // The tail, zero-padded to a whole step (0 * x adds nothing).
    const size_t bytes = static_cast<size_t>(n - k) * sizeof(T);
    T wt[R][kStep] = {}, xt[C][kStep] = {};
    const T* wp[R];
    const T* xp[C];
    for (int r = 0; r < R; ++r) {
      std::memcpy(wt[r], wr[r] + k, bytes);
      wp[r] = wt[r];
    }
    for (int c = 0; c < C; ++c) {
      std::memcpy(xt[c], xc[c] + k, bytes);
      xp[c] = xt[c];
    }
    step<Ops, R, C>(acc, wp, xp, 0);
  }
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c) {
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) y[static_cast<size_t>(c) * y_stride + static_cast<size_t>(r)] = vaddvq_f32(acc[r][c]);
  }
}

template <class Ops, int R, int C>
void dispatch_cols(int nc, int64_t n, const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, float* y, size_t ys) {
  if constexpr (C > 0) {
    if (nc == C) return micro_kernel<Ops, R, C>(n, w, ws, x, xs, y, ys);
    return dispatch_cols<Ops, R, C - 1>(nc, n, w, ws, x, xs, y, ys);
  }
}

template <class Ops, int R>
void dispatch_rows(int nr, int nc, int64_t n, const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, float* y,
                   size_t ys) {
  if constexpr (R > 0) {
    if (nr == R) return dispatch_cols<Ops, R, kCols>(nc, n, w, ws, x, xs, y, ys);
    return dispatch_rows<Ops, R - 1>(nr, nc, n, w, ws, x, xs, y, ys);
  }
}

template <class Ops>
void gemm_tile(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
               size_t x_stride, float* y, size_t y_stride) {
  const uint8_t* wb = static_cast<const uint8_t*>(w);
  const uint8_t* xb = static_cast<const uint8_t*>(x);
  // Columns in panels that stay in L2 while every row group passes over them; within a panel,
  // a row group's weights stay in L1/L2 while the panel's columns pass by.
  for (int64_t p0 = 0; p0 < n_cols; p0 += kPanel) {
    const int64_t pc = n_cols - p0 < kPanel ? n_cols - p0 : kPanel;
    for (int64_t r0 = 0; r0 < n_rows; r0 += kRows) {
      const int nr = static_cast<int>(n_rows - r0 < kRows ? n_rows - r0 : kRows);
      for (int64_t c0 = p0; c0 < p0 + pc; c0 += kCols) {
        const int nc = static_cast<int>(p0 + pc - c0 < kCols ? p0 + pc - c0 : kCols);
        dispatch_rows<Ops, kRows>(nr, nc, n, wb + static_cast<size_t>(r0) * w_stride, w_stride,
                                  xb + static_cast<size_t>(c0) * x_stride, x_stride,
                                  y + static_cast<size_t>(c0) * y_stride + static_cast<size_t>(r0), y_stride);
      }
    }
  }
}

}  // namespace

void f32_gemm_tile_neon(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                        size_t x_stride, float* y, size_t y_stride) {
  gemm_tile<F32Ops>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}

void f16_gemm_tile_neon(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                        size_t x_stride, float* y, size_t y_stride) {
  gemm_tile<F16Ops>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}

void bf16_gemm_tile_neon(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride) {
  gemm_tile<BF16Ops>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}

}  // namespace edgeinfer
