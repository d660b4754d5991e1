// F32, F16 and BF16 rows: conversions and the reference dot products. GGML's generic dots
// accumulate each product (computed in float) into a double, and so do these.
#include <cstring>

#include "quant/quant_rows.h"
#include "quant/type_traits.h"

namespace edgeinfer {

void f32_to_float(const void* src, float* dst, int64_t n) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void f32_from_float_ref(const float* src, void* dst, int64_t n) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void f32_vec_dot_ref(int64_t n, float* s, const void* x, const void* y) {
  const float* a = static_cast<const float*>(x);
  const float* b = static_cast<const float*>(y);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(a[i] * b[i]);
  *s = static_cast<float>(sum);
}

void f16_to_float(const void* src, float* dst, int64_t n) {
  const uint16_t* h = static_cast<const uint16_t*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(h[i]);
}

void f16_from_float_ref(const float* src, void* dst, int64_t n) {
  uint16_t* h = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < n; ++i) h[i] = fp32_to_fp16(src[i]);
}

void f16_vec_dot_ref(int64_t n, float* s, const void* x, const void* y) {
  const uint16_t* a = static_cast<const uint16_t*>(x);
  const uint16_t* b = static_cast<const uint16_t*>(y);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(fp16_to_fp32(a[i]) * fp16_to_fp32(b[i]));
  *s = static_cast<float>(sum);
}

void bf16_to_float(const void* src, float* dst, int64_t n) {
  const uint16_t* h = static_cast<const uint16_t*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(h[i]);
}

void bf16_from_float_ref(const float* src, void* dst, int64_t n) {
  uint16_t* h = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < n; ++i) h[i] = fp32_to_bf16(src[i]);
}

void bf16_vec_dot_ref(int64_t n, float* s, const void* x, const void* y) {
  const uint16_t* a = static_cast<const uint16_t*>(x);
  const uint16_t* b = static_cast<const uint16_t*>(y);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(bf16_to_fp32(a[i]) * bf16_to_fp32(b[i]));
  *s = static_cast<float>(sum);
}

}  // namespace edgeinfer
