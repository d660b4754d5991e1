#pragma once
// The reference row functions behind the traits table (quant/type_traits.h), one set per type.
// Shapes: n is the element count of the row (a multiple of the type's block size); quantized
// rows are arrays of the block structs of quant/blocks.h; F16/BF16 rows are uint16_t arrays.
//   <t>_to_float(src, dst, n):        n floats out
//   <t>_from_float_ref(src, dst, n):  bit-exact with GGML's quantize_row_<t>_ref
//   <t>_vec_dot_ref(n, s, x, y):      *s = x . y, x a row of <t>, y a row of its vec_dot_type,
//                                     with the arithmetic (and float rounding order) of GGML's
//                                     generic C dot kernels
// Callers normally go through type_traits(); these are public for tests and for SIMD kernels
// that fall back to the reference on a row tail.
#include <cstdint>

namespace edgeinfer {

// --- plain types (quant/plain_types.cpp) ---------------------------------------------------
void f32_to_float(const void* src, float* dst, int64_t n);
void f32_from_float_ref(const float* src, void* dst, int64_t n);
void f32_vec_dot_ref(int64_t n, float* s, const void* x, const void* y);  // double accumulation
void f16_to_float(const void* src, float* dst, int64_t n);
void f16_from_float_ref(const float* src, void* dst, int64_t n);
void f16_vec_dot_ref(int64_t n, float* s, const void* x, const void* y);  // y is F16
void bf16_to_float(const void* src, float* dst, int64_t n);
void bf16_from_float_ref(const float* src, void* dst, int64_t n);
void bf16_vec_dot_ref(int64_t n, float* s, const void* x, const void* y);  // y is BF16

// --- 32-wide legacy quants (quant/q4_q5.cpp) ------------------------------------------------
void q4_0_to_float(const void* src, float* dst, int64_t n);
void q4_0_from_float_ref(const float* src, void* dst, int64_t n);
void q4_0_vec_dot_ref(int64_t n, float* s, const void* x, const void* y);  // y is Q8_0
void q4_1_to_float(const void* src, float* dst, int64_t n);
void q4_1_from_float_ref(const float* src, void* dst, int64_t n);
void q4_1_vec_dot_ref(int64_t n, float* s, const void* x, const void* y);  // y is Q8_1
void q5_0_to_float(const void* src, float* dst, int64_t n);
void q5_0_from_float_ref(const float* src, void* dst, int64_t n);
void q5_0_vec_dot_ref(int64_t n, float* s, const void* x, const void* y);  // y is Q8_0
void q5_1_to_float(const void* src, float* dst, int64_t n);
void q5_1_from_float_ref(const float* src, void* dst, int64_t n);
void q5_1_vec_dot_ref(int64_t n, float* s, const void* x, const void* y);  // y is Q8_1

// --- 8-bit types (quant/q8.cpp) -------------------------------------------------------------
void q8_0_to_float(const void* src, float* dst, int64_t n);
void q8_0_from_float_ref(const float* src, void* dst, int64_t n);
void q8_0_vec_dot_ref(int64_t n, float* s, const void* x, const void* y);  // y is Q8_0
void q8_1_to_float(const void* src, float* dst, int64_t n);
void q8_1_from_float_ref(const float* src, void* dst, int64_t n);
void q8_1_vec_dot_ref(int64_t n, float* s, const void* x, const void* y);  // y is Q8_1
void q8_k_to_float(const void* src, float* dst, int64_t n);
void q8_k_from_float_ref(const float* src, void* dst, int64_t n);
void q8_k_vec_dot_ref(int64_t n, float* s, const void* x, const void* y);  // y is Q8_K
// llama.cpp's x86 (AVX/AVX2/AVX-512) builds quantize activations with a SIMD routine that is
// NOT its _ref: multiplier 127/amax instead of 1/(amax/127), and round-half-to-even instead of
// round-half-away. These reproduce that routine bit for bit (same block format as the refs).
void q8_0_from_float_x86(const float* src, void* dst, int64_t n);
void q8_1_from_float_x86(const float* src, void* dst, int64_t n);

// --- K-quants (quant/k_quants_*.cpp); every dot takes a Q8_K row as y ------------------------
void q2_k_to_float(const void* src, float* dst, int64_t n);
void q2_k_from_float_ref(const float* src, void* dst, int64_t n);
void q2_k_vec_dot_ref(int64_t n, float* s, const void* x, const void* y);
void q3_k_to_float(const void* src, float* dst, int64_t n);
void q3_k_from_float_ref(const float* src, void* dst, int64_t n);
void q3_k_vec_dot_ref(int64_t n, float* s, const void* x, const void* y);
void q4_k_to_float(const void* src, float* dst, int64_t n);
void q4_k_from_float_ref(const float* src, void* dst, int64_t n);
void q4_k_vec_dot_ref(int64_t n, float* s, const void* x, const void* y);
void q5_k_to_float(const void* src, float* dst, int64_t n);
void q5_k_from_float_ref(const float* src, void* dst, int64_t n);
void q5_k_vec_dot_ref(int64_t n, float* s, const void* x, const void* y);
void q6_k_to_float(const void* src, float* dst, int64_t n);
void q6_k_from_float_ref(const float* src, void* dst, int64_t n);
void q6_k_vec_dot_ref(int64_t n, float* s, const void* x, const void* y);

}  // namespace edgeinfer
