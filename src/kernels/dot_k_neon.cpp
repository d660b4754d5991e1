// NEON dot products of the K-quants against Q8_K. Per super-block the whole weighted integer
// sum (sum over sub-blocks of scale * dot(q, q8)) is exact in int32: SDOT per 16 elements, then
// a multiply-accumulate by the sub-block scale into four int32 lanes. The affine types' min
// terms come from Q8_K's bsums. Only the per-super-block combination is float:
//   sum += d * y.d * isum - dmin * y.d * min_sum.
// Quant layouts: quant/blocks.h and the comments at the top of quant/k_quants_*.cpp.
#include "kernels/simd_neon.h"

namespace edgeinfer {

using namespace neon;

namespace {

// Q4_K/Q5_K: 8 six-bit scales and 8 six-bit mins from their 12 packed bytes (bytes 0-3: scales
// 0-3 and, in the top 2 bits, bits 4-5 of scales 4-7; bytes 4-7 the same for the mins; bytes
// 8-11: low 4 bits of scale (low nibble) and min (high nibble) 4-7).
struct K4Scales {
  uint8_t scale[8];
  uint8_t min[8];
};

static inline K4Scales unpack_k4_scales(const uint8_t* p) {
  const uint32_t w0 = load_u32(p), w1 = load_u32(p + 4), w2 = load_u32(p + 8);
  const uint32_t sc[2] = {w0 & 0x3f3f3f3fu, (w2 & 0x0f0f0f0fu) | ((w0 >> 2) & 0x30303030u)};
  const uint32_t mn[2] = {w1 & 0x3f3f3f3fu, ((w2 >> 4) & 0x0f0f0f0fu) | ((w1 >> 2) & 0x30303030u)};
  K4Scales s;
  std::memcpy(s.scale, sc, 8);
  std::memcpy(s.min, mn, 8);
  return s;
}

// sum over the 8 sub-blocks of 32 of bsum(sub-block) * min: bsums of 16 paired up.
static inline int32_t k4_min_sum(const int16_t* bsums, const uint8_t* mins) {
  const int16x8_t pair_sums = vpaddq_s16(vld1q_s16(bsums), vld1q_s16(bsums + 8));
  const int16x8_t m = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(mins)));
  const int32x4_t p = vmlal_high_s16(vmull_s16(vget_low_s16(pair_sums), vget_low_s16(m)), pair_sums, m);
  return vaddvq_s32(p);
}

// Q3_K: 16 signed six-bit scales from 12 bytes (low nibbles in bytes 0-7: scales 0-7 low nibble,
// 8-15 high nibble; top 2 bits of scale j in byte 8 + j % 4 at bit pair j / 4), stored +32.
static inline void unpack_q3_scales(const uint8_t* p, int8_t out[16]) {
  const uint32_t w0 = load_u32(p), w1 = load_u32(p + 4), w2 = load_u32(p + 8);
  const uint32_t lo4 = 0x0f0f0f0fu, hi2 = 0x03030303u;
  const uint32_t v[4] = {(w0 & lo4) | ((w2 & hi2) << 4), (w1 & lo4) | (((w2 >> 2) & hi2) << 4),
                         ((w0 >> 4) & lo4) | (((w2 >> 4) & hi2) << 4), ((w1 >> 4) & lo4) | (((w2 >> 6) & hi2) << 4)};
  const int8x16_t biased = vreinterpretq_s8_u32(vld1q_u32(v));
  vst1q_s8(out, vsubq_s8(biased, vdupq_n_s8(32)));
}

// acc + scale * dot(w, q8[0..16)) in four int32 lanes.
static inline int32x4_t scaled_dot16(int32x4_t acc, int8x16_t w, const int8_t* q8, int32_t scale) {
  return vmlaq_n_s32(acc, dot16(vdupq_n_s32(0), w, load_s8(q8)), scale);
}

// acc + scale * dot(w0 ++ w1, q8[0..32)): one sub-block of 32 with a single scale.
static inline int32x4_t scaled_dot32(int32x4_t acc, int8x16_t w0, int8x16_t w1, const int8_t* q8, int32_t scale) {
  return vmlaq_n_s32(acc, dot16(dot16(vdupq_n_s32(0), w0, load_s8(q8)), w1, load_s8(q8 + 16)), scale);
}

static inline int8x16_t as_s8(uint8x16_t v) { return vreinterpretq_s8_u8(v); }

}  // namespace

void q2_k_vec_dot_neon(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ2_K* a = static_cast<const BlockQ2_K*>(x);
  const BlockQ8_K* b = static_cast<const BlockQ8_K*>(y);
  const uint8x16_t three = vdupq_n_u8(3);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    // Scale in the low nibble, min in the high nibble of each of the 16 sub-blocks' bytes.
    const uint8x16_t packed = vld1q_u8(a[i].scales);
    uint8_t sc[16];
    vst1q_u8(sc, vandq_u8(packed, vdupq_n_u8(0x0f)));
    const uint8x16_t mins = vshrq_n_u8(packed, 4);
    const int16x8_t m_lo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(mins)));
    const int16x8_t m_hi = vreinterpretq_s16_u16(vmovl_high_u8(mins));
    const int16x8_t bs_lo = vld1q_s16(b[i].bsums), bs_hi = vld1q_s16(b[i].bsums + 8);
    int32x4_t mp = vmull_s16(vget_low_s16(bs_lo), vget_low_s16(m_lo));
    mp = vmlal_high_s16(mp, bs_lo, m_lo);
    mp = vmlal_s16(mp, vget_low_s16(bs_hi), vget_low_s16(m_hi));
    mp = vmlal_high_s16(mp, bs_hi, m_hi);
    const int32_t min_sum = vaddvq_s32(mp);

    int32x4_t acc = vdupq_n_s32(0);
    for (int h = 0; h < 2; ++h) {
      const uint8x16_t q0 = vld1q_u8(a[i].qs + 32 * h), q1 = vld1q_u8(a[i].qs + 32 * h + 16);
      const int8_t* q8 = b[i].qs + 128 * h;
      const uint8_t* scale = sc + 8 * h;
      // Bit pair j of each byte holds elements 32 j .. 32 j + 31 of this half.
      acc = scaled_dot16(acc, as_s8(vandq_u8(q0, three)), q8, scale[0]);
      acc = scaled_dot16(acc, as_s8(vandq_u8(q1, three)), q8 + 16, scale[1]);
      acc = scaled_dot16(acc, as_s8(vandq_u8(vshrq_n_u8(q0, 2), three)), q8 + 32, scale[2]);
      acc = scaled_dot16(acc, as_s8(vandq_u8(vshrq_n_u8(q1, 2), three)), q8 + 48, scale[3]);
      acc = scaled_dot16(acc, as_s8(vandq_u8(vshrq_n_u8(q0, 4), three)), q8 + 64, scale[4]);
      acc = scaled_dot16(acc, as_s8(vandq_u8(vshrq_n_u8(q1, 4), three)), q8 + 80, scale[5]);
      acc = scaled_dot16(acc, as_s8(vshrq_n_u8(q0, 6)), q8 + 96, scale[6]);
      acc = scaled_dot16(acc, as_s8(vshrq_n_u8(q1, 6)), q8 + 112, scale[7]);
    }
    const float dall = b[i].d * f16_to_f32(a[i].d);
    const float dmin = b[i].d * f16_to_f32(a[i].dmin);
    sum += dall * static_cast<float>(vaddvq_s32(acc)) - dmin * static_cast<float>(min_sum);
  }
  *s = sum;
}

void q3_k_vec_dot_neon(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ3_K* a = static_cast<const BlockQ3_K*>(x);
  const BlockQ8_K* b = static_cast<const BlockQ8_K*>(y);
  const uint8x16_t three = vdupq_n_u8(3), four = vdupq_n_u8(4);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int8_t sc[16];
    unpack_q3_scales(a[i].scales, sc);
    const uint8x16_t hm0 = vld1q_u8(a[i].hmask), hm1 = vld1q_u8(a[i].hmask + 16);
    int32x4_t acc = vdupq_n_s32(0);
    for (int h = 0; h < 2; ++h) {
      const uint8x16_t q0 = vld1q_u8(a[i].qs + 32 * h), q1 = vld1q_u8(a[i].qs + 32 * h + 16);
      const int8_t* q8 = b[i].qs + 128 * h;
      for (int j = 0; j < 4; ++j) {
        // Elements 128 h + 32 j + k: bit pair j of qs byte k, high bit 4 h + j of hmask[k];
        // value = pair - 4 when the high bit is clear.
        const int shift = 2 * j;
        const uint8x16_t bit = vdupq_n_u8(static_cast<uint8_t>(1u << (4 * h + j)));
        const uint8x16_t p0 = vandq_u8(vshlq_u8(q0, vdupq_n_s8(static_cast<int8_t>(-shift))), three);
        const uint8x16_t p1 = vandq_u8(vshlq_u8(q1, vdupq_n_s8(static_cast<int8_t>(-shift))), three);
        const int8x16_t v0 = vsubq_s8(as_s8(p0), as_s8(vbicq_u8(four, vtstq_u8(hm0, bit))));
        const int8x16_t v1 = vsubq_s8(as_s8(p1), as_s8(vbicq_u8(four, vtstq_u8(hm1, bit))));
        acc = scaled_dot16(acc, v0, q8 + 32 * j, sc[8 * h + 2 * j]);
        acc = scaled_dot16(acc, v1, q8 + 32 * j + 16, sc[8 * h + 2 * j + 1]);
      }
    }
    const float d = f16_to_f32(a[i].d) * b[i].d;
    sum += d * static_cast<float>(vaddvq_s32(acc));
  }
  *s = sum;
}

void q4_k_vec_dot_neon(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ4_K* a = static_cast<const BlockQ4_K*>(x);
  const BlockQ8_K* b = static_cast<const BlockQ8_K*>(y);
  const uint8x16_t low4 = vdupq_n_u8(0x0f);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const K4Scales k = unpack_k4_scales(a[i].scales);
    const int32_t min_sum = k4_min_sum(b[i].bsums, k.min);
    int32x4_t acc = vdupq_n_s32(0);
    for (int c = 0; c < 4; ++c) {
      // Elements 64 c .. 64 c + 31 are the low nibbles of qs[32 c ..], the next 32 the high ones.
      const uint8x16_t v0 = vld1q_u8(a[i].qs + 32 * c), v1 = vld1q_u8(a[i].qs + 32 * c + 16);
      const int8_t* q8 = b[i].qs + 64 * c;
      acc = scaled_dot32(acc, as_s8(vandq_u8(v0, low4)), as_s8(vandq_u8(v1, low4)), q8, k.scale[2 * c]);
      acc = scaled_dot32(acc, as_s8(vshrq_n_u8(v0, 4)), as_s8(vshrq_n_u8(v1, 4)), q8 + 32, k.scale[2 * c + 1]);
    }
    const float d = f16_to_f32(a[i].d) * b[i].d;
    const float dmin = f16_to_f32(a[i].dmin) * b[i].d;
    sum += d * static_cast<float>(vaddvq_s32(acc)) - dmin * static_cast<float>(min_sum);
  }
  *s = sum;
}

void q5_k_vec_dot_neon(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ5_K* a = static_cast<const BlockQ5_K*>(x);
  const BlockQ8_K* b = static_cast<const BlockQ8_K*>(y);
  const uint8x16_t low4 = vdupq_n_u8(0x0f), one = vdupq_n_u8(1);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const K4Scales k = unpack_k4_scales(a[i].scales);
    const int32_t min_sum = k4_min_sum(b[i].bsums, k.min);
    // Bit e / 32 of qh[e % 32] is element e's fifth bit: consumed one bit per 32 elements.
    uint8x16_t h0 = vld1q_u8(a[i].qh), h1 = vld1q_u8(a[i].qh + 16);
    int32x4_t acc = vdupq_n_s32(0);
    for (int c = 0; c < 4; ++c) {
      const uint8x16_t v0 = vld1q_u8(a[i].qs + 32 * c), v1 = vld1q_u8(a[i].qs + 32 * c + 16);
      const int8_t* q8 = b[i].qs + 64 * c;
      const uint8x16_t lo0 = vorrq_u8(vandq_u8(v0, low4), vshlq_n_u8(vandq_u8(h0, one), 4));
      const uint8x16_t lo1 = vorrq_u8(vandq_u8(v1, low4), vshlq_n_u8(vandq_u8(h1, one), 4));
      h0 = vshrq_n_u8(h0, 1);
      h1 = vshrq_n_u8(h1, 1);
      const uint8x16_t hi0 = vorrq_u8(vshrq_n_u8(v0, 4), vshlq_n_u8(vandq_u8(h0, one), 4));
      const uint8x16_t hi1 = vorrq_u8(vshrq_n_u8(v1, 4), vshlq_n_u8(vandq_u8(h1, one), 4));
      h0 = vshrq_n_u8(h0, 1);
      h1 = vshrq_n_u8(h1, 1);
      acc = scaled_dot32(acc, as_s8(lo0), as_s8(lo1), q8, k.scale[2 * c]);
      acc = scaled_dot32(acc, as_s8(hi0), as_s8(hi1), q8 + 32, k.scale[2 * c + 1]);
    }
    const float d = f16_to_f32(a[i].d) * b[i].d;
    const float dmin = f16_to_f32(a[i].dmin) * b[i].d;
    sum += d * static_cast<float>(vaddvq_s32(acc)) - dmin * static_cast<float>(min_sum);
  }
  *s = sum;
}

void q6_k_vec_dot_neon(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ6_K* a = static_cast<const BlockQ6_K*>(x);
  const BlockQ8_K* b = static_cast<const BlockQ8_K*>(y);
  const uint8x16_t low4 = vdupq_n_u8(0x0f), bits45 = vdupq_n_u8(0x30);
  const int8x16_t offset = vdupq_n_s8(32);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int32x4_t acc = vdupq_n_s32(0);
    for (int h = 0; h < 2; ++h) {
      // Element 128 h + r: low 4 bits in ql[64 h + r % 64] (low nibble when r < 64), high 2 bits
      // in qh[32 h + r % 32] at bit pair r / 32; value - 32 is the signed quant.
      const uint8_t* ql = a[i].ql + 64 * h;
      const uint8_t* qhp = a[i].qh + 32 * h;
      const uint8x16_t l0 = vld1q_u8(ql), l1 = vld1q_u8(ql + 16), l2 = vld1q_u8(ql + 32), l3 = vld1q_u8(ql + 48);
      const uint8x16_t h0 = vld1q_u8(qhp), h1 = vld1q_u8(qhp + 16);
      const int8_t* q8 = b[i].qs + 128 * h;
      const int8_t* sc = a[i].scales + 8 * h;
      auto q = [&](uint8x16_t low, uint8x16_t high) { return vsubq_s8(as_s8(vorrq_u8(low, high)), offset); };
      acc = scaled_dot16(acc, q(vandq_u8(l0, low4), vshlq_n_u8(vandq_u8(h0, vdupq_n_u8(3)), 4)), q8, sc[0]);
      acc = scaled_dot16(acc, q(vandq_u8(l1, low4), vshlq_n_u8(vandq_u8(h1, vdupq_n_u8(3)), 4)), q8 + 16, sc[1]);
      acc = scaled_dot16(acc, q(vandq_u8(l2, low4), vandq_u8(vshlq_n_u8(h0, 2), bits45)), q8 + 32, sc[2]);
      acc = scaled_dot16(acc, q(vandq_u8(l3, low4), vandq_u8(vshlq_n_u8(h1, 2), bits45)), q8 + 48, sc[3]);
      acc = scaled_dot16(acc, q(vshrq_n_u8(l0, 4), vandq_u8(h0, bits45)), q8 + 64, sc[4]);
      acc = scaled_dot16(acc, q(vshrq_n_u8(l1, 4), vandq_u8(h1, bits45)), q8 + 80, sc[5]);
      acc = scaled_dot16(acc, q(vshrq_n_u8(l2, 4), vandq_u8(vshrq_n_u8(h0, 2), bits45)), q8 + 96, sc[6]);
      acc = scaled_dot16(acc, q(vshrq_n_u8(l3, 4), vandq_u8(vshrq_n_u8(h1, 2), bits45)), q8 + 112, sc[7]);
    }
    const float d = f16_to_f32(a[i].d) * b[i].d;
    sum += d * static_cast<float>(vaddvq_s32(acc));
  }
  *s = sum;
}

}  // namespace edgeinfer
