#pragma once
// Internal to the AVX2 and NEON attention row kernels (include only from attn_rows_*.cpp, after
// defining the ISA's `Ops` in an anonymous namespace, so every instantiation stays local to its
// ISA's file): the ISA-neutral part of dot_rows_group / mad_rows_group — the fallback for head
// dims without a fast path, queries converted once per call, rows converted to f32 once per
// block of Ops::kBlockRows and handed to the ISA's block kernels.
//
// Ops provides: kBlockRows; kMaxDim (at most 128); rows_to_f32(base, stride, nr, n, f);
// template <int NV> dot_block / mad_block (the block kernels for head dim 8 * NV, see
// attn_rows_avx2.cpp) for NV 1..8 and 16; vec_dot / vec_mad (the path's per-row kernels, for
// the fallback).
#include <cstddef>
#include <cstdint>

namespace edgeinfer::attn_rows {

using DotBlockFn = void (*)(const float* kf, int64_t nr, int64_t n_x, const float* qf, float* out, size_t out_stride);
using MadBlockFn = void (*)(const float* vf, int64_t nr, int64_t n_y, const float* w, size_t w_stride, float* y,
                            size_t y_stride);

// The block kernels by head dim / 8, so that NV is a compile-time constant in them: head dims
// 8, 16, ..., 64 and 128 (the others take the fallback).
template <class Ops>
struct BlockTables {
  static constexpr DotBlockFn dot[17] = {
      nullptr, Ops::template dot_block<1>, Ops::template dot_block<2>, Ops::template dot_block<3>,
      Ops::template dot_block<4>, Ops::template dot_block<5>, Ops::template dot_block<6>, Ops::template dot_block<7>,
      Ops::template dot_block<8>, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
      Ops::template dot_block<16>};
  static constexpr MadBlockFn mad[17] = {
      nullptr, Ops::template mad_block<1>, Ops::template mad_block<2>, Ops::template mad_block<3>,
      Ops::template mad_block<4>, Ops::template mad_block<5>, Ops::template mad_block<6>, Ops::template mad_block<7>,
      Ops::template mad_block<8>, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
      Ops::template mad_block<16>};
  static bool fast(int64_t n) { return n % 8 == 0 && n <= Ops::kMaxDim && dot[n / 8] != nullptr; }
};

template <class Ops>
inline void dot_rows_group(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_x, const void* x,
                           size_t x_stride, float* out, size_t out_stride) {
  const uint8_t* base = static_cast<const uint8_t*>(rows);
  const uint8_t* xb = static_cast<const uint8_t*>(x);
  using T = BlockTables<Ops>;
  if (!T::fast(n)) {
    for (int64_t h = 0; h < n_x; ++h) {
      for (int64_t r = 0; r < n_rows; ++r) {
        Ops::vec_dot(n, out + static_cast<size_t>(h) * out_stride + r, base + static_cast<size_t>(r) * stride,
                     xb + static_cast<size_t>(h) * x_stride);
      }
    }
    return;
  }
  const DotBlockFn dot = T::dot[n / 8];
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
  using T = BlockTables<Ops>;
  if (!T::fast(n)) {
    for (int64_t h = 0; h < n_y; ++h) {
      for (int64_t r = 0; r < n_rows; ++r) {
        Ops::vec_mad(n, y + static_cast<size_t>(h) * y_stride, base + static_cast<size_t>(r) * stride,
                     w[static_cast<size_t>(h) * w_stride + static_cast<size_t>(r)]);
      }
    }
    return;
  }
  const MadBlockFn mad = T::mad[n / 8];
  alignas(64) float vf[Ops::kBlockRows * Ops::kMaxDim];
  for (int64_t r0 = 0; r0 < n_rows; r0 += Ops::kBlockRows) {
    const int64_t nr = n_rows - r0 < Ops::kBlockRows ? n_rows - r0 : Ops::kBlockRows;
    Ops::rows_to_f32(base + static_cast<size_t>(r0) * stride, stride, nr, n, vf);
    mad(vf, nr, n_y, w + r0, w_stride, y, y_stride);
  }
}

}  // namespace edgeinfer::attn_rows
