// AVX-512 prefill tiles (GemmTileFn) of the float types F16 and F32 on the register tile of
// gemm_float_avx512.h (BF16's, which needs AVX512_BF16, is in gemm_bf16_avx512bf16.cpp).
// F16 converts with vcvtph2ps (exact) and accumulates in F32 with FMA; its activations are
// converted once per panel (gemm_float_avx512.h).
#include "kernels/gemm_float_avx512.h"

namespace edgeinfer {

namespace {

using namespace avx512;

// Element type policies: `step` elements per register, load(p, mask) -> operand, and
// madd(acc, w, x) -> acc + w . x lane-wise.
struct F32Ops {
  using T = float;
  static constexpr int step = 16;
  static __m512 load(const T* p) { return _mm512_loadu_ps(p); }
  static __m512 load_tail(const T* p, int64_t len) { return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << len) - 1), p); }
  static __m512 madd(__m512 acc, __m512 w, __m512 x) { return _mm512_fmadd_ps(w, x, acc); }
};


// F16 weights; the F16 activation rows converted to F32 once per panel (exact) and read as F32.
struct F16Ops {
  using T = uint16_t;
  using XOps = F32Ops;
  static constexpr int step = 16;
  static __m512 load(const T* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  static __m512 load_tail(const T* p, int64_t len) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(static_cast<__mmask16>((1u << len) - 1), p));
  }
  static __m512 madd(__m512 acc, __m512 w, __m512 x) { return _mm512_fmadd_ps(w, x, acc); }
  static void convert_x(const uint8_t* x, int64_t n, float* out) {
    const T* h = reinterpret_cast<const T*>(x);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, load(h + i));
    if (i < n) _mm512_mask_storeu_ps(out + i, static_cast<__mmask16>((1u << (n - i)) - 1), load_tail(h + i, n - i));
  }
};

}  // namespace

void f16_gemm_tile_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                          size_t x_stride, float* y, size_t y_stride) {
  avx512_float_tile::gemm_tile<F16Ops>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}

void f32_gemm_tile_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                          size_t x_stride, float* y, size_t y_stride) {
  avx512_float_tile::gemm_tile<F32Ops>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}

}  // namespace edgeinfer
