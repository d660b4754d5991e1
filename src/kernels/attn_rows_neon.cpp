// NEON attention over an F16 cache's rows, one head or the query heads of a GQA group at once:
// scores against K rows (dot_rows, dot_rows_group) and the weighted sum of V rows (mad_rows,
// mad_rows_group); for a Q8_0 cache the V side (its K side is integer, in dot_q_neon.cpp). Up to
// 4 rows are converted to f32 once per block and used by every head; the
// single-head entries are the group code with one head, so grouped and single results are the
// same bits by construction.
#include <arm_neon.h>

#include "kernels/attn_rows_driver.h"
#include "kernels/simd_neon.h"

namespace edgeinfer {

namespace {

constexpr int64_t kBlockRows = 4;
constexpr int64_t kMaxDim = 128;  // head_dim of the fast paths (multiples of 8 up to this)

// nr (<= 4) f16 rows of n elements to f32, row r at f + r * n.
inline void rows_to_f32(const uint8_t* base, size_t stride, int64_t nr, int64_t n, float* f) {
  for (int64_t r = 0; r < nr; ++r) {
    const uint16_t* v = reinterpret_cast<const uint16_t*>(base + static_cast<size_t>(r) * stride);
    for (int64_t i = 0; i < n; i += 8) {
      const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(v + i));
      vst1q_f32(f + r * n + i, vcvt_f32_f16(vget_low_f16(h)));
      vst1q_f32(f + r * n + i + 4, vcvt_high_f32_f16(h));
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
  static void vec_dot(int64_t n, float* s, const void* x, const void* y) { f16_vec_dot_neon(n, s, x, y); }
  static void vec_mad(int64_t n, float* y, const void* x, float w) { f16_vec_mad_neon(n, y, x, w); }

  // Scores of nr (<= 4) rows for n_x f32 queries (qf + h * n), n = 8 * NV: two FMA chains per row
  // (even and odd 4-element groups), added, then one pairwise reduction for the 4 rows (rows past
  // nr are zeros, their sums dropped). NV is a compile-time constant so the sums stay in registers.
  template <int NV>
  static void dot_block(const float* kf, int64_t nr, int64_t n_x, const float* qf, float* out, size_t out_stride) {
    constexpr int n = 8 * NV;
    for (int64_t h = 0; h < n_x; ++h) {
      const float* q = qf + h * n;
      float32x4_t acc[kBlockRows];
      for (int r = 0; r < kBlockRows; ++r) {
        float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0;
        if (r < nr) {
          for (int j = 0; j < NV; ++j) {
            a0 = vfmaq_f32(a0, vld1q_f32(kf + r * n + 8 * j), vld1q_f32(q + 8 * j));
            a1 = vfmaq_f32(a1, vld1q_f32(kf + r * n + 8 * j + 4), vld1q_f32(q + 8 * j + 4));
          }
        }
        acc[r] = vaddq_f32(a0, a1);
      }
      const float32x4_t sums = vpaddq_f32(vpaddq_f32(acc[0], acc[1]), vpaddq_f32(acc[2], acc[3]));
      float* o = out + static_cast<size_t>(h) * out_stride;
      if (nr == kBlockRows) {
        vst1q_f32(o, sums);
      } else {
        float t[kBlockRows];
        vst1q_f32(t, sums);
        for (int64_t r = 0; r < nr; ++r) o[r] = t[r];
      }
    }
  }

  // y_h += sum_r w_h[r] * row_r for nr (<= 4) f32 rows, n = 8 * NV, per element in row order
  // (the FMA of f16_vec_mad_neon).
  template <int NV>
  static void mad_block(const float* vf, int64_t nr, int64_t n_y, const float* w, size_t w_stride, float* y,
                        size_t y_stride) {
    constexpr int n = 8 * NV;
    constexpr int nv = 2 * NV;  // 4-float vectors, in chunks of 16 (half the registers)
    for (int64_t h = 0; h < n_y; ++h) {
      float* yh = y + static_cast<size_t>(h) * y_stride;
      const float* wh = w + static_cast<size_t>(h) * w_stride;
      for (int c0 = 0; c0 < nv; c0 += 16) {
        constexpr int kChunk = nv < 16 ? nv : 16;
        float32x4_t acc[kChunk];
        for (int j = 0; j < kChunk; ++j) acc[j] = vld1q_f32(yh + 4 * (c0 + j));
        for (int64_t r = 0; r < nr; ++r) {
          const float wr = wh[r];
          for (int j = 0; j < kChunk; ++j) acc[j] = vfmaq_n_f32(acc[j], vld1q_f32(vf + r * n + 4 * (c0 + j)), wr);
        }
        for (int j = 0; j < kChunk; ++j) vst1q_f32(yh + 4 * (c0 + j), acc[j]);
      }
    }
  }
};

// A Q8_0 cache's V rows (n a multiple of 32): dequantized to f32 (d * q, the values of
// q8_0_vec_mad_neon) and summed by the same block kernels.
struct Q8_0Ops : Ops {
  static void rows_to_f32(const uint8_t* base, size_t stride, int64_t nr, int64_t n, float* f) {
    for (int64_t r = 0; r < nr; ++r) {
      const BlockQ8_0* b = reinterpret_cast<const BlockQ8_0*>(base + static_cast<size_t>(r) * stride);
      for (int64_t j = 0; j < n / 16; ++j) {
        float32x4_t v[4];
        neon::q8_0_values16(b, j, v);
        for (int k = 0; k < 4; ++k) vst1q_f32(f + r * n + 16 * j + 4 * k, v[k]);
      }
    }
  }
  static void vec_mad(int64_t n, float* y, const void* x, float w) { q8_0_vec_mad_neon(n, y, x, w); }
};

}  // namespace

void f16_dot_rows_group_neon(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_x, const void* x,
                             size_t x_stride, float* out, size_t out_stride) {
  attn_rows::dot_rows_group<Ops>(n, n_rows, rows, stride, n_x, x, x_stride, out, out_stride);
}

void f16_dot_rows_neon(int64_t n, int64_t n_rows, const void* rows, size_t stride, const void* x, float* out) {
  attn_rows::dot_rows_group<Ops>(n, n_rows, rows, stride, 1, x, 0, out, 0);
}

void f16_mad_rows_group_neon(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_y, const float* w,
                             size_t w_stride, float* y, size_t y_stride) {
  attn_rows::mad_rows_group<Ops>(n, n_rows, rows, stride, n_y, w, w_stride, y, y_stride);
}

void f16_mad_rows_neon(int64_t n, int64_t n_rows, const void* rows, size_t stride, const float* w, float* y) {
  attn_rows::mad_rows_group<Ops>(n, n_rows, rows, stride, 1, w, 0, y, 0);
}

void q8_0_mad_rows_group_neon(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_y,
                              const float* w, size_t w_stride, float* y, size_t y_stride) {
  attn_rows::mad_rows_group<Q8_0Ops>(n, n_rows, rows, stride, n_y, w, w_stride, y, y_stride);
}

void q8_0_mad_rows_neon(int64_t n, int64_t n_rows, const void* rows, size_t stride, const float* w, float* y) {
  attn_rows::mad_rows_group<Q8_0Ops>(n, n_rows, rows, stride, 1, w, 0, y, 0);
}

}  // namespace edgeinfer
