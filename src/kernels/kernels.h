#pragma once
// The kernel table of one instruction-set path. Tables are immutable and built once; the
// engine picks one at start-up (kernels_for(select_isa())) and passes it down explicitly.
// Every entry of a SIMD table must agree with the scalar table within the budget written in
// tests/kernels. An entry a path does not specialize points at the scalar one.
#include <array>
#include <cstddef>
#include <cstdint>

#include "kernels/isa.h"
#include "quant/tensor_type.h"
#include "quant/type_traits.h"

namespace edgeinfer {

// Register-blocked tile for prefill: computes y[r][c] = dot(w row r, x row c) for
// r in [0, n_rows), c in [0, n_cols), with rows of w `w_stride` bytes apart, rows of x (already
// in vec_dot_type) `x_stride` bytes apart, and y[r][c] at y[c * y_stride + r] (floats).
using GemmTileFn = void (*)(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                            const void* x, size_t x_stride, float* y, size_t y_stride);

// y[r] = dot(w row r, x) for r in [0, n_rows), one activation row x in vec_dot_type, with the
// arithmetic of the type's gemm_tile: y[r] has the bits the tile gives that element in any
// tile shape, so that a token decoded alone equals the same token batched (decode GEMV).
using GemvFn = void (*)(int64_t n, int64_t n_rows, const void* w, size_t w_stride, const void* x, float* y);

// One weight row w against n_x activation rows (x + c * x_stride bytes, in vec_dot_type):
// y[c * y_stride] = the VecDotFn result for row c, bit for bit; the weights are unpacked once
// for all n_x rows (batched decode, where the type has no tile-exact GEMV).
using VecDotColsFn = void (*)(int64_t n, const void* w, int64_t n_x, const void* x, size_t x_stride, float* y,
                              size_t y_stride);
// y[i] += w * x[i] for i in [0, n), x a row of the entry's type (attention's weighted sum of V).
using VecMadFn = void (*)(int64_t n, float* y, const void* x, float w);

// out[r] = dot(row r, x) for r in [0, n_rows), rows `stride` bytes apart, x in the type's
// vec_dot_type (attention's scores over the K rows of one cache block). A row's result depends
// only on that row and x.
using DotRowsFn = void (*)(int64_t n, int64_t n_rows, const void* rows, size_t stride, const void* x, float* out);

// y[i] += sum over r in [0, n_rows) of w[r] * row_r[i], rows `stride` bytes apart, added row
// by row in order (each element the same as n_rows VecMadFn calls).
using MadRowsFn = void (*)(int64_t n, int64_t n_rows, const void* rows, size_t stride, const float* w, float* y);

// The query heads of one GQA group against the same rows: out[h * out_stride + r] = dot(row r,
// x_h) for h in [0, n_x), x_h at byte x + h * x_stride; each result bit-identical to DotRowsFn's
// for that x_h (so heads grouped or not attend alike). The rows are read and converted once.
using DotRowsGroupFn = void (*)(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_x, const void* x,
                                size_t x_stride, float* out, size_t out_stride);

// MadRowsFn for n_y heads over the same rows: y_h (y + h * y_stride floats) += sum over r of
// w_h[r] * row_r, w_h at w + h * w_stride; each y_h bit-identical to MadRowsFn's.
using MadRowsGroupFn = void (*)(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_y, const float* w,
                                size_t w_stride, float* y, size_t y_stride);

// One block of attention's online softmax over a head's scores (ops.h softmax_step is the
// reference): x[i] *= scale, the running maximum *max (-infinity before the first block) raised
// to the block's, x[i] = e^(x[i] - max), *sum = *sum * c + the block's sum; returns c =
// e^(old max - new max), by which the caller rescales its weighted sum so far (0 for the first
// block, exactly 1 when the maximum did not move). n >= 1.
using SoftmaxStepFn = float (*)(float* x, int64_t n, float scale, float* max, float* sum);

// out[i] = silu(gate[i]) * up[i], silu(a) = a / (1 + e^-a), for i in [0, n); out may be gate.
using SiluMulFn = void (*)(const float* gate, const float* up, float* out, int64_t n);
// The arithmetic of the F16 x16 kernels (a tile and a GEMV with each other's bits, which
// differ from the row tile's): each output w_r . x_c is the sum, in K order, of the partial
// sums of consecutive blocks of kF16X16SumBlock elements (the last may be shorter), the first
// block's partial being the result so far and every later one added to it; a partial is the
// products of its block accumulated one by one in K order with FMA, starting from zero. Each
// output is one lane of a 16-row vector, so a tile of 16 rows x many columns is fed one
// converted weight vector per column broadcast, not reduced across lanes. Error, worst case:
// (kF16X16SumBlock + blocks) * u * sum |w_k x_k| (the row tile: (n / 16 + 16) * u * ...).
inline constexpr int64_t kF16X16SumBlock = 128;

struct Kernels {
  Isa isa = Isa::Scalar;
  // Indexed by weight type id: dot of one weight row with one activation row in vec_dot_type.
  std::array<VecDotFn, kTensorTypeCount> vec_dot{};
  // Indexed by weight type id; nullptr where matmul calls vec_dot once per activation row.
  std::array<VecDotColsFn, kTensorTypeCount> vec_dot_cols{};
  // Indexed by target type id: converts a float row into that type (activations: F32, F16,
  // BF16, Q8_0, Q8_1, Q8_K). Must produce what the reference quantizer produces.
  std::array<FromFloatFn, kTensorTypeCount> from_float{};
  // Indexed by weight type id; nullptr where no blocked tile exists (matmul then loops vec_dot).
  std::array<GemmTileFn, kTensorTypeCount> gemm_tile{};
  // Indexed by weight type id; nullptr where no GEMV reproduces the tile (matmul then runs
  // decode rows through vec_dot, as the caller's per-row choice says).
  std::array<GemvFn, kTensorTypeCount> gemv{};
  // Indexed by weight type id; nullptr where the path has no kernels for the x16 layout
  // (quant/x16_layout.h). Same contracts as gemm_tile and gemv with the same bits, over a
  // repacked matrix: `w` is the group holding the call's first row (a multiple of 16 rows into
  // the matrix) and `w_stride` the layout's group bytes. Set in pairs. F16 is the exception to
  // "the same bits" (kF16X16SumBlock): its pair agrees with itself, not with the row tile.
  std::array<GemmTileFn, kTensorTypeCount> gemm_tile_x16{};
  std::array<GemvFn, kTensorTypeCount> gemv_x16{};
  // Indexed by KV cache type id (F32, F16); nullptr for the others (attention dequantizes).
  std::array<VecMadFn, kTensorTypeCount> vec_mad{};
  // Indexed by KV cache type id; nullptr where attention loops vec_dot instead.
  std::array<DotRowsFn, kTensorTypeCount> dot_rows{};
  // Indexed by KV cache type id; nullptr where attention calls vec_mad per row.
  std::array<MadRowsFn, kTensorTypeCount> mad_rows{};
  // Indexed by KV cache type id; nullptr where attention runs the heads of a group one by one.
  // Set only beside dot_rows / mad_rows of the same type.
  std::array<DotRowsGroupFn, kTensorTypeCount> dot_rows_group{};
  std::array<MadRowsGroupFn, kTensorTypeCount> mad_rows_group{};
  // Attention's online softmax, one block of a head's scores at a time.
  SoftmaxStepFn softmax_step = nullptr;
  // The feed-forward block's activation (the scalar table's is kernels/ops.h silu_mul).
  SiluMulFn silu_mul = nullptr;
};

// The table for a path; the path must be supported (isa_supported) — throws Error otherwise.
// Built once, for this CPU's maker (build_kernels(isa, cpu_vendor())).
const Kernels& kernels_for(Isa isa);

// The table for a path as built on a CPU of the given maker (isa.h CpuVendor): the variants
// chosen by maker have the same bits, so tests and benchmarks build each maker's table to check
// and time them all. One exception: Intel's AVX-512 table reads F16 in the x16 layout
// (kF16X16SumBlock), so a repacked F16 model rounds differently there. Same errors as
// kernels_for.
Kernels build_kernels(Isa isa, CpuVendor vendor);

// Provided by each path's translation unit (scalar always; the others where compiled in).
void fill_scalar_kernels(Kernels& k);
void fill_avx2_kernels(Kernels& k);
void fill_avx512_kernels(Kernels& k, CpuVendor vendor);
void fill_neon_kernels(Kernels& k);

}  // namespace edgeinfer
