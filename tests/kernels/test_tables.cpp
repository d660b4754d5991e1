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
  }
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
