// AVX2 (+F16C, FMA) attention over an F16 cache's rows, one head or the query heads of a GQA
// group at once: scores against K rows (dot_rows, dot_rows_group) and the weighted sum of V rows
// (mad_rows, mad_rows_group); for a Q8_0 cache the V side (its K side is integer, in
// dot_q_avx2.cpp). Up to 8 rows are converted to f32 once per call of the block
// helpers and then used by every head; the single-head entries are the group code with one head,
// so grouped and single results are the same bits by construction.
#include <immintrin.h>

#include "kernels/attn_rows_driver.h"
#include "kernels/simd_avx2.h"

namespace edgeinfer {

namespace {

constexpr int64_t kBlockRows = 8;
constexpr int64_t kMaxDim = 128;  // head_dim of the fast paths (multiples of 8 up to this)

// nr (<= 8) f16 rows of n elements to f32, row r at f + r * n.
inline void rows_to_f32(const uint8_t* base, size_t stride, int64_t nr, int64_t n, float* f) {
  for (int64_t r = 0; r < nr; ++r) {
    const uint16_t* v = reinterpret_cast<const uint16_t*>(base + static_cast<size_t>(r) * stride);
    for (int64_t i = 0; i < n; i += 8) {
      _mm256_store_ps(f + r * n + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v + i))));
    }
  }
}

// What attn_rows_driver.h runs: the block kernels and the path's per-row kernels.
struct Ops {
  static constexpr int64_t kBlockRows = ::edgeinfer::kBlockRows;
  static constexpr int64_t kMaxDim = ::edgeinfer::kMaxDim;
  static void rows_to_f32(const uint8_t* base, size_t stride, int64_t nr, int64_t n, float* f) {
    ::edgeinfer::rows_to_f32(base, stride, nr, n, f);
  }
  static void vec_dot(int64_t n, float* s, const void* x, const void* y) { f16_vec_dot_avx2(n, s, x, y); }
  static void vec_mad(int64_t n, float* y, const void* x, float w) { f16_vec_mad_avx2(n, y, x, w); }

  // Scores of nr (<= 8) rows for n_x queries (already f32, qf + h * n), n = 8 * NV: one FMA chain
  // per row over the elements in order, one horizontal sum per row (hsum8 for a full block, hsum
  // otherwise). NV is a compile-time constant so the accumulators stay in registers.
  template <int NV>
  static void dot_block(const float* kf, int64_t nr, int64_t n_x, const float* qf, float* out, size_t out_stride) {
    constexpr int n = 8 * NV;
    for (int64_t h = 0; h < n_x; ++h) {
      const float* q = qf + h * n;
      __m256 acc[kBlockRows];
      for (int r = 0; r < kBlockRows; ++r) {
        __m256 a = _mm256_setzero_ps();
        if (r < nr) {
          for (int j = 0; j < NV; ++j) {
            a = _mm256_fmadd_ps(_mm256_load_ps(kf + r * n + 8 * j), _mm256_load_ps(q + 8 * j), a);
          }
        }
        acc[r] = a;
      }
      float* o = out + static_cast<size_t>(h) * out_stride;
      if (nr == kBlockRows) {
        _mm256_storeu_ps(o, avx2::hsum8(acc));
      } else {
        for (int64_t r = 0; r < nr; ++r) o[r] = avx2::hsum(acc[r]);
      }
    }
  }

  // y_h += sum_r w_h[r] * row_r for nr (<= 8) f32 rows, n = 8 * NV, per element in row order
  // (the FMA of f16_vec_mad_avx2); the elements in chunks of 8 vectors so the sums stay in
  // registers.
  template <int NV>
  static void mad_block(const float* vf, int64_t nr, int64_t n_y, const float* w, size_t w_stride, float* y,
                        size_t y_stride) {
    constexpr int n = 8 * NV;
    for (int64_t h = 0; h < n_y; ++h) {
      float* yh = y + static_cast<size_t>(h) * y_stride;
      const float* wh = w + static_cast<size_t>(h) * w_stride;
      for (int c0 = 0; c0 < NV; c0 += 8) {
        constexpr int kChunk = NV < 8 ? NV : 8;
        __m256 acc[kChunk];
        for (int j = 0; j < kChunk; ++j) acc[j] = _mm256_loadu_ps(yh + 8 * (c0 + j));
        for (int64_t r = 0; r < nr; ++r) {
          const __m256 wv = _mm256_set1_ps(wh[r]);
          for (int j = 0; j < kChunk; ++j) {
            acc[j] = _mm256_fmadd_ps(wv, _mm256_load_ps(vf + r * n + 8 * (c0 + j)), acc[j]);
          }
        }
        for (int j = 0; j < kChunk; ++j) _mm256_storeu_ps(yh + 8 * (c0 + j), acc[j]);
      }
    }
  }
};

// A Q8_0 cache's V rows (n a multiple of 32): dequantized to f32 (d * q, the values of
// q8_0_vec_mad_avx2) and summed by the same block kernels.
struct Q8_0Ops : Ops {
  static void rows_to_f32(const uint8_t* base, size_t stride, int64_t nr, int64_t n, float* f) {
    for (int64_t r = 0; r < nr; ++r) {
      const BlockQ8_0* b = reinterpret_cast<const BlockQ8_0*>(base + static_cast<size_t>(r) * stride);
      for (int64_t j = 0; j < n / 8; ++j) _mm256_store_ps(f + r * n + 8 * j, avx2::q8_0_values8(b, j));
    }
  }
  static void vec_mad(int64_t n, float* y, const void* x, float w) { q8_0_vec_mad_avx2(n, y, x, w); }
};

}  // namespace

void f16_dot_rows_group_avx2(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_x, const void* x,
                             size_t x_stride, float* out, size_t out_stride) {
  attn_rows::dot_rows_group<Ops>(n, n_rows, rows, stride, n_x, x, x_stride, out, out_stride);
}

void f16_dot_rows_avx2(int64_t n, int64_t n_rows, const void* rows, size_t stride, const void* x, float* out) {
  attn_rows::dot_rows_group<Ops>(n, n_rows, rows, stride, 1, x, 0, out, 0);
}

void f16_mad_rows_group_avx2(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_y, const float* w,
                             size_t w_stride, float* y, size_t y_stride) {
  attn_rows::mad_rows_group<Ops>(n, n_rows, rows, stride, n_y, w, w_stride, y, y_stride);
}

void f16_mad_rows_avx2(int64_t n, int64_t n_rows, const void* rows, size_t stride, const float* w, float* y) {
  attn_rows::mad_rows_group<Ops>(n, n_rows, rows, stride, 1, w, 0, y, 0);
}

void q8_0_mad_rows_group_avx2(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_y,
                              const float* w, size_t w_stride, float* y, size_t y_stride) {
  attn_rows::mad_rows_group<Q8_0Ops>(n, n_rows, rows, stride, n_y, w, w_stride, y, y_stride);
}

void q8_0_mad_rows_avx2(int64_t n, int64_t n_rows, const void* rows, size_t stride, const float* w, float* y) {
  attn_rows::mad_rows_group<Q8_0Ops>(n, n_rows, rows, stride, 1, w, 0, y, 0);
}

}  // namespace edgeinfer
