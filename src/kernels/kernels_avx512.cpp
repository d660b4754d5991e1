// AVX-512 kernel table. Entries not specialized here keep what the AVX2 table (filled first,
// see kernels.cpp) or the scalar reference put there.
#include "kernels/simd_avx512.h"

namespace edgeinfer {

void fill_avx512_kernels(Kernels& k, CpuVendor vendor) {
  k.isa = Isa::Avx512;
  auto id = [](TensorType t) { return static_cast<size_t>(t); };
  using T = TensorType;
  const bool intel = vendor == CpuVendor::Intel;

  k.from_float[id(T::F16)] = f16_from_float_avx512;
  k.from_float[id(T::BF16)] = bf16_from_float_avx512;
  k.from_float[id(T::Q8_0)] = q8_0_from_float_avx512;
  k.from_float[id(T::Q8_1)] = q8_1_from_float_avx512;
  k.from_float[id(T::Q8_K)] = q8_k_from_float_avx512;

  k.vec_dot[id(T::F32)] = f32_vec_dot_avx512;
  k.vec_dot[id(T::F16)] = intel ? f16_vec_dot_prefetch_avx512 : f16_vec_dot_avx512;
  k.vec_dot[id(T::Q4_0)] = q4_0_vec_dot_avx512;
  k.vec_dot[id(T::Q4_1)] = q4_1_vec_dot_avx512;
  k.vec_dot[id(T::Q5_0)] = q5_0_vec_dot_avx512;
  k.vec_dot[id(T::Q5_1)] = q5_1_vec_dot_avx512;
  k.vec_dot[id(T::Q8_0)] = q8_0_vec_dot_avx512;
  k.vec_dot[id(T::Q2_K)] = q2_k_vec_dot_avx512;
  k.vec_dot[id(T::Q3_K)] = q3_k_vec_dot_avx512;
  k.vec_dot[id(T::Q4_K)] = q4_k_vec_dot_avx512;
  k.vec_dot[id(T::Q5_K)] = q5_k_vec_dot_avx512;
  k.vec_dot[id(T::Q6_K)] = q6_k_vec_dot_avx512;
  k.vec_dot_cols[id(T::Q4_K)] = q4_k_vec_dot_cols_avx512;
  k.vec_dot_cols[id(T::Q6_K)] = q6_k_vec_dot_cols_avx512;

  k.gemm_tile[id(T::F32)] = f32_gemm_tile_avx512;
  k.gemm_tile[id(T::F16)] = f16_gemm_tile_avx512;
  k.gemm_tile[id(T::Q4_0)] = q4_0_gemm_tile_avx512;
  k.gemm_tile[id(T::Q4_1)] = q4_1_gemm_tile_avx512;
  k.gemm_tile[id(T::Q5_0)] = q5_0_gemm_tile_avx512;
  k.gemm_tile[id(T::Q5_1)] = q5_1_gemm_tile_avx512;
  k.gemm_tile[id(T::Q8_0)] = q8_0_gemm_tile_avx512;
  k.gemm_tile[id(T::Q2_K)] = q2_k_gemm_tile_avx512;
  k.gemm_tile[id(T::Q3_K)] = q3_k_gemm_tile_avx512;
  k.gemm_tile[id(T::Q4_K)] = q4_k_gemm_tile_avx512;
  k.gemm_tile[id(T::Q5_K)] = q5_k_gemm_tile_avx512;
  k.gemm_tile[id(T::Q6_K)] = q6_k_gemm_tile_avx512;

  k.gemv[id(T::Q4_0)] = q4_0_gemv_avx512;
  k.gemv[id(T::Q8_0)] = q8_0_gemv_avx512;
  k.gemm_tile_x16[id(T::Q4_0)] = q4_0_gemm_tile_x16_avx512;
  k.gemm_tile_x16[id(T::Q8_0)] = q8_0_gemm_tile_x16_avx512;
  // Intel streams Q4_0 and Q8_0 faster with requests ahead, Zen 4 without (gemm_q_avx512.cpp
  // gemv_x16).
  k.gemv_x16[id(T::Q4_0)] = intel ? q4_0_gemv_x16_prefetch_avx512 : q4_0_gemv_x16_avx512;
  k.gemv_x16[id(T::Q8_0)] = intel ? q8_0_gemv_x16_prefetch_avx512 : q8_0_gemv_x16_avx512;
  k.gemm_tile_x16[id(T::Q6_K)] = q6_k_gemm_tile_x16_avx512;
  k.gemv_x16[id(T::Q6_K)] = q6_k_gemv_x16_avx512;
  k.gemm_tile_x16[id(T::Q4_K)] = q4_k_gemm_tile_x16_avx512;
  k.gemv_x16[id(T::Q4_K)] = intel ? q4_k_gemv_x16_line_avx512 : q4_k_gemv_x16_avx512;
  // F16 over the x16 layout, with its own summation order (kernels.h kF16X16SumBlock): on
  // Intel's two FMA ports the row tile's loads and conversions starve them; Zen 4 (one port's
  // rate) runs the row tile at ~89% of its peak already and was not measured with this one.
  if (intel) {
    k.gemm_tile_x16[id(T::F16)] = f16_gemm_tile_x16_avx512;
    k.gemv_x16[id(T::F16)] = f16_gemv_x16_avx512;
  }

  k.softmax_step = softmax_step_avx512;
  k.silu_mul = silu_mul_avx512;
  k.vec_mad[id(T::F32)] = f32_vec_mad_avx512;
  k.vec_mad[id(T::F16)] = f16_vec_mad_avx512;
  k.dot_rows[id(T::F16)] = f16_dot_rows_avx512;
  k.mad_rows[id(T::F16)] = f16_mad_rows_avx512;
  k.dot_rows_group[id(T::F16)] = f16_dot_rows_group_avx512;
  k.mad_rows_group[id(T::F16)] = f16_mad_rows_group_avx512;
  k.vec_mad[id(T::Q8_0)] = q8_0_vec_mad_avx512;
  k.dot_rows[id(T::Q8_0)] = q8_0_dot_rows_avx512;
  k.mad_rows[id(T::Q8_0)] = q8_0_mad_rows_avx512;
  k.dot_rows_group[id(T::Q8_0)] = q8_0_dot_rows_group_avx512;
  k.mad_rows_group[id(T::Q8_0)] = q8_0_mad_rows_group_avx512;

  // BF16 weights with vdpbf16ps where the CPU has AVX512_BF16 (bf16_avx512bf16.cpp); without it
  // the AVX2 BF16 kernels stay.
  if (avx512_has_bf16()) {
    k.vec_dot[id(T::BF16)] = bf16_vec_dot_avx512;
    k.gemm_tile[id(T::BF16)] = bf16_gemm_tile_avx512;
  }
}

}  // namespace edgeinfer
