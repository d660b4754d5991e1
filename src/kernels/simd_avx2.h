#pragma once
// Internal to the AVX2 path: include only from *_avx2.cpp files (compiled with
// -mavx2 -mfma -mf16c -mbmi2). Helpers are `static inline` so that no out-of-line copy built
// with these flags can be picked by the linker for code that must run on any x86-64; for the
// same reason these files avoid std:: numeric templates (std::min, std::max, ...).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/kernels.h"
#include "quant/blocks.h"

namespace edgeinfer {

// --- entry points of the AVX2 path (one family per file) -----------------------------------
// convert_avx2.cpp: activations, bit-exact with the reference quantizers.
void f16_from_float_avx2(const float* src, void* dst, int64_t n);
void bf16_from_float_avx2(const float* src, void* dst, int64_t n);
void q8_0_from_float_avx2(const float* src, void* dst, int64_t n);
void q8_1_from_float_avx2(const float* src, void* dst, int64_t n);
void q8_k_from_float_avx2(const float* src, void* dst, int64_t n);
// dot_float_avx2.cpp
void f32_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y);
void f16_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y);
void bf16_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y);
// dot_q_avx2.cpp: the 32-wide types.
void q4_0_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y);
void q4_1_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y);
void q5_0_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y);
void q5_1_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y);
void q8_0_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y);
// dot_k_avx2.cpp: K-quants against Q8_K.
void q2_k_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y);
void q3_k_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y);
void q4_k_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y);
void q5_k_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y);
void q6_k_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y);
// gemm_q_avx2.cpp, gemm_float_avx2.cpp: prefill tiles (GemmTileFn).
void q4_0_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride);
void q8_0_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride);
void f16_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                        size_t x_stride, float* y, size_t y_stride);
void f32_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                        size_t x_stride, float* y, size_t y_stride);
void bf16_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride);

namespace avx2 {

static inline float f16_to_f32(uint16_t h) { return _cvtsh_ss(h); }

static inline uint32_t load_u32(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

static inline __m256i loadu256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
static inline __m128i loadu128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

static inline float hsum(__m256 v) {
  const __m128 a = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 b = _mm_add_ps(a, _mm_movehl_ps(a, a));
  return _mm_cvtss_f32(_mm_add_ss(b, _mm_movehdup_ps(b)));
}

static inline int32_t hsum_i32(__m256i v) {
  const __m128i a = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  const __m128i b = _mm_add_epi32(a, _mm_unpackhi_epi64(a, a));
  return _mm_cvtsi128_si32(_mm_add_epi32(b, _mm_shuffle_epi32(b, 1)));
}

// int16 pairs of u * s (u unsigned, s signed bytes), summed into int32 lanes of 4 products.
static inline __m256i dot_u8s8(__m256i u, __m256i s) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}

// 32 elements of a Q4 block in order: low nibbles of the 16 bytes, then the high nibbles.
static inline __m256i unpack_nibbles(const uint8_t* qs) {
  const __m128i v = loadu128(qs);
  const __m256i d = _mm256_inserti128_si256(_mm256_castsi128_si256(v), _mm_srli_epi16(v, 4), 1);
  return _mm256_and_si256(d, _mm256_set1_epi8(0x0F));
}

// Byte j is 0xFF when bit j of the 32-bit word is set, else 0.
static inline __m256i bits_to_bytes(uint32_t bits) {
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(bits)),
      _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0x0000000000000000));
  const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
  return _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
}

}  // namespace avx2
// attention's online-softmax step (kernels/softmax_avx2.cpp)
float softmax_step_avx2(float* x, int64_t n, float scale, float* max, float* sum);
// the feed-forward SiLU·mul (kernels/silu_avx2.cpp)
void silu_mul_avx2(const float* gate, const float* up, float* out, int64_t n);
// attention's y += w * x (kernels/vec_mad_avx2.cpp)
void f32_vec_mad_avx2(int64_t n, float* y, const void* x, float w);
void f16_vec_mad_avx2(int64_t n, float* y, const void* x, float w);
// attention over an F16 cache's rows, one head or a GQA group (kernels/attn_rows_avx2.cpp)
void f16_dot_rows_avx2(int64_t n, int64_t n_rows, const void* rows, size_t stride, const void* x, float* out);
void f16_mad_rows_avx2(int64_t n, int64_t n_rows, const void* rows, size_t stride, const float* w, float* y);
void f16_dot_rows_group_avx2(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_x, const void* x,
                             size_t x_stride, float* out, size_t out_stride);
void f16_mad_rows_group_avx2(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_y, const float* w,
                             size_t w_stride, float* y, size_t y_stride);

}  // namespace edgeinfer
