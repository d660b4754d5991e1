// The SIMD tables really specialize what they claim: a path that silently fell back to the
// scalar reference would pass every accuracy test and lose all its speed.
#include <gtest/gtest.h>

#include "kernel_test_data.h"
#include "kernels/ops.h"
#include "quant/type_traits.h"

namespace edgeinfer::kernel_test {
namespace {

TEST(KernelTables, SimdPathsSpecializeTheHotTypes) {
  for (Isa isa : simd_isas()) {
    const Kernels& k = kernels_for(isa);
    EXPECT_EQ(k.isa, isa);
    for (TensorType t : activation_types()) {
      EXPECT_NE(k.from_float[static_cast<size_t>(t)], type_traits(t).from_float_ref)
          << isa_name(isa) << " from_float " << tensor_type_name(t);
    }
    for (TensorType t : dot_types()) {
      EXPECT_NE(k.vec_dot[static_cast<size_t>(t)], type_traits(t).vec_dot_ref)
          << isa_name(isa) << " vec_dot " << tensor_type_name(t);
    }
    EXPECT_NE(k.silu_mul, &silu_mul) << isa_name(isa) << " silu_mul";
    EXPECT_NE(k.softmax_step, &softmax_step) << isa_name(isa) << " softmax_step";
  }
}

// Every SIMD path has a register-blocked prefill tile for every weight type (matmul would
// otherwise loop vec_dot over the prompt's rows).
TEST(KernelTables, SimdPathsHaveATileForEveryType) {
  for (Isa isa : simd_isas()) {
    const Kernels& k = kernels_for(isa);
    for (TensorType t : dot_types()) {
      EXPECT_NE(k.gemm_tile[static_cast<size_t>(t)], nullptr) << isa_name(isa) << " gemm_tile " << tensor_type_name(t);
    }
  }
}

// The AVX-512 path takes its BF16 kernels from AVX512_BF16 where the CPU has it, from AVX2 where
// it does not (the path itself runs on AVX-512 CPUs without BF16).
TEST(KernelTables, Avx512BF16KernelsFollowTheCpu) {
  if (!isa_supported(Isa::Avx512)) GTEST_SKIP() << "no AVX-512 here";
  const Kernels& k = kernels_for(Isa::Avx512);
  const Kernels& a = kernels_for(Isa::Avx2);
  const size_t bf16 = static_cast<size_t>(TensorType::BF16);
  EXPECT_EQ(k.vec_dot[bf16] == a.vec_dot[bf16], !avx512_has_bf16());
  EXPECT_EQ(k.gemm_tile[bf16] == a.gemm_tile[bf16], !avx512_has_bf16());
}

TEST(KernelTables, ScalarPathIsTheReference) {
  const Kernels& k = kernels_for(Isa::Scalar);
  for (TensorType t : dot_types()) {
    EXPECT_EQ(k.vec_dot[static_cast<size_t>(t)], type_traits(t).vec_dot_ref);
    EXPECT_EQ(k.gemm_tile[static_cast<size_t>(t)], nullptr);
  }
  EXPECT_EQ(k.silu_mul, &silu_mul);
}

}  // namespace
}  // namespace edgeinfer::kernel_test
