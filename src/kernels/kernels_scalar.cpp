// The scalar kernel table: every entry is the portable reference from the traits table, so
// this path is the yardstick the SIMD paths are tested against.
#include "kernels/kernels.h"
#include "quant/type_traits.h"

namespace edgeinfer {

void fill_scalar_kernels(Kernels& k) {
  k.isa = Isa::Scalar;
  for (uint32_t id = 0; id < kTensorTypeCount; ++id) {
    const TypeTraits* tr = find_type_traits(static_cast<TensorType>(id));
    if (!tr) continue;
    k.vec_dot[id] = tr->vec_dot_ref;
    k.from_float[id] = tr->from_float_ref;
    k.gemm_tile[id] = nullptr;  // matmul loops vec_dot on this path
  }
}

}  // namespace edgeinfer
