// AVX-512 y += w * x for attention's weighted sum of V rows (masked tails), one head or the
// heads of a GQA group over the same rows; F32, F16 and Q8_0 caches.
#include <immintrin.h>

#include <algorithm>

#include "kernels/simd_avx512.h"
#include "quant/blocks.h"

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

// 16 values of a Q8_0 row from element 16 * j on (j within one block's two halves or beyond):
// d * q as float, the value Q8_0's to_float gives.
inline __m512 q8_0_values(const BlockQ8_0* b, int64_t j) {
  const BlockQ8_0& blk = b[j / 2];
  const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk.qs + 16 * (j % 2)));
  return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)), _mm512_set1_ps(avx512::f16_to_f32(blk.d)));
}

}  // namespace

// Q8_0: per element y + w * (d * q) with one FMA (the reference rounds w * (d * q) first).
void q8_0_vec_mad_avx512(int64_t n, float* y, const void* x, float w) {
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(x);
  const __m512 wv = _mm512_set1_ps(w);
  for (int64_t j = 0; j < n / 16; ++j) {
    _mm512_storeu_ps(y + 16 * j, _mm512_fmadd_ps(wv, q8_0_values(b, j), _mm512_loadu_ps(y + 16 * j)));
  }
}

namespace {

// Row loaders of the group kernel: NV registers of 16 values of the row at `row`; offset(j) is
// where register j's values start in a row (j even for Q8_0: a whole block).
struct F16Rows {
  static constexpr size_t offset(int j) { return static_cast<size_t>(j) * 16 * sizeof(uint16_t); }
  template <int NV>
  static void load(const uint8_t* row, __m512 vf[NV]) {
    const uint16_t* v = reinterpret_cast<const uint16_t*>(row);
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) vf[j] = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + 16 * j)));
  }
};
// Rows already converted to f32 (mad16_staged).
struct F32Rows {
  static constexpr size_t offset(int j) { return static_cast<size_t>(j) * 16 * sizeof(float); }
  template <int NV>
  static void load(const uint8_t* row, __m512 vf[NV]) {
    const float* v = reinterpret_cast<const float*>(row);
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) vf[j] = _mm512_loadu_ps(v + 16 * j);
  }
};
struct Q8_0Rows {
  static constexpr size_t offset(int j) { return static_cast<size_t>(j / 2) * sizeof(BlockQ8_0); }
  template <int NV>
  static void load(const uint8_t* row, __m512 vf[NV]) {
    const BlockQ8_0* b = reinterpret_cast<const BlockQ8_0*>(row);
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) vf[j] = q8_0_values(b, j);
  }
};

// Each row's 16 * NV values converted straight into registers and added into H heads' sums held
// in registers (H * NV independent FMA chains): per element the same FMAs in the same order as
// the type's mad_rows. Converting each row once per pass costs one conversion per H FMAs, cheaper
// on Zen 4 than staging the rows as f32 in memory and reloading them for every head (a GQA group
// of 8); from kStageFrom heads on, the rows are staged (mad16_staged; measured on the Intel VM only).
template <class Rows, int NV, int H>
void mad16_pass(const uint8_t* base, size_t stride, int64_t n_rows, const float* w, size_t w_stride, float* y,
                size_t y_stride) {
  __m512 acc[H][NV];
#pragma GCC unroll 8
  for (int g = 0; g < H; ++g) {
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) acc[g][j] = _mm512_loadu_ps(y + static_cast<size_t>(g) * y_stride + 16 * j);
  }
  for (int64_t r = 0; r < n_rows; ++r) {
    __m512 vf[NV];
    Rows::template load<NV>(base + static_cast<size_t>(r) * stride, vf);
#pragma GCC unroll 8
    for (int g = 0; g < H; ++g) {
      const __m512 wv = _mm512_set1_ps(w[static_cast<size_t>(g) * w_stride + static_cast<size_t>(r)]);
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) acc[g][j] = _mm512_fmadd_ps(wv, vf[j], acc[g][j]);
    }
  }
#pragma GCC unroll 8
  for (int g = 0; g < H; ++g) {
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) _mm512_storeu_ps(y + static_cast<size_t>(g) * y_stride + 16 * j, acc[g][j]);
  }
}

// H heads over all NV registers of the rows, in slices of at most 16 / H registers (at most 16
// accumulators: with the slice's converted registers and the broadcast weight they stay within
// the 32 zmm registers). Each slice converts its part of every row once for the H heads.
template <class Rows, int NV, int H>
void mad16_slices(const uint8_t* base, size_t stride, int64_t n_rows, const float* w, size_t w_stride, float* y,
                  size_t y_stride) {
  constexpr int kSlice = NV < 16 / H ? NV : 16 / H;
  constexpr int kWhole = NV / kSlice * kSlice;
  for (int j0 = 0; j0 < kWhole; j0 += kSlice) {
    mad16_pass<Rows, kSlice, H>(base + Rows::offset(j0), stride, n_rows, w, w_stride, y + 16 * j0, y_stride);
  }
  if constexpr (kWhole < NV) {
    mad16_pass<Rows, NV - kWhole, H>(base + Rows::offset(kWhole), stride, n_rows, w, w_stride, y + 16 * kWhole, y_stride);
  }
}

// Heads in passes of 8 (slices of 2 registers: 16 chains, each row's registers converted once per
// 8 heads), then 4, 2 and 1 for the rest. Passes of all NV registers at once held 16 / NV heads
// (4 for head_dim 64, 2 for 128) and converted every row 8 / (16 / NV) times for a GQA group of 8;
// the order of each element's FMAs (row by row) is the same either way.
template <class Rows, int NV>
void mad16_group(const uint8_t* base, size_t stride, int64_t n_rows, int64_t n_y, const float* w, size_t w_stride,
                 float* y, size_t y_stride) {
  const auto wh = [&](int64_t h) { return w + static_cast<size_t>(h) * w_stride; };
  const auto yh = [&](int64_t h) { return y + static_cast<size_t>(h) * y_stride; };
  int64_t h = 0;
  for (; h + 8 <= n_y; h += 8) mad16_slices<Rows, NV, 8>(base, stride, n_rows, wh(h), w_stride, yh(h), y_stride);
  if (h + 4 <= n_y) {
    mad16_slices<Rows, NV, 4>(base, stride, n_rows, wh(h), w_stride, yh(h), y_stride);
    h += 4;
  }
  if (h + 2 <= n_y) {
    mad16_slices<Rows, NV, 2>(base, stride, n_rows, wh(h), w_stride, yh(h), y_stride);
    h += 2;
  }
  if (h < n_y) mad16_slices<Rows, NV, 1>(base, stride, n_rows, wh(h), w_stride, yh(h), y_stride);
}

// mad16_group over rows staged as f32 16 at a time (the type's own row loader, so the values are
// exactly those the passes would have converted): each row converted once for all the passes
// instead of once per pass of 8 heads. The same FMAs in the same order per element.
template <class Rows, int NV>
void mad16_staged(const uint8_t* base, size_t stride, int64_t n_rows, int64_t n_y, const float* w, size_t w_stride,
                  float* y, size_t y_stride) {
  constexpr int n = 16 * NV;
  constexpr int64_t kRowsAtOnce = 16;
  alignas(64) float vf[kRowsAtOnce * n];
  for (int64_t r0 = 0; r0 < n_rows; r0 += kRowsAtOnce) {
    const int64_t nr = std::min(kRowsAtOnce, n_rows - r0);
    for (int64_t r = 0; r < nr; ++r) {
      __m512 v[NV];
      Rows::template load<NV>(base + static_cast<size_t>(r0 + r) * stride, v);
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) _mm512_store_ps(vf + r * n + 16 * j, v[j]);
    }
    mad16_group<F32Rows, NV>(reinterpret_cast<const uint8_t*>(vf), sizeof(float) * n, nr, n_y, w + r0, w_stride, y,
                             y_stride);
  }
}

using Mad16Fn = void (*)(const uint8_t*, size_t, int64_t, int64_t, const float*, size_t, float*, size_t);
constexpr Mad16Fn kMad16[8] = {mad16_group<F16Rows, 1>, mad16_group<F16Rows, 2>, mad16_group<F16Rows, 3>,
                               mad16_group<F16Rows, 4>, mad16_group<F16Rows, 5>, mad16_group<F16Rows, 6>,
                               mad16_group<F16Rows, 7>, mad16_group<F16Rows, 8>};
constexpr Mad16Fn kMad16Staged[8] = {mad16_staged<F16Rows, 1>, mad16_staged<F16Rows, 2>, mad16_staged<F16Rows, 3>,
                                     mad16_staged<F16Rows, 4>, mad16_staged<F16Rows, 5>, mad16_staged<F16Rows, 6>,
                                     mad16_staged<F16Rows, 7>, mad16_staged<F16Rows, 8>};
// Q8_0 rows come in whole 32-element blocks: 2, 4, 6 or 8 registers.
constexpr Mad16Fn kMadQ8_0[4] = {mad16_group<Q8_0Rows, 2>, mad16_group<Q8_0Rows, 4>, mad16_group<Q8_0Rows, 6>,
                                 mad16_group<Q8_0Rows, 8>};
constexpr Mad16Fn kMadQ8_0Staged[4] = {mad16_staged<Q8_0Rows, 2>, mad16_staged<Q8_0Rows, 4>,
                                       mad16_staged<Q8_0Rows, 6>, mad16_staged<Q8_0Rows, 8>};
// Heads from which the rows are staged (mad16_staged) instead of converted once per pass of 8
// heads (f16: one conversion per 8 FMAs; Q8_0: a widening, a conversion and a multiply). Scratch
// in-process A/B of attend_tokens (TinyLlama shape, f16 cache, ctx 1024, Intel VM), with the
// transposed scores of dot_rows_avx512.cpp in both: 1 token (8 heads) 0.96x, 8 tokens 1.09x as
// fast as converting per pass; 2 tokens (16 heads) 1.02x for both group kernels changed at once.
constexpr int64_t kStageFrom = 16;

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
  const Mad16Fn f = n_y < kStageFrom ? kMad16[n / 16 - 1] : kMad16Staged[n / 16 - 1];
  f(base, stride, n_rows, n_y, w, w_stride, y, y_stride);
}

// One head of the group kernel: y stays in registers across the rows, per element the FMAs of
// q8_0_vec_mad_avx512 row by row.
void q8_0_mad_rows_avx512(int64_t n, int64_t n_rows, const void* rows, size_t stride, const float* w, float* y) {
  const uint8_t* base = static_cast<const uint8_t*>(rows);
  if (n > 128) {
    for (int64_t r = 0; r < n_rows; ++r) q8_0_vec_mad_avx512(n, y, base + static_cast<size_t>(r) * stride, w[r]);
    return;
  }
  kMadQ8_0[n / 32 - 1](base, stride, n_rows, 1, w, 0, y, 0);
}

void q8_0_mad_rows_group_avx512(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_y,
                                const float* w, size_t w_stride, float* y, size_t y_stride) {
  if (n > 128) {
    for (int64_t h = 0; h < n_y; ++h) {
      q8_0_mad_rows_avx512(n, n_rows, rows, stride, w + static_cast<size_t>(h) * w_stride,
                           y + static_cast<size_t>(h) * y_stride);
    }
    return;
  }
  const Mad16Fn f = n_y < kStageFrom ? kMadQ8_0[n / 32 - 1] : kMadQ8_0Staged[n / 32 - 1];
  f(static_cast<const uint8_t*>(rows), stride, n_rows, n_y, w, w_stride, y, y_stride);
}

}  // namespace edgeinfer
