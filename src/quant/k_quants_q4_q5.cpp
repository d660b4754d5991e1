// Q4_K and Q5_K: 8 sub-blocks of 32 elements per 256-element super-block, each with a 6-bit
// scale and a 6-bit min: x = d * sc * q - dmin * m, q in 0..15 (Q4_K) or 0..31 (Q5_K).
// Element i's low 4 bits: qs byte (i / 64) * 32 + i % 32, low nibble when (i % 64) < 32.
// Q5_K's fifth bit of element i: bit i / 32 of qh[i % 32].
#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/blocks.h"
#include "quant/k_quants_common.h"
#include "quant/quant_rows.h"
#include "quant/rounding.h"
#include "quant/type_traits.h"

namespace edgeinfer {

using namespace quant_detail;

namespace {

inline int nibble(const uint8_t* qs, int i) {
  const uint8_t byte = qs[(i / 64) * 32 + i % 32];
  return (i % 64) < 32 ? (byte & 0x0f) : (byte >> 4);
}

inline int q5k_value(const BlockQ5_K& b, int i) { return nibble(b.qs, i) | (((b.qh[i % 32] >> (i / 32)) & 1) << 4); }

// Shared by Q4_K (nmax 15) and Q5_K (nmax 31): fits the 8 sub-blocks, stores the packed 6-bit
// scales/mins and d/dmin, and returns each element's level in L (requantized with the scales
// actually stored).
void quantize_k4_superblock(const float* x, int nmax, float rmin, int nstep, uint8_t* packed_scales,
                            uint16_t& d_out, uint16_t& dmin_out, uint8_t L[kQK_K]) {
  uint8_t aux[32];
  float w[32], scales[8], mins[8];
  float max_scale = 0, max_min = 0;
  for (int s = 0; s < 8; ++s) {
    const float* xs = x + 32 * s;
    // Weights favour large elements on top of the sub-block's RMS.
    float sum_x2 = 0;
    for (int k = 0; k < 32; ++k) sum_x2 += xs[k] * xs[k];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int k = 0; k < 32; ++k) w[k] = av_x + std::fabs(xs[k]);
    scales[s] = fit_affine_levels(32, nmax, xs, w, L + 32 * s, &mins[s], aux, rmin, 0.1f, nstep, false);
    max_scale = std::max(max_scale, scales[s]);
    max_min = std::max(max_min, mins[s]);
  }
  const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
  uint8_t ls[8], lm[8];
  for (int s = 0; s < 8; ++s) {
    ls[s] = std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_scale * scales[s])));
    lm[s] = std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_min * mins[s])));
  }
  pack_k4_scales(ls, lm, packed_scales);
  d_out = fp32_to_fp16(max_scale / 63.0f);
  dmin_out = fp32_to_fp16(max_min / 63.0f);

  uint8_t sc[8], mn[8];
  unpack_k4_scales(packed_scales, sc, mn);
  for (int s = 0; s < 8; ++s) {
    const float d = fp16_to_fp32(d_out) * static_cast<float>(sc[s]);
    if (d == 0.0f) continue;
    const float dm = fp16_to_fp32(dmin_out) * static_cast<float>(mn[s]);
    for (int k = 0; k < 32; ++k) {
      L[32 * s + k] = static_cast<uint8_t>(std::clamp(nearest_int((x[32 * s + k] + dm) / d), 0, nmax));
    }
  }
}

// GGML's generic Q4_K/Q5_K x Q8_K dot, given the 256 unsigned quants of the weight block.
// Float part: per-lane partial sums across blocks; the min terms go straight into `sum`.
void k4_block_dot(const uint8_t* packed_scales, uint16_t d16, uint16_t dmin16, const int8_t* q, const BlockQ8_K& y,
                  float lane_sums[8], float& sum) {
  uint8_t sc[8], mn[8];
  unpack_k4_scales(packed_scales, sc, mn);
  int min_sum = 0;
  for (int g = 0; g < 16; ++g) min_sum += y.bsums[g] * mn[g / 2];
  int scales[8];
  for (int s = 0; s < 8; ++s) scales[s] = sc[s];
  int32_t lanes[8];
  lane_dot_256(y.qs, q, scales, 32, lanes);
  const float d = fp16_to_fp32(d16) * y.d;
  for (int l = 0; l < 8; ++l) lane_sums[l] += d * static_cast<float>(lanes[l]);
  const float dmin = fp16_to_fp32(dmin16) * y.d;
  sum -= dmin * static_cast<float>(min_sum);
}

}  // namespace

// ---- Q4_K ----------------------------------------------------------------------------------

void q4_k_to_float(const void* src, float* dst, int64_t n) {
  const BlockQ4_K* b = static_cast<const BlockQ4_K*>(src);
  uint8_t sc[8], mn[8];
  for (int64_t i = 0; i < n / kQK_K; ++i, dst += kQK_K) {
    const float d = fp16_to_fp32(b[i].d);
    const float dmin = fp16_to_fp32(b[i].dmin);
    unpack_k4_scales(b[i].scales, sc, mn);
    for (int s = 0; s < 8; ++s) {
      const float dl = d * static_cast<float>(sc[s]);
      const float ml = dmin * static_cast<float>(mn[s]);
      for (int k = 0; k < 32; ++k) dst[32 * s + k] = dl * static_cast<float>(nibble(b[i].qs, 32 * s + k)) - ml;
    }
  }
}

void q4_k_from_float_ref(const float* src, void* dst, int64_t n) {
  BlockQ4_K* b = static_cast<BlockQ4_K*>(dst);
  uint8_t L[kQK_K];
  for (int64_t i = 0; i < n / kQK_K; ++i, src += kQK_K) {
    quantize_k4_superblock(src, 15, -1.0f, 20, b[i].scales, b[i].d, b[i].dmin, L);
    for (int c = 0; c < 4; ++c) {
      for (int k = 0; k < 32; ++k) b[i].qs[32 * c + k] = static_cast<uint8_t>(L[64 * c + k] | (L[64 * c + 32 + k] << 4));
    }
  }
}

void q4_k_vec_dot_ref(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ4_K* a = static_cast<const BlockQ4_K*>(x);
  const BlockQ8_K* b = static_cast<const BlockQ8_K*>(y);
  float lane_sums[8] = {};
  float sum = 0;
  int8_t q[kQK_K];
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    for (int e = 0; e < kQK_K; ++e) q[e] = static_cast<int8_t>(nibble(a[i].qs, e));
    k4_block_dot(a[i].scales, a[i].d, a[i].dmin, q, b[i], lane_sums, sum);
  }
  for (int l = 0; l < 8; ++l) sum += lane_sums[l];
  *s = sum;
}

// ---- Q5_K ----------------------------------------------------------------------------------

void q5_k_to_float(const void* src, float* dst, int64_t n) {
  const BlockQ5_K* b = static_cast<const BlockQ5_K*>(src);
  uint8_t sc[8], mn[8];
  for (int64_t i = 0; i < n / kQK_K; ++i, dst += kQK_K) {
    const float d = fp16_to_fp32(b[i].d);
    const float dmin = fp16_to_fp32(b[i].dmin);
    unpack_k4_scales(b[i].scales, sc, mn);
    for (int s = 0; s < 8; ++s) {
      const float dl = d * static_cast<float>(sc[s]);
      const float ml = dmin * static_cast<float>(mn[s]);
      for (int k = 0; k < 32; ++k) dst[32 * s + k] = dl * static_cast<float>(q5k_value(b[i], 32 * s + k)) - ml;
    }
  }
}

void q5_k_from_float_ref(const float* src, void* dst, int64_t n) {
  BlockQ5_K* b = static_cast<BlockQ5_K*>(dst);
  uint8_t L[kQK_K];
  for (int64_t i = 0; i < n / kQK_K; ++i, src += kQK_K) {
    quantize_k4_superblock(src, 31, -0.5f, 15, b[i].scales, b[i].d, b[i].dmin, L);
    std::memset(b[i].qh, 0, sizeof b[i].qh);
    for (int c = 0; c < 4; ++c) {
      for (int k = 0; k < 32; ++k) {
        int lo = L[64 * c + k], hi = L[64 * c + 32 + k];
        if (lo > 15) {
          lo -= 16;
          b[i].qh[k] |= static_cast<uint8_t>(1u << (2 * c));
        }
        if (hi > 15) {
          hi -= 16;
          b[i].qh[k] |= static_cast<uint8_t>(1u << (2 * c + 1));
        }
        b[i].qs[32 * c + k] = static_cast<uint8_t>(lo | (hi << 4));
      }
    }
  }
}

void q5_k_vec_dot_ref(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ5_K* a = static_cast<const BlockQ5_K*>(x);
  const BlockQ8_K* b = static_cast<const BlockQ8_K*>(y);
  float lane_sums[8] = {};
  float sum = 0;
  int8_t q[kQK_K];
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    for (int e = 0; e < kQK_K; ++e) q[e] = static_cast<int8_t>(q5k_value(a[i], e));
    k4_block_dot(a[i].scales, a[i].d, a[i].dmin, q, b[i], lane_sums, sum);
  }
  for (int l = 0; l < 8; ++l) sum += lane_sums[l];
  *s = sum;
}

}  // namespace edgeinfer
