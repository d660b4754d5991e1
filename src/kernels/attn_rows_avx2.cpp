// AVX2 (+F16C, FMA) attention over an F16 cache's rows, one head or the query heads of a GQA
// group at once: scores against K rows (dot_rows, dot_rows_group) and the weighted sum of V rows
// (mad_rows, mad_rows_group). Up to 8 rows are converted to f32 once per call of the block
// helpers and then used by every head; the single-head entries are the group code with one head,
// so grouped and single results are the same bits by construction.
#include <immintrin.h>

#include "kernels/attn_rows_driver.h"
#include "kernels/simd_avx2.h"

namespace edgeinfer {

namespace {

constexpr int64_t kBlockRows = 8;
constexpr int64_t kMaxDim = 128;  // head_dim of the fast paths (multiples of 8 up to this)

// Lane r = avx2::hsum(a[r]) for 8 vectors, bit for bit (the same tree: lanes i + i+4, then
// i + i+2, then i + i+1, three transposing levels and one permute).
inline __m256 hsum8(const __m256 a[8]) {
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
        _mm256_storeu_ps(o, hsum8(acc));
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

}  // namespace edgeinfer
