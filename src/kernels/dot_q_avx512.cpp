// AVX-512 dot products of the 32-wide quant types against Q8_0/Q8_1 activations.
// Two blocks per 512-bit register: weights become unsigned bytes (the nibble, plus the fifth
// bit for Q5, or the int8 plus 128 for Q8_0) and vpdpbusd multiplies them with the signed
// activation bytes; the constant offset is removed with a second vpdpbusd that sums the
// activations (offset * sum(a)). Each block's int32 lanes are scaled by dw * da in float.
#include "kernels/block16_avx512.h"
#include "kernels/simd_avx512.h"

namespace edgeinfer {

namespace {

using namespace avx512;

// Per-lane sum over 4-byte groups of u * s, where u is the unsigned operand.
inline __m512i dot_u8s8(__m512i u, __m512i s) { return _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, s); }

// int32 lanes of sum((u - off) * s) for a byte offset off (as set1_epi8).
inline __m512i dot_off(__m512i u, __m512i s, __m512i off) {
  return _mm512_sub_epi32(dot_u8s8(u, s), dot_u8s8(off, s));
}

// The Q5 fifth bits of two blocks as a 64-lane mask (lane j of block k is bit j of qh_k).
inline __mmask64 q5_high_mask(const uint8_t* qh0, const uint8_t* qh1) {
  return static_cast<__mmask64>(load_u32(qh0)) | (static_cast<__mmask64>(load_u32(qh1)) << 32);
}

// Loop over block pairs; `pair(i, j)` handles blocks i and j (j == i for an odd last block,
// whose second half the caller zeroes through the scale).
template <typename Pair>
inline void for_pairs(int64_t nb, Pair pair) {
  int64_t i = 0;
  for (; i + 1 < nb; i += 2) pair(i, i + 1, true);
  if (i < nb) pair(i, i, false);
}

}  // namespace

// Blocks are processed 16 at a time (kernels/block16_avx512.h).

void q4_0_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ4_0* a = static_cast<const BlockQ4_0*>(x);
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(y);
  const int64_t nb = n / kQK;
  const __m512i eight = _mm512_set1_epi8(8);
  __m512 acc = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= nb; i += 16) {
    __m512i v[8];
    for (int p = 0; p < 8; ++p) {
      const int64_t j = i + 2 * p;
      const __m512i w = unpack_nibbles2(a[j].qs, a[j + 1].qs);
      const __m512i q = load2x256(b[j].qs, b[j + 1].qs);
      v[p] = dot_off(w, q, eight);
    }
    const __m512 sc = _mm512_mul_ps(scales_stride18(reinterpret_cast<const uint8_t*>(a + i)),
                                    scales_stride34(reinterpret_cast<const uint8_t*>(b + i)));
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(reduce16(v)), sc, acc);
  }
  for_pairs(nb - i, [&](int64_t i0, int64_t j0, bool two) {
    const int64_t bi = i + i0, bj = i + j0;
    const __m512i w = unpack_nibbles2(a[bi].qs, a[bj].qs);
    const __m512i q = load2x256(b[bi].qs, b[bj].qs);
    const __m512 sc = two_scales(f16_to_f32(a[bi].d) * f16_to_f32(b[bi].d),
                                 two ? f16_to_f32(a[bj].d) * f16_to_f32(b[bj].d) : 0.0f);
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot_off(w, q, eight)), sc, acc);
  });
  *s = hsum(acc);
}

void q8_0_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ8_0* a = static_cast<const BlockQ8_0*>(x);
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(y);
  const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512 acc = _mm512_setzero_ps();
  for_pairs(n / kQK, [&](int64_t i, int64_t j, bool two) {
    // int8 w becomes the unsigned byte w + 128 (flip of the sign bit); 128 * sum(a) comes off.
    const __m512i w = _mm512_xor_si512(load2x256(a[i].qs, a[j].qs), bias);
    const __m512i q = load2x256(b[i].qs, b[j].qs);
    const __m512 sc = two_scales(f16_to_f32(a[i].d) * f16_to_f32(b[i].d),
                                 two ? f16_to_f32(a[j].d) * f16_to_f32(b[j].d) : 0.0f);
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot_off(w, q, bias)), sc, acc);
  });
  *s = hsum(acc);
}

void q4_1_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ4_1* a = static_cast<const BlockQ4_1*>(x);
  const BlockQ8_1* b = static_cast<const BlockQ8_1*>(y);
  __m512 acc = _mm512_setzero_ps();
  float mins = 0.0f;  // sum of m * (da * sum(a)), the affine part
  for_pairs(n / kQK, [&](int64_t i, int64_t j, bool two) {
    const __m512i w = unpack_nibbles2(a[i].qs, a[j].qs);
    const __m512i q = load2x256(b[i].qs, b[j].qs);
    const __m512 sc = two_scales(f16_to_f32(a[i].d) * f16_to_f32(b[i].d),
                                 two ? f16_to_f32(a[j].d) * f16_to_f32(b[j].d) : 0.0f);
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot_u8s8(w, q)), sc, acc);
    mins += f16_to_f32(a[i].m) * f16_to_f32(b[i].s);
    if (two) mins += f16_to_f32(a[j].m) * f16_to_f32(b[j].s);
  });
  *s = hsum(acc) + mins;
}

void q5_0_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ5_0* a = static_cast<const BlockQ5_0*>(x);
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(y);
  const __m512i sixteen = _mm512_set1_epi8(16);
  __m512 acc = _mm512_setzero_ps();
  for_pairs(n / kQK, [&](int64_t i, int64_t j, bool two) {
    __m512i w = unpack_nibbles2(a[i].qs, a[j].qs);
    w = _mm512_mask_add_epi8(w, q5_high_mask(a[i].qh, a[j].qh), w, sixteen);
    const __m512i q = load2x256(b[i].qs, b[j].qs);
    const __m512 sc = two_scales(f16_to_f32(a[i].d) * f16_to_f32(b[i].d),
                                 two ? f16_to_f32(a[j].d) * f16_to_f32(b[j].d) : 0.0f);
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot_off(w, q, sixteen)), sc, acc);
  });
  *s = hsum(acc);
}

void q5_1_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ5_1* a = static_cast<const BlockQ5_1*>(x);
  const BlockQ8_1* b = static_cast<const BlockQ8_1*>(y);
  const __m512i sixteen = _mm512_set1_epi8(16);
  __m512 acc = _mm512_setzero_ps();
  float mins = 0.0f;
  for_pairs(n / kQK, [&](int64_t i, int64_t j, bool two) {
    __m512i w = unpack_nibbles2(a[i].qs, a[j].qs);
    w = _mm512_mask_add_epi8(w, q5_high_mask(a[i].qh, a[j].qh), w, sixteen);
    const __m512i q = load2x256(b[i].qs, b[j].qs);
    const __m512 sc = two_scales(f16_to_f32(a[i].d) * f16_to_f32(b[i].d),
                                 two ? f16_to_f32(a[j].d) * f16_to_f32(b[j].d) : 0.0f);
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot_u8s8(w, q)), sc, acc);
    mins += f16_to_f32(a[i].m) * f16_to_f32(b[i].s);
    if (two) mins += f16_to_f32(a[j].m) * f16_to_f32(b[j].s);
  });
  *s = hsum(acc) + mins;
}

// Attention scores over a Q8_0 cache's K rows (the query quantized to Q8_0): every score has the
// bits of q8_0_vec_dot_avx512 for that row and query.
void q8_0_dot_rows_avx512(int64_t n, int64_t n_rows, const void* rows, size_t stride, const void* x, float* out) {
  const uint8_t* base = static_cast<const uint8_t*>(rows);
  for (int64_t r = 0; r < n_rows; ++r) q8_0_vec_dot_avx512(n, &out[r], base + static_cast<size_t>(r) * stride, x);
}

namespace {

constexpr int64_t kQ8GroupMaxPairs = 4;  // head_dim up to 256

// 16 K rows against n_x queries. Per 16 rows the rows' biased bytes and scales are loaded once
// for all heads; per head the offset term (128 * the query's byte sums per lane) is computed once
// for all rows, since it depends on the query alone (the int32 lanes are the same exact sums as
// dot_off's). Per row the same FMA with the same scales as q8_0_vec_dot_avx512, then one
// transposing reduction for the 16 rows (hsum16 == hsum per lane).
void q8_0_dot16_group(int64_t n, const uint8_t* base, size_t stride, int64_t n_x, const uint8_t* xb, size_t x_stride,
                      float* out, size_t out_stride) {
  const int64_t nb = n / kQK;
  const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512i w[16][kQ8GroupMaxPairs];
  float dk[16][2 * kQ8GroupMaxPairs];
  for (int r = 0; r < 16; ++r) {
    const BlockQ8_0* a = reinterpret_cast<const BlockQ8_0*>(base + static_cast<size_t>(r) * stride);
    int p = 0;
    for_pairs(nb, [&](int64_t i, int64_t j, bool) {
      w[r][p] = _mm512_xor_si512(load2x256(a[i].qs, a[j].qs), bias);
      dk[r][2 * p] = f16_to_f32(a[i].d);
      dk[r][2 * p + 1] = f16_to_f32(a[j].d);
      ++p;
    });
  }
  for (int64_t h = 0; h < n_x; ++h) {
    const BlockQ8_0* b = reinterpret_cast<const BlockQ8_0*>(xb + static_cast<size_t>(h) * x_stride);
    __m512i q[kQ8GroupMaxPairs], off[kQ8GroupMaxPairs];
    float dq[2 * kQ8GroupMaxPairs];
    bool two[kQ8GroupMaxPairs];
    int np = 0;
    for_pairs(nb, [&](int64_t i, int64_t j, bool t) {
      q[np] = load2x256(b[i].qs, b[j].qs);
      off[np] = dot_u8s8(bias, q[np]);
      dq[2 * np] = f16_to_f32(b[i].d);
      dq[2 * np + 1] = f16_to_f32(b[j].d);
      two[np] = t;
      ++np;
    });
    __m512 acc[16];
    for (int r = 0; r < 16; ++r) {
      __m512 a = _mm512_setzero_ps();
      for (int p = 0; p < np; ++p) {
        const __m512 sc = two_scales(dk[r][2 * p] * dq[2 * p], two[p] ? dk[r][2 * p + 1] * dq[2 * p + 1] : 0.0f);
        a = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(dot_u8s8(w[r][p], q[p]), off[p])), sc, a);
      }
      acc[r] = a;
    }
    _mm512_storeu_ps(out + static_cast<size_t>(h) * out_stride, hsum16(acc));
  }
}

// q8_0_dot16_group for many queries (a prompt's tokens' heads): each pair's 16 row vectors are
// transposed once, so that vector l holds lane l (4 biased bytes of block i or j) of the 16 rows;
// then per query and lane l, the rows' partial sums are the same steps as dot16's lane l (the
// dpbusd of the 4 bytes against the query's, minus the query's offset for them, converted, times
// the same scale product, FMA-chained over the pairs) with the query's dword and offset
// broadcast, and the 16 partials are summed by vector adds in hsum16's tree: every score the
// same operations on the same values, without the per-row scale vectors and the shuffles of
// hsum16 per query. kJ queries at a time share the loads of the transposed rows.
void q8_0_dot16_group_t(int64_t n, const uint8_t* base, size_t stride, int64_t n_x, const uint8_t* xb, size_t x_stride,
                        float* out, size_t out_stride) {
  constexpr int kJ = 4;
  const int64_t nb = n / kQK;
  const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
  alignas(64) int32_t wt[kQ8GroupMaxPairs][16][16];  // [pair][lane l][row]
  alignas(64) float dk[kQ8GroupMaxPairs][2][16];     // [pair][block i, j][row]
  bool two[kQ8GroupMaxPairs];
  int np = 0;
  for_pairs(nb, [&](int64_t i, int64_t j, bool t) {
    __m512i v[16];
    for (int r = 0; r < 16; ++r) {
      const BlockQ8_0* a = reinterpret_cast<const BlockQ8_0*>(base + static_cast<size_t>(r) * stride);
      v[r] = _mm512_xor_si512(load2x256(a[i].qs, a[j].qs), bias);
      dk[np][0][r] = f16_to_f32(a[i].d);
      dk[np][1][r] = f16_to_f32(a[j].d);
    }
    transpose16(v);
    for (int l = 0; l < 16; ++l) _mm512_store_si512(wt[np][l], v[l]);
    two[np] = t;
    ++np;
  });
  // Per query of a run: its dwords and offsets per pair and lane (broadcast from here), and the
  // rows' scale products per pair and block.
  alignas(64) int32_t qd[kJ][kQ8GroupMaxPairs][16], od[kJ][kQ8GroupMaxPairs][16];
  alignas(64) float sc[kJ][kQ8GroupMaxPairs][2][16];
  auto queries = [&]<int J>(int64_t h0) {
    for (int i = 0; i < J; ++i) {
      const BlockQ8_0* b = reinterpret_cast<const BlockQ8_0*>(xb + static_cast<size_t>(h0 + i) * x_stride);
      int p = 0;
      for_pairs(nb, [&](int64_t bi, int64_t bj, bool) {
        const __m512i q = load2x256(b[bi].qs, b[bj].qs);
        _mm512_store_si512(qd[i][p], q);
        _mm512_store_si512(od[i][p], dot_u8s8(bias, q));
        const __m512 si = _mm512_mul_ps(_mm512_load_ps(dk[p][0]), _mm512_set1_ps(f16_to_f32(b[bi].d)));
        const __m512 sj = _mm512_mul_ps(_mm512_load_ps(dk[p][1]), _mm512_set1_ps(f16_to_f32(b[bj].d)));
        _mm512_store_ps(sc[i][p][0], si);
        _mm512_store_ps(sc[i][p][1], two[p] ? sj : _mm512_setzero_ps());
        ++p;
      });
    }
    // Lane l's partials of J queries.
    auto part = [&](int l, __m512(&o)[J]) [[gnu::always_inline]] {
      for (int i = 0; i < J; ++i) o[i] = _mm512_setzero_ps();
      for (int p = 0; p < np; ++p) {
        const __m512i w = _mm512_load_si512(wt[p][l]);
        for (int i = 0; i < J; ++i) {
          const __m512i dw = dot_u8s8(w, _mm512_set1_epi32(qd[i][p][l]));
          const __m512i d = _mm512_sub_epi32(dw, _mm512_set1_epi32(od[i][p][l]));
          o[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d), _mm512_load_ps(sc[i][p][l / 8]), o[i]);
        }
      }
    };
    __m512 t[J];
    tree_sum16<J>(part, t);
    for (int i = 0; i < J; ++i) _mm512_storeu_ps(out + static_cast<size_t>(h0 + i) * out_stride, t[i]);
  };
  int64_t h = 0;
  for (; h + kJ <= n_x; h += kJ) queries.template operator()<kJ>(h);
  for (; h < n_x; ++h) queries.template operator()<1>(h);
}

// Queries from which the transposed rows pay for their transposes. Scratch A/B on the Intel VM
// (one thread, 64 blocks of 16 rows in cache, head_dim 64, HEAD's kernel linked beside, paired
// medians old/new): 1 query 0.73, 2 0.97, 4 1.26, 8 1.65 (head_dim 128: 1.60), 16 1.90, 64 2.22.
constexpr int64_t kQ8TransposeFrom = 4;

}  // namespace

void q8_0_dot_rows_group_avx512(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_x, const void* x,
                                size_t x_stride, float* out, size_t out_stride) {
  const uint8_t* base = static_cast<const uint8_t*>(rows);
  const uint8_t* xb = static_cast<const uint8_t*>(x);
  int64_t r0 = 0;
  if (n <= 2 * kQ8GroupMaxPairs * kQK) {
    for (; r0 + 16 <= n_rows; r0 += 16) {
      const auto block = n_x >= kQ8TransposeFrom ? q8_0_dot16_group_t : q8_0_dot16_group;
      block(n, base + static_cast<size_t>(r0) * stride, stride, n_x, xb, x_stride, out + r0, out_stride);
    }
  }
  for (int64_t h = 0; h < n_x; ++h) {
    q8_0_dot_rows_avx512(n, n_rows - r0, base + static_cast<size_t>(r0) * stride, stride,
                         xb + static_cast<size_t>(h) * x_stride, out + static_cast<size_t>(h) * out_stride + r0);
  }
}

}  // namespace edgeinfer
