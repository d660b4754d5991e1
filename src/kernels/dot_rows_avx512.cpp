// AVX-512 attention scores over an F16 cache's K rows: one query (dot_rows) or the query heads
// of a GQA group at once (dot_rows_group, each K row loaded and converted once for all of them).
// Q8_0 caches' are in dot_q_avx512.cpp, beside the Q8_0 dot product they reproduce.
#include <immintrin.h>

#include <algorithm>

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

// dot16_group for many queries (a prompt's tokens' heads): the block is converted and
// transposed once, so that register d holds element d of the 16 rows; then for each query and
// lane l of dot16_group's accumulators, the 16 rows' partial sums P_l = the same FMA chain over
// j (elements 16 j + l) with the query's element broadcast, and the 16 partials summed by vector
// adds in hsum16's tree (l + 8, + 4, + 2, + 1): every score the same operations on the same
// values as dot16_group, without its shuffles per query. kJ queries at a time share the loads of
// the transposed block.
template <int NV>
void dot16_group_t(const uint8_t* base, size_t stride, int64_t n_x, const uint8_t* xb, size_t x_stride, float* out,
                   size_t out_stride) {
  constexpr int n = 16 * NV;
  constexpr int kJ = 4;
  alignas(64) float kt[n * 16];  // kt[16 d + r]: element d of row r
  for (int j = 0; j < NV; ++j) {
    __m512i v[16];  // the floats' bits
    for (int r = 0; r < 16; ++r) {
      const uint16_t* k = reinterpret_cast<const uint16_t*>(base + static_cast<size_t>(r) * stride) + 16 * j;
      v[r] = _mm512_castps_si512(_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(k))));
    }
    avx512::transpose16(v);
    for (int l = 0; l < 16; ++l) _mm512_store_si512(kt + 16 * (16 * j + l), v[l]);
  }
  constexpr int64_t kChunk = 16;  // queries converted to f32 at a time
  alignas(64) float xf[kChunk * n];
  for (int64_t h0 = 0; h0 < n_x; h0 += kChunk) {
    const int64_t nh = std::min<int64_t>(kChunk, n_x - h0);
    for (int64_t h = 0; h < nh; ++h) {
      const uint16_t* xq = reinterpret_cast<const uint16_t*>(xb + static_cast<size_t>(h0 + h) * x_stride);
      for (int j = 0; j < NV; ++j) {
        const __m256i x16 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + 16 * j));
        _mm512_store_ps(xf + h * n + 16 * j, _mm512_cvtph_ps(x16));
      }
    }
    auto queries = [&]<int J>(int64_t h) {
      const float* q = xf + h * n;
      // P_l of J queries.
      auto p = [&](int l, __m512(&o)[J]) [[gnu::always_inline]] {
        for (int i = 0; i < J; ++i) o[i] = _mm512_setzero_ps();
        for (int j = 0; j < NV; ++j) {
          const __m512 kv = _mm512_load_ps(kt + 16 * (16 * j + l));
          for (int i = 0; i < J; ++i) o[i] = _mm512_fmadd_ps(kv, _mm512_set1_ps(q[i * n + 16 * j + l]), o[i]);
        }
      };
      __m512 t[J];
      avx512::tree_sum16<J>(p, t);
      for (int i = 0; i < J; ++i) _mm512_storeu_ps(out + static_cast<size_t>(h0 + h + i) * out_stride, t[i]);
    };
    int64_t h = 0;
    for (; h + kJ <= nh; h += kJ) queries.template operator()<kJ>(h);
    for (; h < nh; ++h) queries.template operator()<1>(h);
  }
}

using Dot16Fn = void (*)(const uint8_t*, size_t, int64_t, const uint8_t*, size_t, float*, size_t);
constexpr Dot16Fn kDot16[8] = {dot16_group<1>, dot16_group<2>, dot16_group<3>, dot16_group<4>,
                               dot16_group<5>, dot16_group<6>, dot16_group<7>, dot16_group<8>};
constexpr Dot16Fn kDot16T[8] = {dot16_group_t<1>, dot16_group_t<2>, dot16_group_t<3>, dot16_group_t<4>,
                                dot16_group_t<5>, dot16_group_t<6>, dot16_group_t<7>, dot16_group_t<8>};
// Queries from which the transposed block pays for its transposes. Scratch measurements on the
// Intel VM, one thread: 64 queries against hot 16-row blocks, 1.19 against 1.82 ns per row and
// query at head_dim 64 (2.33 against 2.84 at 128); attend_tokens in-process A/B (TinyLlama shape,
// ctx 1024), the scores' share alone: 8 tokens (64 queries) 1.11x, 1 token (8) 0.95x as fast.
constexpr int64_t kTransposeFrom = 16;

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
  const Dot16Fn block = n_x >= kTransposeFrom ? kDot16T[n / 16 - 1] : kDot16[n / 16 - 1];
  int64_t r0 = 0;
  for (; r0 + 16 <= n_rows; r0 += 16) {
    block(base + static_cast<size_t>(r0) * stride, stride, n_x, xb, x_stride, out + r0, out_stride);
  }
  if (r0 < n_rows) one_by_one(r0);
}

}  // namespace edgeinfer
