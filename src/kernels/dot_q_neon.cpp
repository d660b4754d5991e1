// NEON dot products of the 32-wide quant types against their Q8 activations. Each block's
// integer dot is exact (SDOT: 4 int8 products per int32 lane); the four lanes are converted to
// float (exact: |lane| < 2^24) and accumulated lane-wise with the block's scale product, two
// blocks per step in separate accumulators. Affine types (Q4_1, Q5_1) add m * s per block, with
// s = d * sum(q8) as stored in Q8_1.
#include "kernels/simd_neon.h"

namespace edgeinfer {

using namespace neon;

namespace {

// Element j of a Q4 block: low nibble of qs[j] for j < 16, high nibble of qs[j - 16] after.
struct Nibbles {
  int8x16_t lo, hi;  // elements 0..15 and 16..31, unsigned 0..15
};

static inline Nibbles unpack_nibbles(const uint8_t* qs) {
  const uint8x16_t v = vld1q_u8(qs);
  return {vreinterpretq_s8_u8(vandq_u8(v, vdupq_n_u8(0x0f))), vreinterpretq_s8_u8(vshrq_n_u8(v, 4))};
}

// The fifth bit of each element of a Q5 block as 0x10 (elements 0..15, 16..31).
struct HighBits {
  uint8x16_t lo, hi;
};

static inline HighBits unpack_high_bits(const uint8_t* qh) {
  const uint32_t bits = load_u32(qh);
  const uint8x16_t b16 = vdupq_n_u8(0x10);
  return {vandq_u8(bits16_to_bytes(bits & 0xffffu), b16), vandq_u8(bits16_to_bytes(bits >> 16), b16)};
}

// dot of 32 int8 weights (lo, hi halves) with a Q8 block's quants, in 4 int32 lanes.
static inline int32x4_t block_dot(int8x16_t w_lo, int8x16_t w_hi, const int8_t* q8) {
  return dot16(dot16(vdupq_n_s32(0), w_lo, load_s8(q8)), w_hi, load_s8(q8 + 16));
}

// Shared loop of the types whose block gives (int dot lanes, scale, min term): sum over blocks
// of d_w * d_a * idot + min_term. Block(i, &lanes, &scale, &min_term) fills the three.
template <typename Block>
static inline float accumulate_blocks(int64_t nb, Block block) {
  float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = vdupq_n_f32(0.0f);
  float mins = 0.0f;
  int64_t i = 0;
  for (; i + 2 <= nb; i += 2) {
    int32x4_t l0, l1;
    float d0, d1, m0, m1;
    block(i, l0, d0, m0);
    block(i + 1, l1, d1, m1);
    acc0 = vfmaq_n_f32(acc0, vcvtq_f32_s32(l0), d0);
    acc1 = vfmaq_n_f32(acc1, vcvtq_f32_s32(l1), d1);
    mins += m0 + m1;
  }
  for (; i < nb; ++i) {
    int32x4_t l0;
    float d0, m0;
    block(i, l0, d0, m0);
    acc0 = vfmaq_n_f32(acc0, vcvtq_f32_s32(l0), d0);
    mins += m0;
  }
  return vaddvq_f32(vaddq_f32(acc0, acc1)) + mins;
}

}  // namespace

void q4_0_vec_dot_neon(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ4_0* a = static_cast<const BlockQ4_0*>(x);
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(y);
  const int8x16_t eight = vdupq_n_s8(8);
  *s = accumulate_blocks(n / kQK, [&](int64_t i, int32x4_t& lanes, float& d, float& m) {
    const Nibbles q = unpack_nibbles(a[i].qs);
    lanes = block_dot(vsubq_s8(q.lo, eight), vsubq_s8(q.hi, eight), b[i].qs);
    d = f16_to_f32(a[i].d) * f16_to_f32(b[i].d);
    m = 0.0f;
  });
}

void q4_1_vec_dot_neon(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ4_1* a = static_cast<const BlockQ4_1*>(x);
  const BlockQ8_1* b = static_cast<const BlockQ8_1*>(y);
  *s = accumulate_blocks(n / kQK, [&](int64_t i, int32x4_t& lanes, float& d, float& m) {
    const Nibbles q = unpack_nibbles(a[i].qs);
    lanes = block_dot(q.lo, q.hi, b[i].qs);
    d = f16_to_f32(a[i].d) * f16_to_f32(b[i].d);
    m = f16_to_f32(a[i].m) * f16_to_f32(b[i].s);
  });
}

void q5_0_vec_dot_neon(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ5_0* a = static_cast<const BlockQ5_0*>(x);
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(y);
  const int8x16_t sixteen = vdupq_n_s8(16);
  *s = accumulate_blocks(n / kQK, [&](int64_t i, int32x4_t& lanes, float& d, float& m) {
    const Nibbles q = unpack_nibbles(a[i].qs);
    const HighBits h = unpack_high_bits(a[i].qh);
    // (nibble | high) - 16
    const int8x16_t lo = vsubq_s8(vorrq_s8(q.lo, vreinterpretq_s8_u8(h.lo)), sixteen);
    const int8x16_t hi = vsubq_s8(vorrq_s8(q.hi, vreinterpretq_s8_u8(h.hi)), sixteen);
    lanes = block_dot(lo, hi, b[i].qs);
    d = f16_to_f32(a[i].d) * f16_to_f32(b[i].d);
    m = 0.0f;
  });
}

void q5_1_vec_dot_neon(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ5_1* a = static_cast<const BlockQ5_1*>(x);
  const BlockQ8_1* b = static_cast<const BlockQ8_1*>(y);
  *s = accumulate_blocks(n / kQK, [&](int64_t i, int32x4_t& lanes, float& d, float& m) {
    const Nibbles q = unpack_nibbles(a[i].qs);
    const HighBits h = unpack_high_bits(a[i].qh);
    lanes = block_dot(vorrq_s8(q.lo, vreinterpretq_s8_u8(h.lo)), vorrq_s8(q.hi, vreinterpretq_s8_u8(h.hi)), b[i].qs);
    d = f16_to_f32(a[i].d) * f16_to_f32(b[i].d);
    m = f16_to_f32(a[i].m) * f16_to_f32(b[i].s);
  });
}

void q8_0_vec_dot_neon(int64_t n, float* s, const void* x, const void* y) {
  const BlockQ8_0* a = static_cast<const BlockQ8_0*>(x);
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(y);
  *s = accumulate_blocks(n / kQK, [&](int64_t i, int32x4_t& lanes, float& d, float& m) {
    lanes = block_dot(load_s8(a[i].qs), load_s8(a[i].qs + 16), b[i].qs);
    d = f16_to_f32(a[i].d) * f16_to_f32(b[i].d);
    m = 0.0f;
  });
}

// Attention scores over a Q8_0 cache's K rows (the query quantized to Q8_0): every score has the
// bits of q8_0_vec_dot_neon for that row and query.
void q8_0_dot_rows_neon(int64_t n, int64_t n_rows, const void* rows, size_t stride, const void* x, float* out) {
  const uint8_t* base = static_cast<const uint8_t*>(rows);
  for (int64_t r = 0; r < n_rows; ++r) q8_0_vec_dot_neon(n, &out[r], base + static_cast<size_t>(r) * stride, x);
}

namespace {

constexpr int64_t kQ8GroupMaxBlocks = 8;  // head_dim up to 256
constexpr int kQ8GroupRows = 4;

// 4 K rows against n_x queries. Per 4 rows the rows' scales are converted once for all heads; per
// head the query's bytes and scales once for all rows. Per row accumulate_blocks with the same
// products and scales as q8_0_vec_dot_neon, so every score has its bits.
void q8_0_dot4_group(int64_t n, const uint8_t* base, size_t stride, int64_t n_x, const uint8_t* xb, size_t x_stride,
                     float* out, size_t out_stride) {
  const int64_t nb = n / kQK;
  const BlockQ8_0* a[kQ8GroupRows];
  float dk[kQ8GroupRows][kQ8GroupMaxBlocks];
  for (int r = 0; r < kQ8GroupRows; ++r) {
    a[r] = reinterpret_cast<const BlockQ8_0*>(base + static_cast<size_t>(r) * stride);
    for (int64_t i = 0; i < nb; ++i) dk[r][i] = f16_to_f32(a[r][i].d);
  }
  for (int64_t h = 0; h < n_x; ++h) {
    const BlockQ8_0* b = reinterpret_cast<const BlockQ8_0*>(xb + static_cast<size_t>(h) * x_stride);
    int8x16_t q[kQ8GroupMaxBlocks][2];
    float dq[kQ8GroupMaxBlocks];
    for (int64_t i = 0; i < nb; ++i) {
      q[i][0] = load_s8(b[i].qs);
      q[i][1] = load_s8(b[i].qs + 16);
      dq[i] = f16_to_f32(b[i].d);
    }
    float* o = out + static_cast<size_t>(h) * out_stride;
    for (int r = 0; r < kQ8GroupRows; ++r) {
      o[r] = accumulate_blocks(nb, [&](int64_t i, int32x4_t& lanes, float& d, float& m) {
        lanes = dot16(dot16(vdupq_n_s32(0), load_s8(a[r][i].qs), q[i][0]), load_s8(a[r][i].qs + 16), q[i][1]);
        d = dk[r][i] * dq[i];
        m = 0.0f;
      });
    }
  }
}

}  // namespace

void q8_0_dot_rows_group_neon(int64_t n, int64_t n_rows, const void* rows, size_t stride, int64_t n_x, const void* x,
                              size_t x_stride, float* out, size_t out_stride) {
  const uint8_t* base = static_cast<const uint8_t*>(rows);
  const uint8_t* xb = static_cast<const uint8_t*>(x);
  int64_t r0 = 0;
  if (n <= kQ8GroupMaxBlocks * kQK) {
    for (; r0 + kQ8GroupRows <= n_rows; r0 += kQ8GroupRows) {
      q8_0_dot4_group(n, base + static_cast<size_t>(r0) * stride, stride, n_x, xb, x_stride, out + r0, out_stride);
    }
  }
  for (int64_t h = 0; h < n_x; ++h) {
    q8_0_dot_rows_neon(n, n_rows - r0, base + static_cast<size_t>(r0) * stride, stride,
                       xb + static_cast<size_t>(h) * x_stride, out + static_cast<size_t>(h) * out_stride + r0);
  }
}

}  // namespace edgeinfer
