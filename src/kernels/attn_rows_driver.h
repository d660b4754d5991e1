#pragma once
// Internal to the AVX2 and NEON attention row kernels (include only from attn_rows_*.cpp, after
// defining the ISA's `Ops` in an anonymous namespace, so every instantiation stays local to its
// ISA's file): the ISA-neutral part of dot_rows_group / mad_rows_group — the fallback for head
// dims without a fast path, queries converted once per call, rows converted to f32 once per
// block of Ops::kBlockRows and handed to the ISA's block kernels.
//
// Ops provides: kBlockRows; kMaxDim; fast_dim(n); rows_to_f32(base, stride, nr, n, f);
// dot_block(n) / mad_block(n) (the block kernels for head dim n, see attn_rows_avx2.cpp);
// vec_dot / vec_mad (the path's per-row kernels, for the fallback).
#include <cstddef>
#include <cstdint>

namespace edgeinfer::attn_rows {

template <class Ops>
inline void dot_rows_group(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_x, const void* x,
                           size_t x_stride, float* out, size_t out_stride) {
  const uint8_t* base = static_cast<const uint8_t*>(rows);
  const uint8_t* xb = static_cast<const uint8_t*>(x);
  if (!Ops::fast_dim(n)) {
    for (int64_t h = 0; h < n_x; ++h) {
      for (int64_t r = 0; r < n_rows; ++r) {
        Ops::vec_dot(n, out + static_cast<size_t>(h) * out_stride + r, base + static_cast<size_t>(r) * stride,
                     xb + static_cast<size_t>(h) * x_stride);
      }
    }
    return;
  }
  const auto dot = Ops::dot_block(n);
  // The queries converted once per call (in chunks of kMaxHeads that fit the stack buffer).
  constexpr int64_t kMaxHeads = 16;
  alignas(64) float qf[kMaxHeads * Ops::kMaxDim];
  alignas(64) float kf[Ops::kBlockRows * Ops::kMaxDim];
  for (int64_t h0 = 0; h0 < n_x; h0 += kMaxHeads) {
    const int64_t nh = n_x - h0 < kMaxHeads ? n_x - h0 : kMaxHeads;
    for (int64_t h = 0; h < nh; ++h) Ops::rows_to_f32(xb + static_cast<size_t>(h0 + h) * x_stride, 0, 1, n, qf + h * n);
    for (int64_t r0 = 0; r0 < n_rows; r0 += Ops::kBlockRows) {
      const int64_t nr = n_rows - r0 < Ops::kBlockRows ? n_rows - r0 : Ops::kBlockRows;
      Ops::rows_to_f32(base + static_cast<size_t>(r0) * stride, stride, nr, n, kf);
      dot(kf, nr, nh, qf, out + static_cast<size_t>(h0) * out_stride + r0, out_stride);
    }
  }
}

template <class Ops>
inline void mad_rows_group(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_y, const float* w,
                           size_t w_stride, float* y, size_t y_stride) {
  const uint8_t* base = static_cast<const uint8_t*>(rows);
  if (!Ops::fast_dim(n)) {
    for (int64_t h = 0; h < n_y; ++h) {
      for (int64_t r = 0; r < n_rows; ++r) {
        Ops::vec_mad(n, y + static_cast<size_t>(h) * y_stride, base + static_cast<size_t>(r) * stride,
                     w[static_cast<size_t>(h) * w_stride + static_cast<size_t>(r)]);
      }
    }
    return;
  }
  const auto mad = Ops::mad_block(n);
  alignas(64) float vf[Ops::kBlockRows * Ops::kMaxDim];
  for (int64_t r0 = 0; r0 < n_rows; r0 += Ops::kBlockRows) {
    const int64_t nr = n_rows - r0 < Ops::kBlockRows ? n_rows - r0 : Ops::kBlockRows;
    Ops::rows_to_f32(base + static_cast<size_t>(r0) * stride, stride, nr, n, vf);
    mad(vf, nr, n_y, w + r0, w_stride, y, y_stride);
  }
}

}  // namespace edgeinfer::attn_rows
