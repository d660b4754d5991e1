#pragma once
// Internal to the AVX-512 path: include only from *_avx512.cpp files (compiled with the
// AVX-512 F/BW/VL/DQ/VNNI flags) and *_avx512bf16.cpp (+ BF16). Helpers are `static inline` so that no out-of-line copy
// built with these flags can be picked by the linker for code that must run on any x86-64;
// for the same reason these files avoid std:: numeric templates (std::min, std::max, ...).
#include <immintrin.h>

// GCC 12 reports its own avx512fintrin.h helpers (the _mm512_undefined_* idiom) as "maybe
// uninitialized" once inlined; the warning is a known false positive.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/kernels.h"
#include "quant/blocks.h"

namespace edgeinfer {

// --- entry points of the AVX-512 path (one family per file) --------------------------------
// convert_avx512.cpp: activations, bit-exact with the reference quantizers.
void f16_from_float_avx512(const float* src, void* dst, int64_t n);
void bf16_from_float_avx512(const float* src, void* dst, int64_t n);
void q8_0_from_float_avx512(const float* src, void* dst, int64_t n);
void q8_1_from_float_avx512(const float* src, void* dst, int64_t n);
void q8_k_from_float_avx512(const float* src, void* dst, int64_t n);
// dot_float_avx512.cpp
void f32_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y);
void f16_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y);
void f16_vec_dot_prefetch_avx512(int64_t n, float* s, const void* x, const void* y);
// dot_q_avx512.cpp: the 32-wide types.
void q4_0_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y);
void q4_1_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y);
void q5_0_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y);
void q5_1_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y);
void q8_0_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y);
// dot_k_avx512.cpp: K-quants against Q8_K.
void q2_k_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y);
void q3_k_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y);
void q4_k_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y);
void q5_k_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y);
void q6_k_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y);
// VecDotColsFn of Q4_K and Q6_K (dot_k_avx512.cpp).
void q4_k_vec_dot_cols_avx512(int64_t n, const void* w, int64_t n_x, const void* x, size_t x_stride, float* y,
                              size_t y_stride);
void q6_k_vec_dot_cols_avx512(int64_t n, const void* w, int64_t n_x, const void* x, size_t x_stride, float* y,
                              size_t y_stride);
// gemm_q_avx512.cpp, gemm_k_avx512.cpp, gemm_float_avx512.cpp: prefill tiles (GemmTileFn).
void q4_0_gemm_tile_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                           const void* x, size_t x_stride, float* y, size_t y_stride);
void q4_1_gemm_tile_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                           const void* x, size_t x_stride, float* y, size_t y_stride);
void q5_0_gemm_tile_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                           const void* x, size_t x_stride, float* y, size_t y_stride);
void q5_1_gemm_tile_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                           const void* x, size_t x_stride, float* y, size_t y_stride);
void q8_0_gemm_tile_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                           const void* x, size_t x_stride, float* y, size_t y_stride);
void q2_k_gemm_tile_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                           const void* x, size_t x_stride, float* y, size_t y_stride);
void q3_k_gemm_tile_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                           const void* x, size_t x_stride, float* y, size_t y_stride);
void q4_k_gemm_tile_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                           const void* x, size_t x_stride, float* y, size_t y_stride);
void q5_k_gemm_tile_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                           const void* x, size_t x_stride, float* y, size_t y_stride);
void q6_k_gemm_tile_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                           const void* x, size_t x_stride, float* y, size_t y_stride);
void f16_gemm_tile_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                          const void* x, size_t x_stride, float* y, size_t y_stride);
void f32_gemm_tile_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                          const void* x, size_t x_stride, float* y, size_t y_stride);
// gemm_f16_x16_avx512.cpp: F16 tile and GEMV over the x16 layout (kernels.h kF16X16SumBlock).
void f16_gemm_tile_x16_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                              const void* x, size_t x_stride, float* y, size_t y_stride);
void f16_gemv_x16_avx512(int64_t n, int64_t n_rows, const void* w, size_t w_stride, const void* x, float* y);
// bf16_avx512bf16.cpp (AVX512_BF16: installed only where the CPU has it)
void bf16_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y);
void bf16_gemm_tile_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                           const void* x, size_t x_stride, float* y, size_t y_stride);

namespace avx512 {

static inline float f16_to_f32(uint16_t h) { return _cvtsh_ss(h); }

static inline int32_t load_i32(const void* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

static inline uint32_t load_u32(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// acc += vpdpbusd(u, the 4 signed bytes at p broadcast to every lane). Written in asm because
// GCC 12 does not fold the broadcast into vpdpbusd's memory operand ({1to16}), which would
// cost a separate broadcast instruction per call in the GEMM inner loops.
static inline __m512i dpbusd_bcast(__m512i acc, __m512i u, const void* p) {
  __asm__("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(u), "m"(*static_cast<const int32_t*>(p)));
  return acc;
}

// acc += vpdpwssd(u, the int16 pair at p broadcast to every lane).
static inline __m512i dpwssd_bcast(__m512i acc, __m512i u, const void* p) {
  __asm__("vpdpwssd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(u), "m"(*static_cast<const int32_t*>(p)));
  return acc;
}

// Horizontal sum with a fixed tree: lanes i + i+8, then i + i+4, i + i+2, i + i+1 (the tree of
// GCC's _mm512_reduce_add_ps, written out so that hsum16 can reproduce it bit for bit).
static inline float hsum(__m512 v) {
  const __m256 s = _mm256_add_ps(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  const __m128 t = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
  const __m128 u = _mm_add_ps(t, _mm_movehl_ps(t, t));  // [t0 + t2, t1 + t3, ..]
  return _mm_cvtss_f32(_mm_add_ss(u, _mm_shuffle_ps(u, u, 1)));
}

// Lane r = hsum(a[r]) for 16 vectors at once, bit for bit (the same tree, four transposing
// levels: 15 adds and 30 shuffles instead of 16 separate reductions, and one permute).
static inline __m512 hsum16(const __m512 a[16]) {
  __m512 b[8], c[4], d[2];
  for (int m = 0; m < 8; ++m) {  // lanes i + i+8: [a[2m] (8) | a[2m+1] (8)]
    b[m] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * m], a[2 * m + 1], 0x44), _mm512_shuffle_f32x4(a[2 * m], a[2 * m + 1], 0xEE));
  }
  for (int p = 0; p < 4; ++p) {  // + i+4: 128-bit lane k holds a[4p + k]'s four partial sums
    c[p] = _mm512_add_ps(_mm512_shuffle_f32x4(b[2 * p], b[2 * p + 1], 0x88), _mm512_shuffle_f32x4(b[2 * p], b[2 * p + 1], 0xDD));
  }
  for (int q = 0; q < 2; ++q) {  // + i+2: lane k = [a[8q+k] two sums | a[8q+4+k] two sums]
    d[q] = _mm512_add_ps(_mm512_shuffle_ps(c[2 * q], c[2 * q + 1], 0x44), _mm512_shuffle_ps(c[2 * q], c[2 * q + 1], 0xEE));
  }
  // + i+1: lane 4k + j holds the sum of a[k + 4j]; the permute puts a[r] in lane r.
  const __m512 e = _mm512_add_ps(_mm512_shuffle_ps(d[0], d[1], 0x88), _mm512_shuffle_ps(d[0], d[1], 0xDD));
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  return _mm512_permutexvar_ps(order, e);
}

// In-register 16x16 transpose of 32-bit lanes: r[i] lane j -> r[j] lane i.
static inline void transpose16(__m512i r[16]) {
  __m512i t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  // u[g][j] (held in r[4g + j]): 128-bit lane L = rows 4g..4g+3 of column 4L + j.
  for (int g = 0; g < 4; ++g) {
    r[4 * g + 0] = _mm512_unpacklo_epi64(t[4 * g], t[4 * g + 2]);
    r[4 * g + 1] = _mm512_unpackhi_epi64(t[4 * g], t[4 * g + 2]);
    r[4 * g + 2] = _mm512_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
    r[4 * g + 3] = _mm512_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
  }
  // For each j, a 4x4 transpose of 128-bit lanes among u[0..3][j].
  for (int j = 0; j < 4; ++j) {
    const __m512i v0 = _mm512_shuffle_i32x4(r[j], r[4 + j], 0x44), v1 = _mm512_shuffle_i32x4(r[j], r[4 + j], 0xEE);
    const __m512i v2 = _mm512_shuffle_i32x4(r[8 + j], r[12 + j], 0x44), v3 = _mm512_shuffle_i32x4(r[8 + j], r[12 + j], 0xEE);
    t[j] = _mm512_shuffle_i32x4(v0, v2, 0x88);
    t[4 + j] = _mm512_shuffle_i32x4(v0, v2, 0xDD);
    t[8 + j] = _mm512_shuffle_i32x4(v1, v3, 0x88);
    t[12 + j] = _mm512_shuffle_i32x4(v1, v3, 0xDD);
  }
  for (int i = 0; i < 16; ++i) r[i] = t[i];
}

// For J sets of 16 vectors at once, part(l, o) writing vector l of each set into o: the sum of
// each set's 16 vectors in hsum16's tree (l + 8, then + 4, + 2, + 1), so that lane r of a result
// is hsum16's lane r for 16 vectors whose lane l is lane r of vector l. Kernels that hold 16 rows
// in the lanes of each vector (transposed blocks) reproduce hsum16's sums with 15 adds and no
// shuffles. Compile-time recursion: fully inlined, part called in order l = 0, 8, 4, 12, ...
template <int J, int L = 0, int Step = 1, class Part>
[[gnu::always_inline]] inline void tree_sum16(Part& part, __m512 (&o)[J]) {
  if constexpr (Step == 16) {
    part(L, o);
  } else {
    __m512 b[J];
    tree_sum16<J, L, 2 * Step>(part, o);
    tree_sum16<J, L + Step, 2 * Step>(part, b);
    for (int i = 0; i < J; ++i) o[i] = _mm512_add_ps(o[i], b[i]);
  }
}

static inline int32_t hsum_i32(__m512i v) { return _mm512_reduce_add_epi32(v); }

// Two unaligned 256-bit loads into one register: lo in lanes 0..7, hi in 8..15.
static inline __m512i load2x256(const void* lo, const void* hi) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(static_cast<const __m256i*>(lo))),
                            _mm256_loadu_si256(static_cast<const __m256i*>(hi)), 1);
}

// Two unaligned 128-bit loads into one 256-bit register.
static inline __m256i load2x128(const void* lo, const void* hi) {
  return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(static_cast<const __m128i*>(lo))),
                                 _mm_loadu_si128(static_cast<const __m128i*>(hi)), 1);
}

// Scale vector for two blocks whose int32 sums occupy lanes 0..7 (first) and 8..15 (second).
static inline __m512 two_scales(float s0, float s1) {
  return _mm512_insertf32x8(_mm512_set1_ps(s0), _mm256_set1_ps(s1), 1);
}

// Unsigned bytes of 32 nibbles of two 16-byte groups (Q4 layout): returns, per 256-bit half h,
// [low nibbles of qs_h (16 bytes) | high nibbles of qs_h (16 bytes)], i.e. elements 0..31 of
// each block in order.
static inline __m512i unpack_nibbles2(const uint8_t* qs0, const uint8_t* qs1) {
  // [qs0, qs0, qs1, qs1] in 128-bit lanes (two broadcast loads, one insert), then the odd
  // lanes shifted right by 4.
  const __m256i b0 = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs0)));
  const __m256i b1 = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs1)));
  const __m512i d = _mm512_inserti64x4(_mm512_castsi256_si512(b0), b1, 1);
  const __m512i s = _mm512_mask_srli_epi16(d, 0xFF00FF00u, d, 4);
  return _mm512_and_si512(s, _mm512_set1_epi8(0x0F));
}

}  // namespace avx512
// gemv_q_avx512.cpp: decode GEMV with the tiles' arithmetic.
void q4_0_gemv_avx512(int64_t n, int64_t n_rows, const void* w, size_t w_stride, const void* x, float* y);
void q8_0_gemv_avx512(int64_t n, int64_t n_rows, const void* w, size_t w_stride, const void* x, float* y);
// gemm_q_avx512.cpp: tile and GEMV over the x16 layout (quant/x16_layout.h).
void q4_0_gemm_tile_x16_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                               const void* x, size_t x_stride, float* y, size_t y_stride);
void q8_0_gemm_tile_x16_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                               const void* x, size_t x_stride, float* y, size_t y_stride);
void q4_0_gemv_x16_avx512(int64_t n, int64_t n_rows, const void* w, size_t w_stride, const void* x, float* y);
void q4_0_gemv_x16_prefetch_avx512(int64_t n, int64_t n_rows, const void* w, size_t w_stride, const void* x,
                                   float* y);
void q8_0_gemv_x16_avx512(int64_t n, int64_t n_rows, const void* w, size_t w_stride, const void* x, float* y);
void q8_0_gemv_x16_prefetch_avx512(int64_t n, int64_t n_rows, const void* w, size_t w_stride, const void* x,
                                   float* y);
void q6_k_gemm_tile_x16_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                               const void* x, size_t x_stride, float* y, size_t y_stride);
void q6_k_gemv_x16_avx512(int64_t n, int64_t n_rows, const void* w, size_t w_stride, const void* x, float* y);
void q4_k_gemm_tile_x16_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                               const void* x, size_t x_stride, float* y, size_t y_stride);
void q4_k_gemv_x16_avx512(int64_t n, int64_t n_rows, const void* w, size_t w_stride, const void* x, float* y);
void q4_k_gemv_x16_line_avx512(int64_t n, int64_t n_rows, const void* w, size_t w_stride, const void* x, float* y);
// attention's online-softmax step (kernels/softmax_avx512.cpp)
float softmax_step_avx512(float* x, int64_t n, float scale, float* max, float* sum);
// the feed-forward SiLU·mul (kernels/silu_avx512.cpp)
void silu_mul_avx512(const float* gate, const float* up, float* out, int64_t n);
// attention's y += w * x (kernels/vec_mad_avx512.cpp)
void f32_vec_mad_avx512(int64_t n, float* y, const void* x, float w);
void f16_vec_mad_avx512(int64_t n, float* y, const void* x, float w);
void f16_mad_rows_avx512(int64_t n, int64_t n_rows, const void* rows, size_t stride, const float* w, float* y);
void f16_dot_rows_avx512(int64_t n, int64_t n_rows, const void* rows, size_t stride, const void* x, float* out);
void f16_mad_rows_group_avx512(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_y, const float* w,
                               size_t w_stride, float* y, size_t y_stride);
void f16_dot_rows_group_avx512(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_x, const void* x,
                               size_t x_stride, float* out, size_t out_stride);
void q8_0_vec_mad_avx512(int64_t n, float* y, const void* x, float w);
void q8_0_mad_rows_avx512(int64_t n, int64_t n_rows, const void* rows, size_t stride, const float* w, float* y);
void q8_0_mad_rows_group_avx512(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_y,
                                const float* w, size_t w_stride, float* y, size_t y_stride);
void q8_0_dot_rows_avx512(int64_t n, int64_t n_rows, const void* rows, size_t stride, const void* x, float* out);
void q8_0_dot_rows_group_avx512(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_x, const void* x,
                                size_t x_stride, float* out, size_t out_stride);

}  // namespace edgeinfer
