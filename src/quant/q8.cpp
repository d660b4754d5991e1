// 8-bit types: Q8_0 (weights and activations), Q8_1 (activations for Q4_1/Q5_1, carries
// d * sum(q) so the weight's min term needs no pass over the quants) and Q8_K (activations for
// every K-quant, float scale plus sums of each 16 quants for the weight's min terms).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/blocks.h"
#include "quant/quant_rows.h"
#include "quant/rounding.h"
#include "quant/type_traits.h"

namespace edgeinfer {

using quant_detail::nearest_int;
using quant_detail::round_away;

namespace {

float block_amax(const float* x, int n) {
  float amax = 0.0f;
  for (int j = 0; j < n; ++j) amax = std::max(amax, std::fabs(x[j]));
  return amax;
}

}  // namespace

// ---- Q8_0 ----------------------------------------------------------------------------------

void q8_0_to_float(const void* src, float* dst, int64_t n) {
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const float d = fp16_to_fp32(b[i].d);
    for (int j = 0; j < kQK; ++j) dst[j] = static_cast<float>(b[i].qs[j]) * d;
  }
}

void q8_0_from_float_ref(const float* src, void* dst, int64_t n) {
  BlockQ8_0* b = static_cast<BlockQ8_0*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    const float d = block_amax(src, kQK) / 127.0f;
    const float inv = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = fp32_to_fp16(d);
    for (int j = 0; j < kQK; ++j) b[i].qs[j] = static_cast<int8_t>(round_away(src[j] * inv));
  }
}

void q8_0_from_float_x86(const float* src, void* dst, int64_t n) {
  BlockQ8_0* b = static_cast<BlockQ8_0*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    const float amax = block_amax(src, kQK);
    b[i].d = fp32_to_fp16(amax / 127.0f);
    const float mul = amax != 0.0f ? 127.0f / amax : 0.0f;
    for (int j = 0; j < kQK; ++j) b[i].qs[j] = static_cast<int8_t>(nearest_int(src[j] * mul));
  }
}

void q8_0_vec_dot_ref(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ8_0* a = static_cast<const BlockQ8_0*>(x);
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(y);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK; ++i) {
    int isum = 0;
    for (int j = 0; j < kQK; ++j) isum += a[i].qs[j] * b[i].qs[j];
    sum += static_cast<float>(isum) * (fp16_to_fp32(a[i].d) * fp16_to_fp32(b[i].d));
  }
  *s = sum;
}

// ---- Q8_1 ----------------------------------------------------------------------------------

void q8_1_to_float(const void* src, float* dst, int64_t n) {
  const BlockQ8_1* b = static_cast<const BlockQ8_1*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const float d = fp16_to_fp32(b[i].d);
    for (int j = 0; j < kQK; ++j) dst[j] = static_cast<float>(b[i].qs[j]) * d;
  }
}

void q8_1_from_float_ref(const float* src, void* dst, int64_t n) {
  BlockQ8_1* b = static_cast<BlockQ8_1*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    const float d = block_amax(src, kQK) / 127.0f;
    const float inv = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = fp32_to_fp16(d);
    int qsum = 0;
    for (int j = 0; j < kQK; ++j) {
      b[i].qs[j] = static_cast<int8_t>(round_away(src[j] * inv));
      qsum += b[i].qs[j];
    }
    b[i].s = fp32_to_fp16(static_cast<float>(qsum) * d);
  }
}

void q8_1_from_float_x86(const float* src, void* dst, int64_t n) {
  BlockQ8_1* b = static_cast<BlockQ8_1*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    const float amax = block_amax(src, kQK);
    const float d = amax / 127.0f;
    b[i].d = fp32_to_fp16(d);
    const float mul = amax != 0.0f ? 127.0f / amax : 0.0f;
    int qsum = 0;
    for (int j = 0; j < kQK; ++j) {
      b[i].qs[j] = static_cast<int8_t>(nearest_int(src[j] * mul));
      qsum += b[i].qs[j];
    }
    b[i].s = fp32_to_fp16(d * static_cast<float>(qsum));
  }
}

void q8_1_vec_dot_ref(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ8_1* a = static_cast<const BlockQ8_1*>(x);
  const BlockQ8_1* b = static_cast<const BlockQ8_1*>(y);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK; ++i) {
    int isum = 0;
    for (int j = 0; j < kQK; ++j) isum += a[i].qs[j] * b[i].qs[j];
    sum += static_cast<float>(isum) * (fp16_to_fp32(a[i].d) * fp16_to_fp32(b[i].d));
  }
  *s = sum;
}

// ---- Q8_K ----------------------------------------------------------------------------------

void q8_k_to_float(const void* src, float* dst, int64_t n) {
  const BlockQ8_K* b = static_cast<const BlockQ8_K*>(src);
  for (int64_t i = 0; i < n / kQK_K; ++i, dst += kQK_K) {
    for (int j = 0; j < kQK_K; ++j) dst[j] = b[i].d * static_cast<float>(b[i].qs[j]);
  }
}

void q8_k_from_float_ref(const float* src, void* dst, int64_t n) {
  BlockQ8_K* b = static_cast<BlockQ8_K*>(dst);
  for (int64_t i = 0; i < n / kQK_K; ++i, src += kQK_K) {
    // The element of largest magnitude (first one on ties) maps to -127: the scale is
    // negative when that element is positive.
    float amax = 0.0f, vmax = 0.0f;
    for (int j = 0; j < kQK_K; ++j) {
      if (std::fabs(src[j]) > amax) {
        amax = std::fabs(src[j]);
        vmax = src[j];
      }
    }
    if (amax == 0.0f) {
      // GGML leaves bsums unwritten here; zero is what any sum of these quants would be.
      std::memset(&b[i], 0, sizeof(BlockQ8_K));
      continue;
    }
    const float iscale = -127.0f / vmax;
    for (int j = 0; j < kQK_K; ++j) b[i].qs[j] = static_cast<int8_t>(std::min(127, nearest_int(iscale * src[j])));
    for (int g = 0; g < kQK_K / 16; ++g) {
      int gsum = 0;
      for (int j = 0; j < 16; ++j) gsum += b[i].qs[16 * g + j];
      b[i].bsums[g] = static_cast<int16_t>(gsum);
    }
    b[i].d = 1.0f / iscale;
  }
}

void q8_k_vec_dot_ref(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ8_K* a = static_cast<const BlockQ8_K*>(x);
  const BlockQ8_K* b = static_cast<const BlockQ8_K*>(y);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int isum = 0;
    for (int j = 0; j < kQK_K; ++j) isum += a[i].qs[j] * b[i].qs[j];
    sum += static_cast<float>(isum) * (a[i].d * b[i].d);
  }
  *s = sum;
}

}  // namespace edgeinfer
