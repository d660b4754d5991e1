// Q2_K and Q3_K: 16 sub-blocks of 16 elements per 256-element super-block.
// Q2_K: x = d * sc * q - dmin * m, q in 0..3, 4-bit sc and m per sub-block, fp16 d and dmin.
// Q3_K: x = d * sc * (q - 4), q in 0..7 (2 low bits in qs, the third in hmask), signed 6-bit sc.
// Quants of element i: qs byte (i / 128) * 32 + i % 32, bit pair (i % 128) / 32; Q3_K's high
// bit of element i is bit i / 32 of hmask[i % 32].
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

// 2-bit field of element i (0..255) in a 64-byte qs array.
inline int two_bits(const uint8_t* qs, int i) { return (qs[(i / 128) * 32 + i % 32] >> (2 * ((i % 128) / 32))) & 3; }

void pack_two_bits(const uint8_t* L, uint8_t* qs) {
  for (int half = 0; half < 2; ++half) {
    const uint8_t* l = L + 128 * half;
    for (int k = 0; k < 32; ++k) {
      qs[32 * half + k] = static_cast<uint8_t>(l[k] | (l[k + 32] << 2) | (l[k + 64] << 4) | (l[k + 96] << 6));
    }
  }
}

}  // namespace

// ---- Q2_K ----------------------------------------------------------------------------------

void q2_k_to_float(const void* src, float* dst, int64_t n) {
  const BlockQ2_K* b = static_cast<const BlockQ2_K*>(src);
  for (int64_t i = 0; i < n / kQK_K; ++i, dst += kQK_K) {
    const float d = fp16_to_fp32(b[i].d);
    const float dmin = fp16_to_fp32(b[i].dmin);
    for (int s = 0; s < 16; ++s) {
      const float dl = d * static_cast<float>(b[i].scales[s] & 0x0f);
      const float ml = dmin * static_cast<float>(b[i].scales[s] >> 4);
      for (int k = 0; k < 16; ++k) dst[16 * s + k] = dl * static_cast<float>(two_bits(b[i].qs, 16 * s + k)) - ml;
    }
  }
}

void q2_k_from_float_ref(const float* src, void* dst, int64_t n) {
  BlockQ2_K* b = static_cast<BlockQ2_K*>(dst);
  uint8_t L[kQK_K], aux[16];
  float w[16], scales[16], mins[16];
  for (int64_t i = 0; i < n / kQK_K; ++i, src += kQK_K) {
    float max_scale = 0, max_min = 0;
    for (int s = 0; s < 16; ++s) {
      for (int k = 0; k < 16; ++k) w[k] = std::fabs(src[16 * s + k]);
      scales[s] = fit_affine_levels(16, 3, src + 16 * s, w, L + 16 * s, &mins[s], aux, -0.5f, 0.1f, 15, true);
      max_scale = std::max(max_scale, scales[s]);
      max_min = std::max(max_min, mins[s]);
    }
    // Sub-block scales and mins become 4-bit multiples of the super-block's d and dmin.
    if (max_scale > 0) {
      const float iscale = 15.0f / max_scale;
      for (int s = 0; s < 16; ++s) b[i].scales[s] = static_cast<uint8_t>(nearest_int(iscale * scales[s]));
      b[i].d = fp32_to_fp16(max_scale / 15.0f);
    } else {
      std::memset(b[i].scales, 0, sizeof b[i].scales);
      b[i].d = fp32_to_fp16(0.0f);
    }
    if (max_min > 0) {
      const float iscale = 15.0f / max_min;
      for (int s = 0; s < 16; ++s) b[i].scales[s] |= static_cast<uint8_t>(nearest_int(iscale * mins[s]) << 4);
      b[i].dmin = fp32_to_fp16(max_min / 15.0f);
    } else {
      b[i].dmin = fp32_to_fp16(0.0f);
    }
    // Requantize against the scales actually stored; a zero sub-block scale keeps the fit's levels.
    for (int s = 0; s < 16; ++s) {
      const float d = fp16_to_fp32(b[i].d) * static_cast<float>(b[i].scales[s] & 0x0f);
      if (d == 0.0f) continue;
      const float dm = fp16_to_fp32(b[i].dmin) * static_cast<float>(b[i].scales[s] >> 4);
      for (int k = 0; k < 16; ++k) {
        L[16 * s + k] = static_cast<uint8_t>(std::clamp(nearest_int((src[16 * s + k] + dm) / d), 0, 3));
      }
    }
    pack_two_bits(L, b[i].qs);
  }
}

void q2_k_vec_dot_ref(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ2_K* a = static_cast<const BlockQ2_K*>(x);
  const BlockQ8_K* b = static_cast<const BlockQ8_K*>(y);
  float sum = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    // sum(x*y) = d*dy * sum_s sc_s * sum(q*q8) - dmin*dy * sum_s m_s * bsum_s
    int min_sum = 0;
    for (int g = 0; g < 16; ++g) min_sum += b[i].bsums[g] * (a[i].scales[g] >> 4);
    int qsum = 0;
    for (int g = 0; g < 16; ++g) {
      int part = 0;
      for (int k = 0; k < 16; ++k) part += b[i].qs[16 * g + k] * two_bits(a[i].qs, 16 * g + k);
      qsum += (a[i].scales[g] & 0x0f) * part;
    }
    const float dall = b[i].d * fp16_to_fp32(a[i].d);
    const float dmin = b[i].d * fp16_to_fp32(a[i].dmin);
    sum += dall * static_cast<float>(qsum) - dmin * static_cast<float>(min_sum);
  }
  *s = sum;
}

// ---- Q3_K ----------------------------------------------------------------------------------

namespace {

// Signed 3-bit quant (-4..3) of element i.
inline int q3_value(const BlockQ3_K& b, int i) {
  const int high = (b.hmask[i % 32] >> (i / 32)) & 1;
  return two_bits(b.qs, i) - (high ? 0 : 4);
}

}  // namespace

void q3_k_to_float(const void* src, float* dst, int64_t n) {
  const BlockQ3_K* b = static_cast<const BlockQ3_K*>(src);
  int8_t sc[16];
  for (int64_t i = 0; i < n / kQK_K; ++i, dst += kQK_K) {
    const float d = fp16_to_fp32(b[i].d);
    unpack_q3_scales(b[i].scales, sc);
    for (int s = 0; s < 16; ++s) {
      const float dl = d * static_cast<float>(sc[s]);
      for (int k = 0; k < 16; ++k) dst[16 * s + k] = dl * static_cast<float>(q3_value(b[i], 16 * s + k));
    }
  }
}

void q3_k_from_float_ref(const float* src, void* dst, int64_t n) {
  BlockQ3_K* b = static_cast<BlockQ3_K*>(dst);
  int8_t L[kQK_K];
  float scales[16];
  for (int64_t i = 0; i < n / kQK_K; ++i, src += kQK_K) {
    float max_scale = 0, amax = 0;
    for (int s = 0; s < 16; ++s) {
      scales[s] = fit_symmetric_levels_iterative(16, 4, src + 16 * s, L + 16 * s);
      if (std::fabs(scales[s]) > amax) {
        amax = std::fabs(scales[s]);
        max_scale = scales[s];
      }
    }
    std::memset(b[i].scales, 0, sizeof b[i].scales);
    if (max_scale != 0.0f) {
      // The sub-block scale of largest magnitude maps to -32.
      const float iscale = -32.0f / max_scale;
      for (int s = 0; s < 16; ++s) {
        const int8_t q = static_cast<int8_t>(nearest_int(iscale * scales[s]));
        const int l = std::clamp<int>(q, -32, 31) + 32;
        if (s < 8) {
          b[i].scales[s] = static_cast<uint8_t>(l & 0x0f);
        } else {
          b[i].scales[s - 8] |= static_cast<uint8_t>((l & 0x0f) << 4);
        }
        b[i].scales[8 + s % 4] |= static_cast<uint8_t>((l >> 4) << (2 * (s / 4)));
      }
      b[i].d = fp32_to_fp16(1 / iscale);
    } else {
      b[i].d = fp32_to_fp16(0.0f);
    }
    int8_t sc[16];
    unpack_q3_scales(b[i].scales, sc);
    for (int s = 0; s < 16; ++s) {
      const float d = fp16_to_fp32(b[i].d) * static_cast<float>(sc[s]);
      if (d == 0.0f) continue;
      for (int k = 0; k < 16; ++k) {
        L[16 * s + k] = static_cast<int8_t>(std::clamp(nearest_int(src[16 * s + k] / d), -4, 3) + 4);
      }
    }
    uint8_t low[kQK_K];
    std::memset(b[i].hmask, 0, sizeof b[i].hmask);
    for (int e = 0; e < kQK_K; ++e) {
      int l = L[e];
      if (l > 3) {
        b[i].hmask[e % 32] |= static_cast<uint8_t>(1u << (e / 32));
        l -= 4;
      }
      low[e] = static_cast<uint8_t>(l);
    }
    pack_two_bits(low, b[i].qs);
  }
}

void q3_k_vec_dot_ref(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ3_K* a = static_cast<const BlockQ3_K*>(x);
  const BlockQ8_K* b = static_cast<const BlockQ8_K*>(y);
  float lane_sums[8] = {};
  int8_t q[kQK_K], sc8[16];
  int sc[16];
  int32_t lanes[8];
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    for (int e = 0; e < kQK_K; ++e) q[e] = static_cast<int8_t>(q3_value(a[i], e));
    unpack_q3_scales(a[i].scales, sc8);
    for (int g = 0; g < 16; ++g) sc[g] = sc8[g];
    lane_dot_256(b[i].qs, q, sc, 16, lanes);
    const float d = fp16_to_fp32(a[i].d) * b[i].d;
    for (int l = 0; l < 8; ++l) lane_sums[l] += d * static_cast<float>(lanes[l]);
  }
  float sum = 0;
  for (int l = 0; l < 8; ++l) sum += lane_sums[l];
  *s = sum;
}

}  // namespace edgeinfer
