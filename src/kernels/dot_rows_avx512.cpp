// AVX-512 attention scores over an F16 cache's K rows: one query (dot_rows) or the query heads
// of a GQA group at once (dot_rows_group, each K row loaded and converted once for all of them).
// Q8_0 caches' are in dot_q_avx512.cpp, beside the Q8_0 dot product they reproduce.
#include <immintrin.h>

#include "kernels/simd_avx512.h"

namespace edgeinfer {

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
    out[r] = avx512::hsum(a0);
    out[r + 1] = avx512::hsum(a1);
    out[r + 2] = avx512::hsum(a2);
    out[r + 3] = avx512::hsum(a3);
  }
  for (; r < n_rows; ++r) {
    const uint16_t* k0 = reinterpret_cast<const uint16_t*>(base + static_cast<size_t>(r) * stride);
    __m512 a0 = _mm512_setzero_ps();
    for (int64_t j = 0; j < nv; ++j) {
      a0 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(k0 + 16 * j))), xf[j], a0);
    }
    out[r] = avx512::hsum(a0);
  }
}

namespace {

// One block of 16 rows against n_x queries, head_dim 16 * NV (compile-time, so the chains and
// the 16 accumulators stay in registers).
template <int NV>
void dot16_group(const uint8_t* base, size_t stride, int64_t n_x, const uint8_t* xb, size_t x_stride, float* out,
                 size_t out_stride) {
  constexpr int n = 16 * NV;
  alignas(64) float kf[16 * n];
  for (int r = 0; r < 16; ++r) {
    const uint16_t* k = reinterpret_cast<const uint16_t*>(base + static_cast<size_t>(r) * stride);
    for (int j = 0; j < NV; ++j) {
      _mm512_store_ps(kf + r * n + 16 * j, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(k + 16 * j))));
    }
  }
  for (int64_t h = 0; h < n_x; ++h) {
    const uint16_t* xq = reinterpret_cast<const uint16_t*>(xb + static_cast<size_t>(h) * x_stride);
    __m512 xf[NV];
    for (int j = 0; j < NV; ++j) xf[j] = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + 16 * j)));
    __m512 acc[16];
    for (int r = 0; r < 16; ++r) {
      __m512 a = _mm512_setzero_ps();
      for (int j = 0; j < NV; ++j) a = _mm512_fmadd_ps(_mm512_load_ps(kf + r * n + 16 * j), xf[j], a);
      acc[r] = a;
    }
    _mm512_storeu_ps(out + static_cast<size_t>(h) * out_stride, avx512::hsum16(acc));
  }
}

using Dot16Fn = void (*)(const uint8_t*, size_t, int64_t, const uint8_t*, size_t, float*, size_t);
constexpr Dot16Fn kDot16[8] = {dot16_group<1>, dot16_group<2>, dot16_group<3>, dot16_group<4>,
                               dot16_group<5>, dot16_group<6>, dot16_group<7>, dot16_group<8>};

}  // namespace

void f16_dot_rows_group_avx512(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_x, const void* x,
                               size_t x_stride, float* out, size_t out_stride) {
  const uint8_t* base = static_cast<const uint8_t*>(rows);
  const uint8_t* xb = static_cast<const uint8_t*>(x);
  auto one_by_one = [&](int64_t r0) {
    for (int64_t h = 0; h < n_x; ++h) {
      f16_dot_rows_avx512(n, n_rows - r0, base + static_cast<size_t>(r0) * stride, stride, xb + static_cast<size_t>(h) * x_stride,
                          out + static_cast<size_t>(h) * out_stride + r0);
    }
  };
  if (n % 16 != 0 || n > 128) {
    one_by_one(0);
    return;
  }
  // Per 16 rows: convert them to f32 once; per head, the same FMA chain per row as
  // f16_dot_rows_avx512 and one transposing reduction for the 16 rows (hsum16 == hsum per lane).
  const Dot16Fn block = kDot16[n / 16 - 1];
  int64_t r0 = 0;
  for (; r0 + 16 <= n_rows; r0 += 16) {
    block(base + static_cast<size_t>(r0) * stride, stride, n_x, xb, x_stride, out + r0, out_stride);
  }
  if (r0 < n_rows) one_by_one(r0);
}

}  // namespace edgeinfer
