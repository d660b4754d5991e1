#pragma once
// The arithmetic of each tensor type we compute with: reference (scalar, portable) conversion
// to and from float, the type activations are converted to before a dot product with a row of
// this type (llama.cpp's vec_dot_type: Q8_0 for Q4_0/Q5_0/Q8_0, Q8_1 for Q4_1/Q5_1, Q8_K for
// every K-quant, F16 for F16, BF16 for BF16, F32 for F32), and the scalar reference dot product.
// SIMD kernels in kernels/ must agree with these references within the budgets their tests state.
#include <cstddef>
#include <cstdint>

#include "quant/tensor_type.h"

namespace edgeinfer {

// Dequantizes n elements (a multiple of block_size) from src into dst.
using ToFloatFn = void (*)(const void* src, float* dst, int64_t n);
// Quantizes n floats (a multiple of block_size) into blocks of this type.
using FromFloatFn = void (*)(const float* src, void* dst, int64_t n);
// *s = dot(x[0..n), y[0..n)); x is a row of this type, y a row of its vec_dot_type.
using VecDotFn = void (*)(int64_t n, float* s, const void* x, const void* y);

struct TypeTraits {
  TensorType type;
  int64_t block_size;
  size_t type_size;
  bool is_quantized;
  ToFloatFn to_float;          // reference dequantization (nullptr: not supported)
  FromFloatFn from_float_ref;  // reference quantization, bit-exact with GGML's *_ref quantizers
  TensorType vec_dot_type;     // what activations become before vec_dot
  VecDotFn vec_dot_ref;        // scalar reference dot product (nullptr: no dot for this type)
};

// Traits for types we compute with (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1,
// Q2_K..Q6_K, Q8_K); nullptr for the others (IQ*, TQ*, integer types).
const TypeTraits* find_type_traits(TensorType t);
// Same, but throws Error("tensor type iq2_xxs is not supported") for the others.
const TypeTraits& type_traits(TensorType t);

// Scalar conversions used everywhere (round-to-nearest-even, as GGML does).
uint16_t fp32_to_fp16(float f);
float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_bf16(float f);
float bf16_to_fp32(uint16_t h);

}  // namespace edgeinfer
