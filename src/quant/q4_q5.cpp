// The 32-wide 4- and 5-bit types. Q4_0/Q5_0 are symmetric (x = d * (q - 8|16)) with d chosen
// so the element of largest magnitude lands exactly on the most negative level; Q4_1/Q5_1 are
// affine (x = d * q + m) spanning [min, max] of the block. Element j of a block sits in the
// low nibble of byte j (j < 16) or the high nibble of byte j - 16; Q5's fifth bit of element j
// is bit j of the little-endian 32-bit qh.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "quant/blocks.h"
#include "quant/quant_rows.h"
#include "quant/type_traits.h"

namespace edgeinfer {

namespace {

constexpr int kHalf = kQK / 2;

// Signed value of largest magnitude (the first such element on ties), as GGML picks it.
float signed_absmax(const float* x) {
  float amax = 0.0f, vmax = 0.0f;
  for (int j = 0; j < kQK; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      vmax = x[j];
    }
  }
  return vmax;
}

void min_max(const float* x, float& lo, float& hi) {
  lo = FLT_MAX;
  hi = -FLT_MAX;
  for (int j = 0; j < kQK; ++j) {
    if (x[j] < lo) lo = x[j];
    if (x[j] > hi) hi = x[j];
  }
}

uint32_t load_qh(const uint8_t* qh) {
  uint32_t v;
  std::memcpy(&v, qh, sizeof v);
  return v;
}

// The 5-bit quant of element j (0..31) of a Q5 block.
inline int q5_value(const uint8_t* qs, uint32_t qh, int j) {
  const int lo = j < kHalf ? (qs[j] & 0x0f) : (qs[j - kHalf] >> 4);
  return lo | static_cast<int>(((qh >> j) & 1u) << 4);
}

}  // namespace

// ---- Q4_0 ----------------------------------------------------------------------------------

void q4_0_to_float(const void* src, float* dst, int64_t n) {
  const BlockQ4_0* b = static_cast<const BlockQ4_0*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const float d = fp16_to_fp32(b[i].d);
    for (int j = 0; j < kHalf; ++j) {
      dst[j] = static_cast<float>((b[i].qs[j] & 0x0f) - 8) * d;
      dst[j + kHalf] = static_cast<float>((b[i].qs[j] >> 4) - 8) * d;
    }
  }
}

void q4_0_from_float_ref(const float* src, void* dst, int64_t n) {
  BlockQ4_0* b = static_cast<BlockQ4_0*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    const float d = signed_absmax(src) / -8.0f;
    const float inv = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = fp32_to_fp16(d);
    for (int j = 0; j < kHalf; ++j) {
      // +8.5 then truncation: round half up onto the 0..16 grid; 16 only for the extreme.
      const float v0 = src[j] * inv;
      const float v1 = src[j + kHalf] * inv;
      const int q0 = std::min(15, static_cast<int>(v0 + 8.5f));
      const int q1 = std::min(15, static_cast<int>(v1 + 8.5f));
      b[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

void q4_0_vec_dot_ref(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ4_0* a = static_cast<const BlockQ4_0*>(x);
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(y);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK; ++i) {
    int isum = 0;
    for (int j = 0; j < kHalf; ++j) {
      isum += ((a[i].qs[j] & 0x0f) - 8) * b[i].qs[j];
      isum += ((a[i].qs[j] >> 4) - 8) * b[i].qs[j + kHalf];
    }
    // GGML's order: (sumi * dx) * dy.
    sum += static_cast<float>(isum) * fp16_to_fp32(a[i].d) * fp16_to_fp32(b[i].d);
  }
  *s = sum;
}

// ---- Q4_1 ----------------------------------------------------------------------------------

void q4_1_to_float(const void* src, float* dst, int64_t n) {
  const BlockQ4_1* b = static_cast<const BlockQ4_1*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const float d = fp16_to_fp32(b[i].d);
    const float m = fp16_to_fp32(b[i].m);
    for (int j = 0; j < kHalf; ++j) {
      dst[j] = static_cast<float>(b[i].qs[j] & 0x0f) * d + m;
      dst[j + kHalf] = static_cast<float>(b[i].qs[j] >> 4) * d + m;
    }
  }
}

void q4_1_from_float_ref(const float* src, void* dst, int64_t n) {
  BlockQ4_1* b = static_cast<BlockQ4_1*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    float lo, hi;
    min_max(src, lo, hi);
    const float d = (hi - lo) / 15.0f;
    const float inv = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = fp32_to_fp16(d);
    b[i].m = fp32_to_fp16(lo);
    for (int j = 0; j < kHalf; ++j) {
      const float v0 = (src[j] - lo) * inv;
      const float v1 = (src[j + kHalf] - lo) * inv;
      const int q0 = std::min(15, static_cast<int>(v0 + 0.5f));
      const int q1 = std::min(15, static_cast<int>(v1 + 0.5f));
      b[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

void q4_1_vec_dot_ref(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ4_1* a = static_cast<const BlockQ4_1*>(x);
  const BlockQ8_1* b = static_cast<const BlockQ8_1*>(y);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK; ++i) {
    int isum = 0;
    for (int j = 0; j < kHalf; ++j) {
      isum += (a[i].qs[j] & 0x0f) * b[i].qs[j];
      isum += (a[i].qs[j] >> 4) * b[i].qs[j + kHalf];
    }
    // sum(x*y) = dx*dy*sum(qx*qy) + mx * (dy*sum(qy)), the last factor stored in y's s.
    sum += (fp16_to_fp32(a[i].d) * fp16_to_fp32(b[i].d)) * static_cast<float>(isum) +
           fp16_to_fp32(a[i].m) * fp16_to_fp32(b[i].s);
  }
  *s = sum;
}

// ---- Q5_0 ----------------------------------------------------------------------------------

void q5_0_to_float(const void* src, float* dst, int64_t n) {
  const BlockQ5_0* b = static_cast<const BlockQ5_0*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const float d = fp16_to_fp32(b[i].d);
    const uint32_t qh = load_qh(b[i].qh);
    for (int j = 0; j < kQK; ++j) dst[j] = static_cast<float>(q5_value(b[i].qs, qh, j) - 16) * d;
  }
}

void q5_0_from_float_ref(const float* src, void* dst, int64_t n) {
  BlockQ5_0* b = static_cast<BlockQ5_0*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    const float d = signed_absmax(src) / -16.0f;
    const float inv = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = fp32_to_fp16(d);
    uint32_t qh = 0;
    for (int j = 0; j < kHalf; ++j) {
      const float v0 = src[j] * inv;
      const float v1 = src[j + kHalf] * inv;
      const int q0 = std::min(31, static_cast<int>(v0 + 16.5f));
      const int q1 = std::min(31, static_cast<int>(v1 + 16.5f));
      b[i].qs[j] = static_cast<uint8_t>((q0 & 0x0f) | ((q1 & 0x0f) << 4));
      qh |= static_cast<uint32_t>(q0 >> 4) << j;
      qh |= static_cast<uint32_t>(q1 >> 4) << (j + kHalf);
    }
    std::memcpy(b[i].qh, &qh, sizeof qh);
  }
}

void q5_0_vec_dot_ref(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ5_0* a = static_cast<const BlockQ5_0*>(x);
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(y);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK; ++i) {
    const uint32_t qh = load_qh(a[i].qh);
    int isum = 0;
    for (int j = 0; j < kQK; ++j) isum += (q5_value(a[i].qs, qh, j) - 16) * b[i].qs[j];
    sum += (fp16_to_fp32(a[i].d) * fp16_to_fp32(b[i].d)) * static_cast<float>(isum);
  }
  *s = sum;
}

// ---- Q5_1 ----------------------------------------------------------------------------------

void q5_1_to_float(const void* src, float* dst, int64_t n) {
  const BlockQ5_1* b = static_cast<const BlockQ5_1*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const float d = fp16_to_fp32(b[i].d);
    const float m = fp16_to_fp32(b[i].m);
    const uint32_t qh = load_qh(b[i].qh);
    for (int j = 0; j < kQK; ++j) dst[j] = static_cast<float>(q5_value(b[i].qs, qh, j)) * d + m;
  }
}

void q5_1_from_float_ref(const float* src, void* dst, int64_t n) {
  BlockQ5_1* b = static_cast<BlockQ5_1*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    float lo, hi;
    min_max(src, lo, hi);
    const float d = (hi - lo) / 31.0f;
    const float inv = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = fp32_to_fp16(d);
    b[i].m = fp32_to_fp16(lo);
    uint32_t qh = 0;
    for (int j = 0; j < kHalf; ++j) {
      const float v0 = (src[j] - lo) * inv;
      const float v1 = (src[j + kHalf] - lo) * inv;
      // No clamp here in GGML either: v <= 31 (up to rounding), so +0.5 truncates to <= 31.
      const int q0 = static_cast<uint8_t>(v0 + 0.5f);
      const int q1 = static_cast<uint8_t>(v1 + 0.5f);
      b[i].qs[j] = static_cast<uint8_t>((q0 & 0x0f) | ((q1 & 0x0f) << 4));
      qh |= static_cast<uint32_t>((q0 >> 4) & 1) << j;
      qh |= static_cast<uint32_t>((q1 >> 4) & 1) << (j + kHalf);
    }
    std::memcpy(b[i].qh, &qh, sizeof qh);
  }
}

void q5_1_vec_dot_ref(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ5_1* a = static_cast<const BlockQ5_1*>(x);
  const BlockQ8_1* b = static_cast<const BlockQ8_1*>(y);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK; ++i) {
    const uint32_t qh = load_qh(a[i].qh);
    int isum = 0;
    for (int j = 0; j < kQK; ++j) isum += q5_value(a[i].qs, qh, j) * b[i].qs[j];
    sum += (fp16_to_fp32(a[i].d) * fp16_to_fp32(b[i].d)) * static_cast<float>(isum) +
           fp16_to_fp32(a[i].m) * fp16_to_fp32(b[i].s);
  }
  *s = sum;
}

}  // namespace edgeinfer
