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
// gemm_q_avx2.cpp (the 32-wide quant types), gemm_float_avx2.cpp: prefill tiles (GemmTileFn).
void q4_0_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride);
void q8_0_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride);
void q4_1_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride);
void q5_0_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride);
void q5_1_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride);
void f16_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                        size_t x_stride, float* y, size_t y_stride);
void f32_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                        size_t x_stride, float* y, size_t y_stride);
void bf16_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride);
// gemv_q_avx2.cpp: Q4_0 decode GEMV with the tile's bits (GemvFn).
void q4_0_gemv_avx2(int64_t n, int64_t n_rows, const void* w, size_t w_stride, const void* x, float* y);
// gemm_k_avx2.cpp: prefill tiles of the K-quants (Q8_K activations).
void q2_k_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride);
void q3_k_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride);
void q4_k_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride);
void q5_k_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                         size_t x_stride, float* y, size_t y_stride);
void q6_k_gemm_tile_avx2(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
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

// Lane r = avx2::hsum(a[r]) for 8 vectors, bit for bit (the same tree: lanes i + i+4, then
// i + i+2, then i + i+1, three transposing levels and one permute).
static inline __m256 hsum8(const __m256 a[8]) {
  __m256 b[4], c[2];
  for (int m = 0; m < 4; ++m) {  // 128-bit lane 0: a[2m]'s four sums, lane 1: a[2m+1]'s
    b[m] = _mm256_add_ps(_mm256_permute2f128_ps(a[2 * m], a[2 * m + 1], 0x20),
                         _mm256_permute2f128_ps(a[2 * m], a[2 * m + 1], 0x31));
  }
  for (int p = 0; p < 2; ++p) {  // lane k: [a[4p+k] two sums | a[4p+2+k] two sums]
    c[p] = _mm256_add_ps(_mm256_shuffle_ps(b[2 * p], b[2 * p + 1], 0x44),
                         _mm256_shuffle_ps(b[2 * p], b[2 * p + 1], 0xEE));
  }
  // Lane 4k + j holds the sum of a[k + 2j].
  const __m256 e = _mm256_add_ps(_mm256_shuffle_ps(c[0], c[1], 0x88), _mm256_shuffle_ps(c[0], c[1], 0xDD));
  return _mm256_permutevar8x32_ps(e, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
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

// 8 values of a Q8_0 row from element 8 * j on: d * q as float, the value Q8_0's to_float gives
// (attention's V rows of a Q8_0 cache).
static inline __m256 q8_0_values8(const BlockQ8_0* b, int64_t j) {
  const BlockQ8_0& blk = b[j / 4];
  const __m128i q = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk.qs + 8 * (j % 4)));
  return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q)), _mm256_set1_ps(f16_to_f32(blk.d)));
}

// 8 rows x 16 bytes at rows[r] + off -> t[d] lane r = dword d of row r (the prefill tiles'
// layout: one weight row per int32 lane).
static inline void transpose8x4(const uint8_t* const* rows, size_t off, __m256i t[4]) {
  __m256i z[4];
  for (int g = 0; g < 4; ++g) {
    z[g] = _mm256_inserti128_si256(_mm256_castsi128_si256(loadu128(rows[g] + off)), loadu128(rows[g + 4] + off), 1);
  }
  // Within each 128-bit lane L, z[g] holds row g + 4L: a 4x4 dword transpose per lane leaves
  // dword d of rows 0..7 in order in t[d].
  const __m256i a0 = _mm256_unpacklo_epi32(z[0], z[1]), a1 = _mm256_unpackhi_epi32(z[0], z[1]);
  const __m256i a2 = _mm256_unpacklo_epi32(z[2], z[3]), a3 = _mm256_unpackhi_epi32(z[2], z[3]);
  t[0] = _mm256_unpacklo_epi64(a0, a2);
  t[1] = _mm256_unpackhi_epi64(a0, a2);
  t[2] = _mm256_unpacklo_epi64(a1, a3);
  t[3] = _mm256_unpackhi_epi64(a1, a3);
}

// The f16 fields at rows[r] + off of 8 rows as 8 floats.
static inline __m256 gather_f16x8(const uint8_t* const* rows, size_t off) {
  alignas(16) uint16_t h[8];
  for (int r = 0; r < 8; ++r) std::memcpy(&h[r], rows[r] + off, 2);
  return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(h)));
}

}  // namespace avx2
// attention's online-softmax step (kernels/softmax_avx2.cpp)
float softmax_step_avx2(float* x, int64_t n, float scale, float* max, float* sum);
// the feed-forward SiLU·mul (kernels/silu_avx2.cpp)
void silu_mul_avx2(const float* gate, const float* up, float* out, int64_t n);
// attention's y += w * x (kernels/vec_mad_avx2.cpp)
void f32_vec_mad_avx2(int64_t n, float* y, const void* x, float w);
void f16_vec_mad_avx2(int64_t n, float* y, const void* x, float w);
void q8_0_vec_mad_avx2(int64_t n, float* y, const void* x, float w);
// attention over an F16 cache's rows, one head or a GQA group (kernels/attn_rows_avx2.cpp)
void f16_dot_rows_avx2(int64_t n, int64_t n_rows, const void* rows, size_t stride, const void* x, float* out);
void f16_mad_rows_avx2(int64_t n, int64_t n_rows, const void* rows, size_t stride, const float* w, float* y);
void f16_dot_rows_group_avx2(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_x, const void* x,
                             size_t x_stride, float* out, size_t out_stride);
void f16_mad_rows_group_avx2(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_y, const float* w,
                             size_t w_stride, float* y, size_t y_stride);
// ... and over a Q8_0 cache's: V rows in attn_rows_avx2.cpp (the same f32 block kernels), K rows
// in dot_q_avx2.cpp (integer dots against the Q8_0 query, the bits of q8_0_vec_dot_avx2)
void q8_0_mad_rows_avx2(int64_t n, int64_t n_rows, const void* rows, size_t stride, const float* w, float* y);
void q8_0_mad_rows_group_avx2(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_y,
                              const float* w, size_t w_stride, float* y, size_t y_stride);
void q8_0_dot_rows_avx2(int64_t n, int64_t n_rows, const void* rows, size_t stride, const void* x, float* out);
void q8_0_dot_rows_group_avx2(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_x, const void* x,
                              size_t x_stride, float* out, size_t out_stride);

}  // namespace edgeinfer
