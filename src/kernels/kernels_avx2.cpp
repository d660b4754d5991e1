// AVX2 kernel table. Entries not specialized here stay on the scalar reference.
#include "kernels/simd_avx2.h"

namespace edgeinfer {

void fill_avx2_kernels(Kernels& k) {
  k.isa = Isa::Avx2;
  auto id = [](TensorType t) { return static_cast<size_t>(t); };
  using T = TensorType;

  k.from_float[id(T::F16)] = f16_from_float_avx2;
  k.from_float[id(T::BF16)] = bf16_from_float_avx2;
  k.from_float[id(T::Q8_0)] = q8_0_from_float_avx2;
  k.from_float[id(T::Q8_1)] = q8_1_from_float_avx2;
  k.from_float[id(T::Q8_K)] = q8_k_from_float_avx2;

  k.vec_dot[id(T::F32)] = f32_vec_dot_avx2;
  k.vec_dot[id(T::F16)] = f16_vec_dot_avx2;
  k.vec_dot[id(T::BF16)] = bf16_vec_dot_avx2;
  k.vec_dot[id(T::Q4_0)] = q4_0_vec_dot_avx2;
  k.vec_dot[id(T::Q4_1)] = q4_1_vec_dot_avx2;
  k.vec_dot[id(T::Q5_0)] = q5_0_vec_dot_avx2;
  k.vec_dot[id(T::Q5_1)] = q5_1_vec_dot_avx2;
  k.vec_dot[id(T::Q8_0)] = q8_0_vec_dot_avx2;
  k.vec_dot[id(T::Q2_K)] = q2_k_vec_dot_avx2;
  k.vec_dot[id(T::Q3_K)] = q3_k_vec_dot_avx2;
  k.vec_dot[id(T::Q4_K)] = q4_k_vec_dot_avx2;
  k.vec_dot[id(T::Q5_K)] = q5_k_vec_dot_avx2;
  k.vec_dot[id(T::Q6_K)] = q6_k_vec_dot_avx2;

  k.gemm_tile[id(T::F32)] = f32_gemm_tile_avx2;
  k.gemm_tile[id(T::F16)] = f16_gemm_tile_avx2;
  k.gemm_tile[id(T::BF16)] = bf16_gemm_tile_avx2;
  k.gemm_tile[id(T::Q4_0)] = q4_0_gemm_tile_avx2;
  k.gemm_tile[id(T::Q4_1)] = q4_1_gemm_tile_avx2;
  k.gemm_tile[id(T::Q5_0)] = q5_0_gemm_tile_avx2;
  k.gemm_tile[id(T::Q5_1)] = q5_1_gemm_tile_avx2;
  k.gemm_tile[id(T::Q8_0)] = q8_0_gemm_tile_avx2;
  k.gemm_tile[id(T::Q2_K)] = q2_k_gemm_tile_avx2;
  k.gemm_tile[id(T::Q3_K)] = q3_k_gemm_tile_avx2;
  k.gemm_tile[id(T::Q4_K)] = q4_k_gemm_tile_avx2;
  k.gemm_tile[id(T::Q5_K)] = q5_k_gemm_tile_avx2;
  k.gemm_tile[id(T::Q6_K)] = q6_k_gemm_tile_avx2;
  k.gemv[id(T::Q4_0)] = q4_0_gemv_avx2;

  k.softmax_step = softmax_step_avx2;
  k.silu_mul = silu_mul_avx2;
  k.vec_mad[id(T::F32)] = f32_vec_mad_avx2;
  k.vec_mad[id(T::F16)] = f16_vec_mad_avx2;
  k.dot_rows[id(T::F16)] = f16_dot_rows_avx2;
  k.mad_rows[id(T::F16)] = f16_mad_rows_avx2;
  k.dot_rows_group[id(T::F16)] = f16_dot_rows_group_avx2;
  k.mad_rows_group[id(T::F16)] = f16_mad_rows_group_avx2;
  k.vec_mad[id(T::Q8_0)] = q8_0_vec_mad_avx2;
  k.dot_rows[id(T::Q8_0)] = q8_0_dot_rows_avx2;
  k.mad_rows[id(T::Q8_0)] = q8_0_mad_rows_avx2;
  k.dot_rows_group[id(T::Q8_0)] = q8_0_dot_rows_group_avx2;
  k.mad_rows_group[id(T::Q8_0)] = q8_0_mad_rows_group_avx2;
}

}  // namespace edgeinfer
