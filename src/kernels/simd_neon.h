#pragma once
// Internal to the NEON path: include only from *_neon.cpp files (compiled with
// -march=armv8.2-a+dotprod+fp16; the table is used only where the CPU reports the dot-product
// extension). Helpers are `static inline` so that no out-of-line copy built with these flags
// can be picked by the linker for code that must run on any ARMv8-A; for the same reason these
// files avoid std:: numeric templates (std::min, std::max, ...).
#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/kernels.h"
#include "quant/blocks.h"

namespace edgeinfer {

// --- entry points of the NEON path (one family per file) -----------------------------------
// convert_neon.cpp: activations, bit-exact with the reference quantizers.
void f16_from_float_neon(const float* src, void* dst, int64_t n);
void bf16_from_float_neon(const float* src, void* dst, int64_t n);
void q8_0_from_float_neon(const float* src, void* dst, int64_t n);
void q8_1_from_float_neon(const float* src, void* dst, int64_t n);
void q8_k_from_float_neon(const float* src, void* dst, int64_t n);
// dot_float_neon.cpp
void f32_vec_dot_neon(int64_t n, float* s, const void* x, const void* y);
void f16_vec_dot_neon(int64_t n, float* s, const void* x, const void* y);
void bf16_vec_dot_neon(int64_t n, float* s, const void* x, const void* y);
// dot_q_neon.cpp: the 32-wide types.
void q4_0_vec_dot_neon(int64_t n, float* s, const void* x, const void* y);
void q4_1_vec_dot_neon(int64_t n, float* s, const void* x, const void* y);
void q5_0_vec_dot_neon(int64_t n, float* s, const void* x, const void* y);
void q5_1_vec_dot_neon(int64_t n, float* s, const void* x, const void* y);
void q8_0_vec_dot_neon(int64_t n, float* s, const void* x, const void* y);
// dot_k_neon.cpp: K-quants against Q8_K.
void q2_k_vec_dot_neon(int64_t n, float* s, const void* x, const void* y);
void q3_k_vec_dot_neon(int64_t n, float* s, const void* x, const void* y);
void q4_k_vec_dot_neon(int64_t n, float* s, const void* x, const void* y);
void q5_k_vec_dot_neon(int64_t n, float* s, const void* x, const void* y);
void q6_k_vec_dot_neon(int64_t n, float* s, const void* x, const void* y);
// Prefill tiles (GemmTileFn). gemm_q_neon.cpp: the 32-wide types.
void q4_0_gemm_tile_neon(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride);
void q4_1_gemm_tile_neon(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride);
void q5_0_gemm_tile_neon(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride);
void q5_1_gemm_tile_neon(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride);
void q8_0_gemm_tile_neon(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride);
// gemm_k_neon.cpp: K-quants against Q8_K.
void q2_k_gemm_tile_neon(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride);
void q3_k_gemm_tile_neon(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride);
void q4_k_gemm_tile_neon(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride);
void q5_k_gemm_tile_neon(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride);
void q6_k_gemm_tile_neon(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride);
// gemm_float_neon.cpp: F32, F16, BF16.
void f32_gemm_tile_neon(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                        size_t x_stride, float* y, size_t y_stride);
void f16_gemm_tile_neon(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                        size_t x_stride, float* y, size_t y_stride);
void bf16_gemm_tile_neon(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride);

namespace neon {

// IEEE half <-> float with the hardware's round-to-nearest-even (the reference's rounding).
static inline float f16_to_f32(uint16_t bits) {
  __fp16 h;
  std::memcpy(&h, &bits, sizeof h);
  return static_cast<float>(h);
}

static inline uint16_t f32_to_f16(float f) {
  const __fp16 h = static_cast<__fp16>(f);
  uint16_t bits;
  std::memcpy(&bits, &h, sizeof bits);
  return bits;
}

static inline uint32_t load_u32(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

static inline int8x16_t load_s8(const int8_t* p) { return vld1q_s8(p); }
static inline uint8x16_t load_u8(const uint8_t* p) { return vld1q_u8(p); }

// Lane-wise int32 sums of 4 products each: acc + dot(a[0..16), b[0..16)) in 4 lanes.
static inline int32x4_t dot16(int32x4_t acc, int8x16_t a, int8x16_t b) { return vdotq_s32(acc, a, b); }

// Byte k of the result (k = 0..15) is 0xFF when bit k of `bits` (16 bits) is set.
static inline uint8x16_t bits16_to_bytes(uint32_t bits) {
  static const uint8_t kBit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
  const uint8x16_t spread = vcombine_u8(vdup_n_u8(static_cast<uint8_t>(bits & 0xff)),
                                        vdup_n_u8(static_cast<uint8_t>((bits >> 8) & 0xff)));
  return vtstq_u8(spread, vld1q_u8(kBit));
}

// 16 values of a Q8_0 row from element 16 * j on, in 4 vectors: d * q as float, the value Q8_0's
// to_float gives (attention's V rows of a Q8_0 cache).
static inline void q8_0_values16(const BlockQ8_0* b, int64_t j, float32x4_t v[4]) {
  const BlockQ8_0& blk = b[j / 2];
  const int8x16_t q = vld1q_s8(blk.qs + 16 * (j % 2));
  const int16x8_t lo = vmovl_s8(vget_low_s8(q)), hi = vmovl_high_s8(q);
  const float d = f16_to_f32(blk.d);
  v[0] = vmulq_n_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo))), d);
  v[1] = vmulq_n_f32(vcvtq_f32_s32(vmovl_high_s16(lo)), d);
  v[2] = vmulq_n_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi))), d);
  v[3] = vmulq_n_f32(vcvtq_f32_s32(vmovl_high_s16(hi)), d);
}

}  // namespace neon
// attention's online-softmax step (kernels/softmax_neon.cpp)
float softmax_step_neon(float* x, int64_t n, float scale, float* max, float* sum);
// the feed-forward SiLU·mul (kernels/silu_neon.cpp)
void silu_mul_neon(const float* gate, const float* up, float* out, int64_t n);
// attention's y += w * x (kernels/vec_mad_neon.cpp)
void f32_vec_mad_neon(int64_t n, float* y, const void* x, float w);
void f16_vec_mad_neon(int64_t n, float* y, const void* x, float w);
void q8_0_vec_mad_neon(int64_t n, float* y, const void* x, float w);
// attention over an F16 cache's rows, one head or a GQA group (kernels/attn_rows_neon.cpp)
void f16_dot_rows_neon(int64_t n, int64_t n_rows, const void* rows, size_t stride, const void* x, float* out);
void f16_mad_rows_neon(int64_t n, int64_t n_rows, const void* rows, size_t stride, const float* w, float* y);
void f16_dot_rows_group_neon(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_x, const void* x,
                             size_t x_stride, float* out, size_t out_stride);
void f16_mad_rows_group_neon(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_y, const float* w,
                             size_t w_stride, float* y, size_t y_stride);
// ... and over a Q8_0 cache's: V rows in attn_rows_neon.cpp (the same f32 block kernels), K rows
// in dot_q_neon.cpp (integer dots against the Q8_0 query, the bits of q8_0_vec_dot_neon)
void q8_0_mad_rows_neon(int64_t n, int64_t n_rows, const void* rows, size_t stride, const float* w, float* y);
void q8_0_mad_rows_group_neon(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_y,
                              const float* w, size_t w_stride, float* y, size_t y_stride);
void q8_0_dot_rows_neon(int64_t n, int64_t n_rows, const void* rows, size_t stride, const void* x, float* out);
void q8_0_dot_rows_group_neon(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_x, const void* x,
                              size_t x_stride, float* out, size_t out_stride);

}  // namespace edgeinfer
