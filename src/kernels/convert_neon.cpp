// NEON activation conversions, bit-identical to the reference quantizers (quant/q8.cpp,
// quant/fp16.cpp). Scales are computed with the same scalar IEEE operations as the reference
// (amax / 127, 1 / d, -127 / vmax); per-element rounding uses the instruction that rounds like
// the reference: FCVTAS (ties away, C's roundf) for Q8_0/Q8_1, FCVTNS (ties to even, GGML's
// nearest_int) for Q8_K. Maxima use FMAXNM, which like the reference's std::max ignores NaN.
#include "kernels/simd_neon.h"
#include "quant/type_traits.h"

namespace edgeinfer {

using namespace neon;

namespace {

// Largest |x| of 32 floats.
static inline float amax32(const float* x) {
  float32x4_t m = vabsq_f32(vld1q_f32(x));
  for (int j = 4; j < 32; j += 4) m = vmaxnmq_f32(m, vabsq_f32(vld1q_f32(x + j)));
  return vmaxnmvq_f32(m);
}

// 32 floats * mul rounded half away from zero -> int8 (|x * mul| <= 127.x by construction).
// Returns the sum of the quants.
static inline int32_t quantize32_away(const float* x, float mul, int8_t* q) {
  int32x4_t sum = vdupq_n_s32(0);
  for (int j = 0; j < 32; j += 16) {
    int32x4_t v[4];
    for (int k = 0; k < 4; ++k) {
      v[k] = vcvtaq_s32_f32(vmulq_n_f32(vld1q_f32(x + j + 4 * k), mul));
      sum = vaddq_s32(sum, v[k]);
    }
    const int16x8_t lo = vcombine_s16(vmovn_s32(v[0]), vmovn_s32(v[1]));
    const int16x8_t hi = vcombine_s16(vmovn_s32(v[2]), vmovn_s32(v[3]));
    vst1q_s8(q + j, vcombine_s8(vmovn_s16(lo), vmovn_s16(hi)));
  }
  return vaddvq_s32(sum);
}

}  // namespace

void f16_from_float_neon(const float* src, void* dst, int64_t n) {
  uint16_t* h = static_cast<uint16_t*>(dst);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const float16x8_t v = vcombine_f16(vcvt_f16_f32(vld1q_f32(src + i)), vcvt_f16_f32(vld1q_f32(src + i + 4)));
    vst1q_u16(h + i, vreinterpretq_u16_f16(v));
  }
  for (; i < n; ++i) h[i] = f32_to_f16(src[i]);
}

void bf16_from_float_neon(const float* src, void* dst, int64_t n) {
  // Integer rounding as in fp32_to_bf16: NaN truncated and made quiet, everything else rounded
  // to nearest even on the dropped 16 bits.
  uint16_t* h = static_cast<uint16_t*>(dst);
  const uint32x4_t abs_mask = vdupq_n_u32(0x7fffffffu), inf = vdupq_n_u32(0x7f800000u);
  const uint32x4_t bias = vdupq_n_u32(0x7fffu), one = vdupq_n_u32(1u), quiet = vdupq_n_u32(0x40u);
  auto convert4 = [&](const float* p) {
    const uint32x4_t x = vreinterpretq_u32_f32(vld1q_f32(p));
    const uint32x4_t is_nan = vcgtq_u32(vandq_u32(x, abs_mask), inf);
    const uint32x4_t rounded = vshrq_n_u32(vaddq_u32(vaddq_u32(x, bias), vandq_u32(vshrq_n_u32(x, 16), one)), 16);
    const uint32x4_t nan = vorrq_u32(vshrq_n_u32(x, 16), quiet);
    return vmovn_u32(vbslq_u32(is_nan, nan, rounded));
  };
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) vst1q_u16(h + i, vcombine_u16(convert4(src + i), convert4(src + i + 4)));
  for (; i < n; ++i) h[i] = fp32_to_bf16(src[i]);
}

void q8_0_from_float_neon(const float* src, void* dst, int64_t n) {
  BlockQ8_0* b = static_cast<BlockQ8_0*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    const float d = amax32(src) / 127.0f;
    const float inv = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = f32_to_f16(d);
    quantize32_away(src, inv, b[i].qs);
  }
}

void q8_1_from_float_neon(const float* src, void* dst, int64_t n) {
  BlockQ8_1* b = static_cast<BlockQ8_1*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    const float d = amax32(src) / 127.0f;
    const float inv = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = f32_to_f16(d);
    const int32_t qsum = quantize32_away(src, inv, b[i].qs);
    b[i].s = f32_to_f16(static_cast<float>(qsum) * d);
  }
}

void q8_k_from_float_neon(const float* src, void* dst, int64_t n) {
  BlockQ8_K* b = static_cast<BlockQ8_K*>(dst);
  for (int64_t i = 0; i < n / kQK_K; ++i, src += kQK_K) {
    float32x4_t m = vdupq_n_f32(0.0f);
    for (int j = 0; j < kQK_K; j += 4) m = vmaxnmq_f32(m, vabsq_f32(vld1q_f32(src + j)));
    const float amax = vmaxvq_f32(m);
    if (amax == 0.0f) {
      std::memset(&b[i], 0, sizeof(BlockQ8_K));
      continue;
    }
    // The first element of largest magnitude maps to -127 (the scale's sign follows it).
    const float32x4_t target = vdupq_n_f32(amax);
    int first = 0;
    while (vmaxvq_u32(vceqq_f32(vabsq_f32(vld1q_f32(src + first)), target)) == 0) first += 4;
    while (src[first] != amax && src[first] != -amax) ++first;
    const float iscale = -127.0f / src[first];
    const int32x4_t top = vdupq_n_s32(127);
    for (int g = 0; g < kQK_K / 16; ++g) {
      int32x4_t v[4];
      for (int k = 0; k < 4; ++k) {
        v[k] = vminq_s32(vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(src + 16 * g + 4 * k), iscale)), top);
      }
      b[i].bsums[g] = static_cast<int16_t>(vaddvq_s32(vaddq_s32(vaddq_s32(v[0], v[1]), vaddq_s32(v[2], v[3]))));
      const int16x8_t lo = vcombine_s16(vmovn_s32(v[0]), vmovn_s32(v[1]));
      const int16x8_t hi = vcombine_s16(vmovn_s32(v[2]), vmovn_s32(v[3]));
      vst1q_s8(b[i].qs + 16 * g, vcombine_s8(vmovn_s16(lo), vmovn_s16(hi)));
    }
    b[i].d = 1.0f / iscale;
  }
}

}  // namespace edgeinfer
