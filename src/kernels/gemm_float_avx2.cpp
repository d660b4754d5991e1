// AVX2 prefill tiles (GemmTileFn) of the float types F16, BF16 and F32.
//
// As gemm_float_avx512.cpp with 256-bit registers: accumulator (r, c) holds 8 lanes of
// partial sums of w_r . x_c along K; F16 converts with vcvtph2ps, BF16 widens by a 16-bit
// shift, both exactly, and everything accumulates in F32 with FMA.
#include "kernels/simd_avx2.h"

namespace edgeinfer {

namespace {

using namespace avx2;

constexpr int kRows = 3;  // 3 x 4 accumulators + 3 weights + 1 activation = 16 registers
constexpr int kCols = 4;
constexpr int kPanel = 48;  // columns whose activations stay in L2 (48 x 2048 F16 = 192 KiB)

// Element type policies: `step` elements per register, load(p) / load_tail(p, len) -> 8 floats.
inline __m256i tail_mask(int64_t len) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(len)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

struct F16Ops {
  using T = uint16_t;
  static constexpr int step = 8;
  static __m256 load(const T* p) { return _mm256_cvtph_ps(loadu128(p)); }
  static __m256 load_tail(const T* p, int64_t len) {
    alignas(16) uint16_t h[8] = {};
    std::memcpy(h, p, static_cast<size_t>(len) * 2);
    return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(h)));
  }
};

struct F32Ops {
  using T = float;
  static constexpr int step = 8;
  static __m256 load(const T* p) { return _mm256_loadu_ps(p); }
  static __m256 load_tail(const T* p, int64_t len) { return _mm256_maskload_ps(p, tail_mask(len)); }
};

struct BF16Ops {
  using T = uint16_t;
  static constexpr int step = 8;
  static __m256 load(const T* p) { return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(loadu128(p)), 16)); }
  static __m256 load_tail(const T* p, int64_t len) {
    alignas(16) uint16_t h[8] = {};
    std::memcpy(h, p, static_cast<size_t>(len) * 2);
    return load(h);
  }
};

template <class Ops, int R, int C>
void micro_kernel(int64_t n, const uint8_t* w, size_t w_stride, const uint8_t* x, size_t x_stride, float* y,
                  size_t y_stride) {
  using T = typename Ops::T;
  const T* wr[R];
  const T* xc[C];
  for (int r = 0; r < R; ++r) wr[r] = reinterpret_cast<const T*>(w + static_cast<size_t>(r) * w_stride);
  for (int c = 0; c < C; ++c) xc[c] = reinterpret_cast<const T*>(x + static_cast<size_t>(c) * x_stride);
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  }
  int64_t k = 0;
  for (; k + Ops::step <= n; k += Ops::step) {
    __m256 wv[R];
    for (int r = 0; r < R; ++r) wv[r] = Ops::load(wr[r] + k);
    for (int c = 0; c < C; ++c) {
      const __m256 xv = Ops::load(xc[c] + k);
      for (int r = 0; r < R; ++r) acc[r][c] = _mm256_fmadd_ps(wv[r], xv, acc[r][c]);
    }
  }
  if (k < n) {
    __m256 wv[R];
    for (int r = 0; r < R; ++r) wv[r] = Ops::load_tail(wr[r] + k, n - k);
    for (int c = 0; c < C; ++c) {
      const __m256 xv = Ops::load_tail(xc[c] + k, n - k);
      for (int r = 0; r < R; ++r) acc[r][c] = _mm256_fmadd_ps(wv[r], xv, acc[r][c]);
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

void f16_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                          size_t x_stride, float* y, size_t y_stride) {
  gemm_tile<F16Ops>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}

void f32_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                          size_t x_stride, float* y, size_t y_stride) {
  gemm_tile<F32Ops>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}

void bf16_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                           size_t x_stride, float* y, size_t y_stride) {
  gemm_tile<BF16Ops>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}

}  // namespace edgeinfer
