#pragma once
// Internal to the AVX-512 path (include only from *_avx512*.cpp): the register-blocked prefill
// tile of the float types (gemm_float_avx512.cpp: F16, F32; gemm_bf16_avx512bf16.cpp: BF16).
//
// With no per-block scales the register tile can run along K: accumulator (r, c) holds 16
// lanes of partial sums of w_r . x_c, so each loaded (and, for F16, converted) weight vector
// serves kCols columns and each activation vector kRows rows; 4 x 6 accumulators leave room
// for the operands in the 32 registers. Horizontal sums happen once per tile at the end.
//
// An element type policy Ops gives: T, `step` elements per register, load(p) and
// load_tail(p, len) -> operand, madd(acc, w, x) -> acc + w . x lane-wise.
#include "kernels/simd_avx512.h"

namespace edgeinfer::avx512_float_tile {

namespace {

using namespace avx512;

constexpr int kRows = 4;
constexpr int kCols = 6;
constexpr int kPanel = 48;  // columns whose activations stay in L2 (48 x 2048 F16 = 192 KiB)

template <class Ops, int R, int C>
void micro_kernel(int64_t n, const uint8_t* w, size_t w_stride, const uint8_t* x, size_t x_stride, float* y,
                  size_t y_stride) {
  using T = typename Ops::T;
  const T* wr[R];
  const T* xc[C];
  for (int r = 0; r < R; ++r) wr[r] = reinterpret_cast<const T*>(w + static_cast<size_t>(r) * w_stride);
  for (int c = 0; c < C; ++c) xc[c] = reinterpret_cast<const T*>(x + static_cast<size_t>(c) * x_stride);
  __m512 acc[R][C];
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  int64_t k = 0;
  for (; k + Ops::step <= n; k += Ops::step) {
    __m512 wv[R];
    for (int r = 0; r < R; ++r) wv[r] = Ops::load(wr[r] + k);
    for (int c = 0; c < C; ++c) {
      const __m512 xv = Ops::load(xc[c] + k);
      for (int r = 0; r < R; ++r) acc[r][c] = Ops::madd(acc[r][c], wv[r], xv);
    }
  }
  if (k < n) {
    __m512 wv[R];
    for (int r = 0; r < R; ++r) wv[r] = Ops::load_tail(wr[r] + k, n - k);
    for (int c = 0; c < C; ++c) {
      const __m512 xv = Ops::load_tail(xc[c] + k, n - k);
      for (int r = 0; r < R; ++r) acc[r][c] = Ops::madd(acc[r][c], wv[r], xv);
    }
  }
  for (int c = 0; c < C; ++c) {
    for (int r = 0; r < R; ++r) y[static_cast<size_t>(c) * y_stride + static_cast<size_t>(r)] = hsum(acc[r][c]);
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

}  // namespace edgeinfer::avx512_float_tile
