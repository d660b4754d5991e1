// AVX-512 BF16 kernels, which need AVX512_BF16 (compiled with its flag, installed in the table
// only where the CPU has it; elsewhere the AVX-512 path keeps the AVX2 BF16 kernels): the dot
// product (four independent accumulators, masked row tails) and the prefill tile on the float
// register tile of gemm_float_avx512.h, both with vdpbf16ps (pairwise products of the stored
// bits, summed in F32).
#include "kernels/gemm_float_avx512.h"

namespace edgeinfer {

namespace {

using namespace avx512;

// The tile's element policy: 32 BF16 values per register, one vdpbf16ps per pair of them.
struct BF16Ops {
  using T = uint16_t;
  static constexpr int step = 32;
  static __m512 load(const T* p) { return _mm512_castsi512_ps(_mm512_loadu_si512(p)); }
  static __m512 load_tail(const T* p, int64_t len) {
    return _mm512_castsi512_ps(_mm512_maskz_loadu_epi16(static_cast<__mmask32>((1ull << len) - 1), p));
  }
  static __m512 madd(__m512 acc, __m512 w, __m512 x) {
    return _mm512_dpbf16_ps(acc, (__m512bh)_mm512_castps_si512(w), (__m512bh)_mm512_castps_si512(x));
  }
};

}  // namespace

void bf16_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y) {
  const uint16_t* a = static_cast<const uint16_t*>(x);
  const uint16_t* b = static_cast<const uint16_t*>(y);
  auto ld = [](const uint16_t* p) { return (__m512bh)_mm512_loadu_si512(p); };
  __m512 acc0 = _mm512_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  int64_t i = 0;
  for (; i + 128 <= n; i += 128) {
    acc0 = _mm512_dpbf16_ps(acc0, ld(a + i), ld(b + i));
    acc1 = _mm512_dpbf16_ps(acc1, ld(a + i + 32), ld(b + i + 32));
    acc2 = _mm512_dpbf16_ps(acc2, ld(a + i + 64), ld(b + i + 64));
    acc3 = _mm512_dpbf16_ps(acc3, ld(a + i + 96), ld(b + i + 96));
  }
  for (; i + 32 <= n; i += 32) acc0 = _mm512_dpbf16_ps(acc0, ld(a + i), ld(b + i));
  if (i < n) {
    const __mmask32 m = static_cast<__mmask32>((1ull << (n - i)) - 1);
    acc1 = _mm512_dpbf16_ps(acc1, (__m512bh)_mm512_maskz_loadu_epi16(m, a + i), (__m512bh)_mm512_maskz_loadu_epi16(m, b + i));
  }
  *s = hsum(_mm512_add_ps(_mm512_add_ps(acc0, acc1), _mm512_add_ps(acc2, acc3)));
}

void bf16_gemm_tile_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                           size_t x_stride, float* y, size_t y_stride) {
  avx512_float_tile::gemm_tile<BF16Ops>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}

}  // namespace edgeinfer
