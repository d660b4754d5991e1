#pragma once
// Internal to the AVX-512 path (include only from *_avx512*.cpp): the register-blocked prefill
// tile of the float types (gemm_float_avx512.cpp: F16, F32; gemm_bf16_avx512bf16.cpp: BF16).
//
// With no per-block scales the register tile can run along K: accumulator (r, c) holds 16
// lanes of partial sums of w_r . x_c, so each loaded (and, for F16, converted) weight vector
// serves C columns and each activation vector R rows; R x C = 24 accumulators leave room for
// the operands in the 32 registers. Horizontal sums happen once per tile at the end.
//
// An element type policy Ops gives: T, `step` elements per register, load(p) and
// load_tail(p, len) -> operand, madd(acc, w, x) -> acc + w . x lane-wise. A policy may also
// name XOps, the policy of the activations as the micro-kernel reads them, with
// convert_x(x, n, out) writing one activation row as XOps::T: the tile then converts each
// panel's activations once (into a buffer it allocates per call) instead of at every use. F16
// does: its F16 activation rows are exactly representable in F32, so read as F32 they give the
// same products and sums, without the conversions (a 4 x 6 tile converted 10 vectors per 24
// FMAs); with plain loads for the activations a 6 x 4 tile feeds the FMAs best.
#include <memory>
#include <type_traits>

#include "kernels/simd_avx512.h"

namespace edgeinfer::avx512_float_tile {

namespace {

using namespace avx512;

// Activations read as stored (no XOps): 4 rows x 6 columns.
template <class Ops, class = void>
struct Tile {
  using XOps = Ops;
  static constexpr bool kConvert = false;
  static constexpr int kRows = 4;
  static constexpr int kCols = 6;
};
// Activations converted per panel (Ops::XOps): 6 rows x 4 columns.
template <class Ops>
struct Tile<Ops, std::void_t<typename Ops::XOps>> {
  using XOps = typename Ops::XOps;
  static constexpr bool kConvert = true;
  static constexpr int kRows = 6;
  static constexpr int kCols = 4;
};

constexpr int kPanel = 48;  // columns whose activations stay in L2 (48 x 2048 F16 = 192 KiB)
// Converted activations: at most this many bytes per panel (48 x 2048 F32 = 384 KiB; a longer
// K narrows the panel, e.g. to 16 columns for K = 5632).
constexpr size_t kPanelBytes = 384 * 1024;

template <class Ops, class XOps, int R, int C>
void micro_kernel(int64_t n, const uint8_t* w, size_t w_stride, const uint8_t* x, size_t x_stride, float* y,
                  size_t y_stride) {
  using T = typename Ops::T;
  using XT = typename XOps::T;
  static_assert(Ops::step == XOps::step, "weights and activations advance together");
  const T* wr[R];
  const XT* xc[C];
  for (int r = 0; r < R; ++r) wr[r] = reinterpret_cast<const T*>(w + static_cast<size_t>(r) * w_stride);
  for (int c = 0; c < C; ++c) xc[c] = reinterpret_cast<const XT*>(x + static_cast<size_t>(c) * x_stride);
  __m512 acc[R][C];
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  int64_t k = 0;
  for (; k + Ops::step <= n; k += Ops::step) {
    __m512 wv[R];
    for (int r = 0; r < R; ++r) wv[r] = Ops::load(wr[r] + k);
    for (int c = 0; c < C; ++c) {
      const __m512 xv = XOps::load(xc[c] + k);
      for (int r = 0; r < R; ++r) acc[r][c] = Ops::madd(acc[r][c], wv[r], xv);
    }
  }
  if (k < n) {
    __m512 wv[R];
    for (int r = 0; r < R; ++r) wv[r] = Ops::load_tail(wr[r] + k, n - k);
    for (int c = 0; c < C; ++c) {
      const __m512 xv = XOps::load_tail(xc[c] + k, n - k);
      for (int r = 0; r < R; ++r) acc[r][c] = Ops::madd(acc[r][c], wv[r], xv);
    }
  }
  for (int c = 0; c < C; ++c) {
    for (int r = 0; r < R; ++r) y[static_cast<size_t>(c) * y_stride + static_cast<size_t>(r)] = hsum(acc[r][c]);
  }
}

template <class Ops, class XOps, int R, int C>
void dispatch_cols(int nc, int64_t n, const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, float* y, size_t ys) {
  if constexpr (C > 0) {
    if (nc == C) return micro_kernel<Ops, XOps, R, C>(n, w, ws, x, xs, y, ys);
    return dispatch_cols<Ops, XOps, R, C - 1>(nc, n, w, ws, x, xs, y, ys);
  }
}

template <class Ops, class XOps, int R, int C>
void dispatch_rows(int nr, int nc, int64_t n, const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, float* y,
                   size_t ys) {
  if constexpr (R > 0) {
    if (nr == R) return dispatch_cols<Ops, XOps, R, C>(nc, n, w, ws, x, xs, y, ys);
    return dispatch_rows<Ops, XOps, R - 1, C>(nr, nc, n, w, ws, x, xs, y, ys);
  }
}

template <class Ops>
void gemm_tile(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
               size_t x_stride, float* y, size_t y_stride) {
  using Shape = Tile<Ops>;
  using XOps = typename Shape::XOps;
  using XT = typename XOps::T;
  constexpr int R = Shape::kRows, C = Shape::kCols;
  const uint8_t* wb = static_cast<const uint8_t*>(w);
  const uint8_t* xb = static_cast<const uint8_t*>(x);
  int64_t panel = kPanel;
  std::unique_ptr<XT[]> xbuf;
  const size_t xbuf_stride = static_cast<size_t>(n) * sizeof(XT);
  if constexpr (Shape::kConvert) {
    const int64_t fit = static_cast<int64_t>(kPanelBytes / (n < 1 ? sizeof(XT) : xbuf_stride));
    panel = fit < C ? C : fit > kPanel ? kPanel : fit / C * C;
    if (panel > n_cols) panel = n_cols;
    xbuf.reset(new XT[static_cast<size_t>(panel) * static_cast<size_t>(n)]);
  }
  // Columns in panels that stay in L2 while every row group passes over them; within a panel,
  // a row group's weights stay in L1/L2 while the panel's columns pass by.
  for (int64_t p0 = 0; p0 < n_cols; p0 += panel) {
    const int64_t pc = n_cols - p0 < panel ? n_cols - p0 : panel;
    const uint8_t* xp = xb + static_cast<size_t>(p0) * x_stride;
    size_t xp_stride = x_stride;
    if constexpr (Shape::kConvert) {
      for (int64_t c = 0; c < pc; ++c) {
        Ops::convert_x(xp + static_cast<size_t>(c) * x_stride, n, xbuf.get() + static_cast<size_t>(c * n));
      }
      xp = reinterpret_cast<const uint8_t*>(xbuf.get());
      xp_stride = xbuf_stride;
    }
    for (int64_t r0 = 0; r0 < n_rows; r0 += R) {
      const int nr = static_cast<int>(n_rows - r0 < R ? n_rows - r0 : R);
      for (int64_t c0 = 0; c0 < pc; c0 += C) {
        const int nc = static_cast<int>(pc - c0 < C ? pc - c0 : C);
        dispatch_rows<Ops, XOps, R, C>(nr, nc, n, wb + static_cast<size_t>(r0) * w_stride, w_stride,
                                       xp + static_cast<size_t>(c0) * xp_stride, xp_stride,
                                       y + static_cast<size_t>(p0 + c0) * y_stride + static_cast<size_t>(r0), y_stride);
      }
    }
  }
}

}  // namespace

}  // namespace edgeinfer::avx512_float_tile
