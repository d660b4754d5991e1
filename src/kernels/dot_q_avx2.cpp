// AVX2 dot products of the 32-wide quant types against Q8_0/Q8_1 activations, one block per
// 256-bit register. vpmaddubsw multiplies unsigned weight bytes with signed activation bytes
// into int16 pairs; a constant weight offset is removed in int16 by subtracting
// vpmaddubsw(offset, a) (no overflow: |pair| <= 2 * 31 * 127 + 2 * 16 * 127). Q8_0 weights
// use the sign trick |w| * (a * sign(w)) instead. Block sums are scaled by dw * da in float.
#include "kernels/simd_avx2.h"

namespace edgeinfer {

namespace {

using namespace avx2;

// int32 lanes of sum((u - off) * s) for unsigned u, signed s, byte offset off.
inline __m256i dot_off(__m256i u, __m256i s, __m256i off) {
  const __m256i p = _mm256_sub_epi16(_mm256_maddubs_epi16(u, s), _mm256_maddubs_epi16(off, s));
  return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

inline float scale(uint16_t dw, uint16_t da) { return f16_to_f32(dw) * f16_to_f32(da); }

// Calls blk(i, acc) for every block, alternating two accumulators for latency; their sum.
template <typename Block>
inline __m256 over_blocks_vec(int64_t nb, Block blk) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;
  int64_t i = 0;
  for (; i + 1 < nb; i += 2) {
    blk(i, acc0);
    blk(i + 1, acc1);
  }
  if (i < nb) blk(i, acc0);
  return _mm256_add_ps(acc0, acc1);
}

template <typename Block>
inline float over_blocks(int64_t nb, Block blk) {
  return hsum(over_blocks_vec(nb, blk));
}

inline __m256i q5_weights(const uint8_t* qs, const uint8_t* qh) {
  const __m256i hi = _mm256_and_si256(bits_to_bytes(load_u32(qh)), _mm256_set1_epi8(0x10));
  return _mm256_or_si256(unpack_nibbles(qs), hi);
}

}  // namespace

void q4_0_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ4_0* a = static_cast<const BlockQ4_0*>(x);
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(y);
  const __m256i eight = _mm256_set1_epi8(8);
  *s = over_blocks(n / kQK, [&](int64_t i, __m256& acc) {
    const __m256i isum = dot_off(unpack_nibbles(a[i].qs), loadu256(b[i].qs), eight);
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(scale(a[i].d, b[i].d)), acc);
  });
}

void q8_0_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ8_0* a = static_cast<const BlockQ8_0*>(x);
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(y);
  *s = over_blocks(n / kQK, [&](int64_t i, __m256& acc) {
    const __m256i w = loadu256(a[i].qs);
    // |w| as unsigned (|-128| = 128 fits) times a with w's sign: |pair| <= 2 * 128 * 127.
    const __m256i isum = dot_u8s8(_mm256_abs_epi8(w), _mm256_sign_epi8(loadu256(b[i].qs), w));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(scale(a[i].d, b[i].d)), acc);
  });
}

void q4_1_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ4_1* a = static_cast<const BlockQ4_1*>(x);
  const BlockQ8_1* b = static_cast<const BlockQ8_1*>(y);
  float mins = 0.0f;  // sum of m * (da * sum(a)), the affine part
  const float dots = over_blocks(n / kQK, [&](int64_t i, __m256& acc) {
    const __m256i isum = dot_u8s8(unpack_nibbles(a[i].qs), loadu256(b[i].qs));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(scale(a[i].d, b[i].d)), acc);
    mins += f16_to_f32(a[i].m) * f16_to_f32(b[i].s);
  });
  *s = dots + mins;
}

void q5_0_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ5_0* a = static_cast<const BlockQ5_0*>(x);
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(y);
  const __m256i sixteen = _mm256_set1_epi8(16);
  *s = over_blocks(n / kQK, [&](int64_t i, __m256& acc) {
    const __m256i isum = dot_off(q5_weights(a[i].qs, a[i].qh), loadu256(b[i].qs), sixteen);
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(scale(a[i].d, b[i].d)), acc);
  });
}

void q5_1_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ5_1* a = static_cast<const BlockQ5_1*>(x);
  const BlockQ8_1* b = static_cast<const BlockQ8_1*>(y);
  float mins = 0.0f;
  const float dots = over_blocks(n / kQK, [&](int64_t i, __m256& acc) {
    const __m256i isum = dot_u8s8(q5_weights(a[i].qs, a[i].qh), loadu256(b[i].qs));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(scale(a[i].d, b[i].d)), acc);
    mins += f16_to_f32(a[i].m) * f16_to_f32(b[i].s);
  });
  *s = dots + mins;
}

// Attention scores over a Q8_0 cache's K rows (the query quantized to Q8_0): every score has the
// bits of q8_0_vec_dot_avx2 for that row and query.
void q8_0_dot_rows_avx2(int64_t n, int64_t n_rows, const void* rows, size_t stride, const void* x, float* out) {
  const uint8_t* base = static_cast<const uint8_t*>(rows);
  for (int64_t r = 0; r < n_rows; ++r) q8_0_vec_dot_avx2(n, &out[r], base + static_cast<size_t>(r) * stride, x);
}

namespace {

constexpr int64_t kQ8GroupMaxBlocks = 8;  // head_dim up to 256

// 8 K rows against n_x queries. Per 8 rows the rows' bytes, |bytes| and scales are loaded once for
// all heads; per head the query's blocks and scales once for all rows. Per row over_blocks_vec
// with the same products and scales as q8_0_vec_dot_avx2, then one transposing reduction for the
// 8 rows (hsum8 == hsum per lane), so every score has q8_0_vec_dot_avx2's bits.
void q8_0_dot8_group(int64_t n, const uint8_t* base, size_t stride, int64_t n_x, const uint8_t* xb, size_t x_stride,
                     float* out, size_t out_stride) {
  const int64_t nb = n / kQK;
  __m256i w[8][kQ8GroupMaxBlocks], aw[8][kQ8GroupMaxBlocks];
  float dk[8][kQ8GroupMaxBlocks];
  for (int r = 0; r < 8; ++r) {
    const BlockQ8_0* a = reinterpret_cast<const BlockQ8_0*>(base + static_cast<size_t>(r) * stride);
    for (int64_t i = 0; i < nb; ++i) {
      w[r][i] = loadu256(a[i].qs);
      aw[r][i] = _mm256_abs_epi8(w[r][i]);
      dk[r][i] = f16_to_f32(a[i].d);
    }
  }
  for (int64_t h = 0; h < n_x; ++h) {
    const BlockQ8_0* b = reinterpret_cast<const BlockQ8_0*>(xb + static_cast<size_t>(h) * x_stride);
    __m256i q[kQ8GroupMaxBlocks];
    float dq[kQ8GroupMaxBlocks];
    for (int64_t i = 0; i < nb; ++i) {
      q[i] = loadu256(b[i].qs);
      dq[i] = f16_to_f32(b[i].d);
    }
    __m256 acc[8];
    for (int r = 0; r < 8; ++r) {
      acc[r] = over_blocks_vec(nb, [&](int64_t i, __m256& a) {
        const __m256i isum = dot_u8s8(aw[r][i], _mm256_sign_epi8(q[i], w[r][i]));
        a = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(dk[r][i] * dq[i]), a);
      });
    }
    _mm256_storeu_ps(out + static_cast<size_t>(h) * out_stride, hsum8(acc));
  }
}

}  // namespace

void q8_0_dot_rows_group_avx2(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_x, const void* x,
                              size_t x_stride, float* out, size_t out_stride) {
  const uint8_t* base = static_cast<const uint8_t*>(rows);
  const uint8_t* xb = static_cast<const uint8_t*>(x);
  int64_t r0 = 0;
  if (n <= kQ8GroupMaxBlocks * kQK) {
    for (; r0 + 8 <= n_rows; r0 += 8) {
      q8_0_dot8_group(n, base + static_cast<size_t>(r0) * stride, stride, n_x, xb, x_stride, out + r0, out_stride);
    }
  }
  for (int64_t h = 0; h < n_x; ++h) {
    q8_0_dot_rows_avx2(n, n_rows - r0, base + static_cast<size_t>(r0) * stride, stride,
                       xb + static_cast<size_t>(h) * x_stride, out + static_cast<size_t>(h) * out_stride + r0);
  }
}

}  // namespace edgeinfer
