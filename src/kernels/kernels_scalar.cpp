// The scalar kernel table: every entry is the portable reference from the traits table, so
// this path is the yardstick the SIMD paths are tested against.
#include "kernels/kernels.h"
#include "kernels/ops.h"
#include "quant/blocks.h"
#include "quant/type_traits.h"

namespace edgeinfer {

namespace {

void f32_vec_mad_ref(int64_t n, float* y, const void* x, float w) {
  const float* v = static_cast<const float*>(x);
  for (int64_t i = 0; i < n; ++i) y[i] += w * v[i];
}

void f16_vec_mad_ref(int64_t n, float* y, const void* x, float w) {
  const uint16_t* v = static_cast<const uint16_t*>(x);
  for (int64_t i = 0; i < n; ++i) y[i] += w * fp16_to_fp32(v[i]);
}

// Q8_0 rows (n a multiple of 32): element i is d * q[i], as to_float gives it.
void q8_0_vec_mad_ref(int64_t n, float* y, const void* x, float w) {
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(x);
  for (int64_t i = 0; i < n; ++i) {
    const BlockQ8_0& blk = b[i / kQK];
    y[i] += w * (fp16_to_fp32(blk.d) * static_cast<float>(blk.qs[i % kQK]));
  }
}

}  // namespace

void fill_scalar_kernels(Kernels& k) {
  k.isa = Isa::Scalar;
  for (uint32_t id = 0; id < kTensorTypeCount; ++id) {
    const TypeTraits* tr = find_type_traits(static_cast<TensorType>(id));
    if (!tr) continue;
    k.vec_dot[id] = tr->vec_dot_ref;
    k.from_float[id] = tr->from_float_ref;
    k.gemm_tile[id] = nullptr;  // matmul loops vec_dot on this path
  }
  k.vec_mad[static_cast<size_t>(TensorType::F32)] = f32_vec_mad_ref;
  k.vec_mad[static_cast<size_t>(TensorType::F16)] = f16_vec_mad_ref;
  k.vec_mad[static_cast<size_t>(TensorType::Q8_0)] = q8_0_vec_mad_ref;
  k.softmax_step = softmax_step;
  k.silu_mul = silu_mul;
}

}  // namespace edgeinfer
