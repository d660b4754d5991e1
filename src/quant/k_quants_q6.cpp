// Q6_K: 16 sub-blocks of 16 elements per 256-element super-block, x = d * sc * (q - 32), q in
// 0..63, signed 8-bit sc per sub-block, fp16 d. Element i (r = i % 128, half h = i / 128): low 4
// bits in ql[64 h + r % 64] (low nibble when r < 64), high 2 bits in qh[32 h + r % 32] at bit
// pair r / 32.
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

constexpr float kGroupEps = 1e-15f;

// Signed 6-bit quant (-32..31) of element i.
inline int q6_value(const BlockQ6_K& b, int i) {
  const int h = i / 128, r = i % 128;
  const uint8_t lb = b.ql[64 * h + r % 64];
  const int low = r < 64 ? (lb & 0x0f) : (lb >> 4);
  const int high = (b.qh[32 * h + r % 32] >> (2 * (r / 32))) & 3;
  return (low | (high << 4)) - 32;
}

}  // namespace

void q6_k_to_float(const void* src, float* dst, int64_t n) {
  const BlockQ6_K* b = static_cast<const BlockQ6_K*>(src);
  for (int64_t i = 0; i < n / kQK_K; ++i, dst += kQK_K) {
    const float d = fp16_to_fp32(b[i].d);
    for (int e = 0; e < kQK_K; ++e) {
      // GGML's order: (d * sc) * q.
      dst[e] = d * static_cast<float>(b[i].scales[e / 16]) * static_cast<float>(q6_value(b[i], e));
    }
  }
}

void q6_k_from_float_ref(const float* src, void* dst, int64_t n) {
  BlockQ6_K* b = static_cast<BlockQ6_K*>(dst);
  int8_t L[kQK_K];
  float scales[16];
  for (int64_t i = 0; i < n / kQK_K; ++i, src += kQK_K) {
    float max_scale = 0, max_abs = 0;
    for (int s = 0; s < 16; ++s) {
      scales[s] = fit_symmetric_levels(16, 32, src + 16 * s, L + 16 * s);
      if (std::fabs(scales[s]) > max_abs) {
        max_abs = std::fabs(scales[s]);
        max_scale = scales[s];
      }
    }
    if (max_abs < kGroupEps) {
      std::memset(&b[i], 0, sizeof(BlockQ6_K));
      continue;
    }
    // The sub-block scale of largest magnitude maps to -128.
    const float iscale = -128.0f / max_scale;
    b[i].d = fp32_to_fp16(1 / iscale);
    for (int s = 0; s < 16; ++s) b[i].scales[s] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[s])));
    for (int s = 0; s < 16; ++s) {
      const float d = fp16_to_fp32(b[i].d) * static_cast<float>(b[i].scales[s]);
      if (d == 0.0f) continue;
      for (int k = 0; k < 16; ++k) {
        L[16 * s + k] = static_cast<int8_t>(std::clamp(nearest_int(src[16 * s + k] / d), -32, 31) + 32);
      }
    }
    for (int h = 0; h < 2; ++h) {
      const int8_t* l = L + 128 * h;
      uint8_t* ql = b[i].ql + 64 * h;
      uint8_t* qh = b[i].qh + 32 * h;
      for (int k = 0; k < 32; ++k) {
        ql[k] = static_cast<uint8_t>((l[k] & 0x0f) | ((l[k + 64] & 0x0f) << 4));
        ql[k + 32] = static_cast<uint8_t>((l[k + 32] & 0x0f) | ((l[k + 96] & 0x0f) << 4));
        qh[k] = static_cast<uint8_t>((l[k] >> 4) | ((l[k + 32] >> 4) << 2) | ((l[k + 64] >> 4) << 4) |
                                     ((l[k + 96] >> 4) << 6));
      }
    }
  }
}

void q6_k_vec_dot_ref(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ6_K* a = static_cast<const BlockQ6_K*>(x);
  const BlockQ8_K* b = static_cast<const BlockQ8_K*>(y);
  float lane_sums[8] = {};
  int8_t q[kQK_K];
  int sc[16];
  int32_t lanes[8];
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    for (int e = 0; e < kQK_K; ++e) q[e] = static_cast<int8_t>(q6_value(a[i], e));
    for (int g = 0; g < 16; ++g) sc[g] = a[i].scales[g];
    lane_dot_256(b[i].qs, q, sc, 16, lanes);
    const float d = fp16_to_fp32(a[i].d) * b[i].d;
    for (int l = 0; l < 8; ++l) lane_sums[l] += d * static_cast<float>(lanes[l]);
  }
  float sum = 0;
  for (int l = 0; l < 8; ++l) sum += lane_sums[l];
  *s = sum;
}

}  // namespace edgeinfer
