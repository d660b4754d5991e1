// AVX-512 y += w * x for attention's weighted sum of V rows (masked tails), one head or the
// heads of a GQA group over the same rows.
#include <immintrin.h>

#include <type_traits>

#include "kernels/simd_avx512.h"

namespace edgeinfer {

void f32_vec_mad_avx512(int64_t n, float* y, const void* x, float w) {
  const float* v = static_cast<const float*>(x);
  const __m512 wv = _mm512_set1_ps(w);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_fmadd_ps(wv, _mm512_loadu_ps(v + i), _mm512_loadu_ps(y + i)));
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, m, _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(m, v + i), _mm512_maskz_loadu_ps(m, y + i)));
  }
}

void f16_vec_mad_avx512(int64_t n, float* y, const void* x, float w) {
  const uint16_t* v = static_cast<const uint16_t*>(x);
  const __m512 wv = _mm512_set1_ps(w);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 xv = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + i)));
    _mm512_storeu_ps(y + i, _mm512_fmadd_ps(wv, xv, _mm512_loadu_ps(y + i)));
  }
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 xv = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, v + i));
    _mm512_mask_storeu_ps(y + i, m, _mm512_fmadd_ps(wv, xv, _mm512_maskz_loadu_ps(m, y + i)));
  }
}

void f16_mad_rows_avx512(int64_t n, int64_t n_rows, const void* rows, size_t stride, const float* w, float* y) {
  const uint8_t* base = static_cast<const uint8_t*>(rows);
  if (n % 16 != 0 || n > 128) {
    for (int64_t r = 0; r < n_rows; ++r) f16_vec_mad_avx512(n, y, base + static_cast<size_t>(r) * stride, w[r]);
    return;
  }
  // y stays in registers across the rows; per element the same FMAs in the same order as
  // f16_vec_mad_avx512 row by row.
  __m512 acc[8];
  const int64_t nv = n / 16;
  for (int64_t j = 0; j < nv; ++j) acc[j] = _mm512_loadu_ps(y + 16 * j);
  for (int64_t r = 0; r < n_rows; ++r) {
    const uint16_t* v = reinterpret_cast<const uint16_t*>(base + static_cast<size_t>(r) * stride);
    const __m512 wv = _mm512_set1_ps(w[r]);
    for (int64_t j = 0; j < nv; ++j) {
      acc[j] = _mm512_fmadd_ps(wv, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + 16 * j))), acc[j]);
    }
  }
  for (int64_t j = 0; j < nv; ++j) _mm512_storeu_ps(y + 16 * j, acc[j]);
}

namespace {

// Up to 16 rows converted to f32 once, then each head's sum kept in registers across them, for
// head_dim 16 * NV: per element the same FMAs in the same order as f16_mad_rows_avx512.
template <int NV>
void mad16_group(const uint8_t* base, size_t stride, int64_t nr, int64_t n_y, const float* w, size_t w_stride, float* y,
                 size_t y_stride) {
  constexpr int n = 16 * NV;
  alignas(64) float vf[16 * n];
  for (int64_t r = 0; r < nr; ++r) {
    const uint16_t* v = reinterpret_cast<const uint16_t*>(base + static_cast<size_t>(r) * stride);
    for (int j = 0; j < NV; ++j) {
      _mm512_store_ps(vf + r * n + 16 * j, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + 16 * j))));
    }
  }
  // HP heads at a time, so that at least 8 independent FMA chains hide the FMA latency (each
  // head's chain runs over the rows in order, as row-by-row accumulation requires).
  constexpr int HP = NV >= 5 ? 1 : 8 / NV;
  int64_t h = 0;
  auto pass = [&]<int H>(std::integral_constant<int, H>) {
    __m512 acc[H][NV];
    for (int g = 0; g < H; ++g) {
      for (int j = 0; j < NV; ++j) acc[g][j] = _mm512_loadu_ps(y + static_cast<size_t>(h + g) * y_stride + 16 * j);
    }
    for (int64_t r = 0; r < nr; ++r) {
      for (int g = 0; g < H; ++g) {
        const __m512 wv = _mm512_set1_ps(w[static_cast<size_t>(h + g) * w_stride + static_cast<size_t>(r)]);
        for (int j = 0; j < NV; ++j) acc[g][j] = _mm512_fmadd_ps(wv, _mm512_load_ps(vf + r * n + 16 * j), acc[g][j]);
      }
    }
    for (int g = 0; g < H; ++g) {
      for (int j = 0; j < NV; ++j) _mm512_storeu_ps(y + static_cast<size_t>(h + g) * y_stride + 16 * j, acc[g][j]);
    }
  };
  for (; h + HP <= n_y; h += HP) pass(std::integral_constant<int, HP>{});
  for (; h < n_y; ++h) pass(std::integral_constant<int, 1>{});
}

using Mad16Fn = void (*)(const uint8_t*, size_t, int64_t, int64_t, const float*, size_t, float*, size_t);
constexpr Mad16Fn kMad16[8] = {mad16_group<1>, mad16_group<2>, mad16_group<3>, mad16_group<4>,
                               mad16_group<5>, mad16_group<6>, mad16_group<7>, mad16_group<8>};

}  // namespace

void f16_mad_rows_group_avx512(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_y, const float* w,
                               size_t w_stride, float* y, size_t y_stride) {
  const uint8_t* base = static_cast<const uint8_t*>(rows);
  if (n % 16 != 0 || n > 128) {
    for (int64_t h = 0; h < n_y; ++h) {
      f16_mad_rows_avx512(n, n_rows, rows, stride, w + static_cast<size_t>(h) * w_stride, y + static_cast<size_t>(h) * y_stride);
    }
    return;
  }
  const Mad16Fn block = kMad16[n / 16 - 1];
  for (int64_t r0 = 0; r0 < n_rows; r0 += 16) {
    block(base + static_cast<size_t>(r0) * stride, stride, n_rows - r0 < 16 ? n_rows - r0 : 16, n_y, w + r0, w_stride, y,
          y_stride);
  }
}

}  // namespace edgeinfer
