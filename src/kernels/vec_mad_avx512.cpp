// AVX-512 y += w * x for attention's weighted sum of V rows (masked tails).
#include <immintrin.h>

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

void f16_dot_rows_avx512(int64_t n, int64_t n_rows, const void* rows, size_t stride, const void* x, float* out) {
  const uint16_t* xq = static_cast<const uint16_t*>(x);
  const uint8_t* base = static_cast<const uint8_t*>(rows);
  if (n % 16 != 0 || n > 256) {
    for (int64_t r = 0; r < n_rows; ++r) f16_vec_dot_avx512(n, &out[r], base + static_cast<size_t>(r) * stride, x);
    return;
  }
  // The query converted once; each row one accumulator, its FMAs interleaved with the other
  // rows' (independent chains), one horizontal sum per row.
  __m512 xf[16];
  const int64_t nv = n / 16;
  for (int64_t j = 0; j < nv; ++j) xf[j] = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + 16 * j)));
  int64_t r = 0;
  for (; r + 4 <= n_rows; r += 4) {
    const uint16_t* k0 = reinterpret_cast<const uint16_t*>(base + static_cast<size_t>(r) * stride);
    const uint16_t* k1 = reinterpret_cast<const uint16_t*>(base + static_cast<size_t>(r + 1) * stride);
    const uint16_t* k2 = reinterpret_cast<const uint16_t*>(base + static_cast<size_t>(r + 2) * stride);
    const uint16_t* k3 = reinterpret_cast<const uint16_t*>(base + static_cast<size_t>(r + 3) * stride);
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t j = 0; j < nv; ++j) {
      a0 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(k0 + 16 * j))), xf[j], a0);
      a1 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(k1 + 16 * j))), xf[j], a1);
      a2 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(k2 + 16 * j))), xf[j], a2);
      a3 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(k3 + 16 * j))), xf[j], a3);
    }
    out[r] = _mm512_reduce_add_ps(a0);
    out[r + 1] = _mm512_reduce_add_ps(a1);
    out[r + 2] = _mm512_reduce_add_ps(a2);
    out[r + 3] = _mm512_reduce_add_ps(a3);
  }
  for (; r < n_rows; ++r) {
    const uint16_t* k0 = reinterpret_cast<const uint16_t*>(base + static_cast<size_t>(r) * stride);
    __m512 a0 = _mm512_setzero_ps();
    for (int64_t j = 0; j < nv; ++j) {
      a0 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(k0 + 16 * j))), xf[j], a0);
    }
    out[r] = _mm512_reduce_add_ps(a0);
  }
}

}  // namespace edgeinfer
