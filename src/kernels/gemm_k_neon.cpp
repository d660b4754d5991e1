// NEON prefill tiles (GemmTileFn) of the K-quants Q2_K..Q6_K against Q8_K activations.
//
// Per group of 4 weight rows and super-block, the rows are unpacked once into a KPack on the
// stack (1.4 KiB, L1): 256 signed int8 quants per row in element order, the sub-block scales
// as int32 vectors with row r in lane r, the mins, d and dmin. Every column of the panel then
// reuses it: a micro-kernel of 4 rows x NC <= 4 columns keeps 16 int32x4 sums for the
// super-block; per 16 activations (one load) it loads the 4 rows' 16 quants (4 loads, shared by
// the NC columns) and per (row, column) does
//   Q4_K, Q5_K, Q6_K: zeroing + SDOT + MLA by the sub-block scale (Q4_K/Q5_K: per 32, zeroing
//                     + 2 SDOT + MLA);
//   Q2_K, Q3_K:       one SDOT: the unpack stored quant * scale, which fits int8 (Q2_K: 0..3 *
//                     0..15; Q3_K: -4..3 times the negated scale -31..32 lies in -128..124, so
//                     the super-block sum is negated and so is the stored d).
// Compiled (GCC 12, 4 columns) that is 1.75 (Q2_K, Q3_K), 2.8 (Q4_K, Q5_K) or 3.8 (Q6_K)
// instructions per 16 multiply-adds of one output, loads included, against 8.4 (Q4_K) to 13
// (Q3_K) in the vec_dot loops, whose unpack is redone for every row and column. Here a row's
// unpack (less than one vec_dot of it) is shared by the panel's columns.
// Per super-block and column the 4 rows' sums are folded into one vector, row r in lane r
// (3 ADDP, exact), converted and FMA'd by d * d_x into the column's float accumulator; the
// mins (Q2_K, Q4_K, Q5_K) come from the activation's bsums (vmull/vmlal per row, 3 ADDP) and
// are subtracted with dmin * d_x. Q3_K/Q6_K's constant offsets are taken off in the unpack.
//
// Edge row groups repeat their last row (those lanes are not stored) and edge columns run a
// narrower micro-kernel: every output's arithmetic is the same whatever the tile's shape.
// Quant layouts: quant/blocks.h and the comments at the top of quant/k_quants_*.cpp.
#include "kernels/simd_neon.h"

namespace edgeinfer {

using namespace neon;

namespace {

constexpr int kRows = 4;
constexpr int kCols = 4;    // columns per micro-kernel call: 16 int32x4 sums
constexpr int kPanel = 64;  // columns sharing one unpack of a row group's super-block

// One row group's super-block.
struct KPack {
  alignas(16) int8_t q[kRows][kQK_K];    // row r: signed quants (Q2_K, Q3_K: times their scale)
  alignas(16) int32_t sc[16][kRows];     // lane r: integer scale of sub-block g (Q4_K..Q6_K)
  alignas(16) int16_t mins[kRows][16];   // row r: the mins (Q2_K: 16 per 16, Q4_K/Q5_K: 8 per 32)
  alignas(16) float d[kRows], dmin[kRows];
};

static inline int8x16_t as_s8(uint8x16_t v) { return vreinterpretq_s8_u8(v); }

// Q4_K/Q5_K: 8 six-bit scales and 8 six-bit mins from their 12 packed bytes (bytes 0-3: scales
// 0-3 and, in the top 2 bits, bits 4-5 of scales 4-7; bytes 4-7 the same for the mins; bytes
// 8-11: low 4 bits of scale (low nibble) and min (high nibble) 4-7). Scales to p.sc[s][r], mins
// to p.mins[r][0..8).
static inline void k4_scales(const uint8_t* packed, KPack& p, int r) {
  const uint32_t w0 = load_u32(packed), w1 = load_u32(packed + 4), w2 = load_u32(packed + 8);
  const uint32_t sc[2] = {w0 & 0x3f3f3f3fu, (w2 & 0x0f0f0f0fu) | ((w0 >> 2) & 0x30303030u)};
  const uint32_t mn[2] = {w1 & 0x3f3f3f3fu, ((w2 >> 4) & 0x0f0f0f0fu) | ((w1 >> 2) & 0x30303030u)};
  uint8_t s[8];
  std::memcpy(s, sc, 8);
  for (int j = 0; j < 8; ++j) p.sc[j][r] = s[j];
  vst1q_s16(p.mins[r], vreinterpretq_s16_u16(vmovl_u8(vreinterpret_u8_u32(vld1_u32(mn)))));
}

// Q4_K/Q5_K low bits: sub-block 2c is the low nibbles of qs[32c .. 32c + 32), 2c + 1 the high.
static inline void k4_nibbles(const uint8_t* qs, int8_t* q) {
  const uint8x16_t low4 = vdupq_n_u8(0x0f);
  for (int c = 0; c < 4; ++c) {
    const uint8x16_t v0 = vld1q_u8(qs + 32 * c), v1 = vld1q_u8(qs + 32 * c + 16);
    vst1q_u8(reinterpret_cast<uint8_t*>(q) + 64 * c, vandq_u8(v0, low4));
    vst1q_u8(reinterpret_cast<uint8_t*>(q) + 64 * c + 16, vandq_u8(v1, low4));
    vst1q_u8(reinterpret_cast<uint8_t*>(q) + 64 * c + 32, vshrq_n_u8(v0, 4));
    vst1q_u8(reinterpret_cast<uint8_t*>(q) + 64 * c + 48, vshrq_n_u8(v1, 4));
  }
}

struct FmtQ2_K {
  using Block = BlockQ2_K;
  static constexpr int kGroup = 16;     // elements per scale in the micro-kernel
  static constexpr bool kScaled = false;  // quants stored times their scale
  static constexpr int kMins = 16;
  static void unpack(const BlockQ2_K& b, KPack& p, int r) {
    // Scale in the low nibble, min in the high nibble of each of the 16 sub-blocks' bytes.
    const uint8x16_t packed = vld1q_u8(b.scales);
    const uint8x16_t sc = vandq_u8(packed, vdupq_n_u8(0x0f)), mins = vshrq_n_u8(packed, 4);
    vst1q_s16(p.mins[r], vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(mins))));
    vst1q_s16(p.mins[r] + 8, vreinterpretq_s16_u16(vmovl_high_u8(mins)));
    uint8_t s[16];
    vst1q_u8(s, sc);
    const uint8x16_t three = vdupq_n_u8(3);
    uint8_t* q = reinterpret_cast<uint8_t*>(p.q[r]);
    for (int h = 0; h < 2; ++h) {
      // Bit pair j of each byte of qs[32h ..] holds elements 128h + 32j .. 128h + 32j + 31.
      const uint8x16_t q0 = vld1q_u8(b.qs + 32 * h), q1 = vld1q_u8(b.qs + 32 * h + 16);
      const uint8_t* sh = s + 8 * h;
      uint8_t* out = q + 128 * h;
      vst1q_u8(out, vmulq_u8(vandq_u8(q0, three), vdupq_n_u8(sh[0])));
      vst1q_u8(out + 16, vmulq_u8(vandq_u8(q1, three), vdupq_n_u8(sh[1])));
      vst1q_u8(out + 32, vmulq_u8(vandq_u8(vshrq_n_u8(q0, 2), three), vdupq_n_u8(sh[2])));
      vst1q_u8(out + 48, vmulq_u8(vandq_u8(vshrq_n_u8(q1, 2), three), vdupq_n_u8(sh[3])));
      vst1q_u8(out + 64, vmulq_u8(vandq_u8(vshrq_n_u8(q0, 4), three), vdupq_n_u8(sh[4])));
      vst1q_u8(out + 80, vmulq_u8(vandq_u8(vshrq_n_u8(q1, 4), three), vdupq_n_u8(sh[5])));
      vst1q_u8(out + 96, vmulq_u8(vshrq_n_u8(q0, 6), vdupq_n_u8(sh[6])));
      vst1q_u8(out + 112, vmulq_u8(vshrq_n_u8(q1, 6), vdupq_n_u8(sh[7])));
    }
    p.d[r] = f16_to_f32(b.d);
    p.dmin[r] = f16_to_f32(b.dmin);
  }
};

struct FmtQ3_K {
  using Block = BlockQ3_K;
  static constexpr int kGroup = 16;
  static constexpr bool kScaled = false;
  static constexpr int kMins = 0;
  static void unpack(const BlockQ3_K& b, KPack& p, int r) {
    // 16 signed six-bit scales from 12 bytes (low nibbles in bytes 0-7: scales 0-7 low nibble,
    // 8-15 high nibble; top 2 bits of scale j in byte 8 + j % 4 at bit pair j / 4), stored +32.
    const uint32_t w0 = load_u32(b.scales), w1 = load_u32(b.scales + 4), w2 = load_u32(b.scales + 8);
    const uint32_t lo4 = 0x0f0f0f0fu, hi2 = 0x03030303u;
    const uint32_t v[4] = {(w0 & lo4) | ((w2 & hi2) << 4), (w1 & lo4) | (((w2 >> 2) & hi2) << 4),
                           ((w0 >> 4) & lo4) | (((w2 >> 4) & hi2) << 4), ((w1 >> 4) & lo4) | (((w2 >> 6) & hi2) << 4)};
    // The negated scale: 32 - stored.
    int8_t neg_sc[16];
    vst1q_s8(neg_sc, vsubq_s8(vdupq_n_s8(32), vreinterpretq_s8_u32(vld1q_u32(v))));
    const uint8x16_t three = vdupq_n_u8(3), four = vdupq_n_u8(4);
    const uint8x16_t hm0 = vld1q_u8(b.hmask), hm1 = vld1q_u8(b.hmask + 16);
    for (int h = 0; h < 2; ++h) {
      const uint8x16_t q0 = vld1q_u8(b.qs + 32 * h), q1 = vld1q_u8(b.qs + 32 * h + 16);
      for (int j = 0; j < 4; ++j) {
        // Elements 128 h + 32 j + k: bit pair j of qs byte k, high bit 4 h + j of hmask[k];
        // value = pair - 4 when the high bit is clear.
        const int8x16_t shift = vdupq_n_s8(static_cast<int8_t>(-2 * j));
        const uint8x16_t bit = vdupq_n_u8(static_cast<uint8_t>(1u << (4 * h + j)));
        const int8x16_t v0 = vsubq_s8(as_s8(vandq_u8(vshlq_u8(q0, shift), three)), as_s8(vbicq_u8(four, vtstq_u8(hm0, bit))));
        const int8x16_t v1 = vsubq_s8(as_s8(vandq_u8(vshlq_u8(q1, shift), three)), as_s8(vbicq_u8(four, vtstq_u8(hm1, bit))));
        const int g = 8 * h + 2 * j;
        vst1q_s8(p.q[r] + 16 * g, vmulq_s8(v0, vdupq_n_s8(neg_sc[g])));
        vst1q_s8(p.q[r] + 16 * g + 16, vmulq_s8(v1, vdupq_n_s8(neg_sc[g + 1])));
      }
    }
    p.d[r] = -f16_to_f32(b.d);  // the sums are of quant * -scale
  }
};

struct FmtQ4_K {
  using Block = BlockQ4_K;
  static constexpr int kGroup = 32;
  static constexpr bool kScaled = true;
  static constexpr int kMins = 8;
  static void unpack(const BlockQ4_K& b, KPack& p, int r) {
    k4_scales(b.scales, p, r);
    k4_nibbles(b.qs, p.q[r]);
    p.d[r] = f16_to_f32(b.d);
    p.dmin[r] = f16_to_f32(b.dmin);
  }
};

struct FmtQ5_K {
  using Block = BlockQ5_K;
  static constexpr int kGroup = 32;
  static constexpr bool kScaled = true;
  static constexpr int kMins = 8;
  static void unpack(const BlockQ5_K& b, KPack& p, int r) {
    k4_scales(b.scales, p, r);
    k4_nibbles(b.qs, p.q[r]);
    // Bit s of qh[k] is the fifth bit of element 32 s + k.
    const uint8x16_t h0 = vld1q_u8(b.qh), h1 = vld1q_u8(b.qh + 16), b16 = vdupq_n_u8(0x10);
    uint8_t* q = reinterpret_cast<uint8_t*>(p.q[r]);
    for (int s = 0; s < 8; ++s) {
      const uint8x16_t bit = vdupq_n_u8(static_cast<uint8_t>(1u << s));
      vst1q_u8(q + 32 * s, vorrq_u8(vld1q_u8(q + 32 * s), vandq_u8(vtstq_u8(h0, bit), b16)));
      vst1q_u8(q + 32 * s + 16, vorrq_u8(vld1q_u8(q + 32 * s + 16), vandq_u8(vtstq_u8(h1, bit), b16)));
    }
    p.d[r] = f16_to_f32(b.d);
    p.dmin[r] = f16_to_f32(b.dmin);
  }
};

struct FmtQ6_K {
  using Block = BlockQ6_K;
  static constexpr int kGroup = 16;
  static constexpr bool kScaled = true;
  static constexpr int kMins = 0;
  static void unpack(const BlockQ6_K& b, KPack& p, int r) {
    const uint8x16_t low4 = vdupq_n_u8(0x0f), bits45 = vdupq_n_u8(0x30), three = vdupq_n_u8(3);
    const int8x16_t offset = vdupq_n_s8(32);
    for (int h = 0; h < 2; ++h) {
      // Element 128 h + e: low 4 bits in ql[64 h + e % 64] (low nibble when e < 64), high 2
      // bits in qh[32 h + e % 32] at bit pair e / 32; value - 32 is the signed quant.
      const uint8_t* ql = b.ql + 64 * h;
      const uint8_t* qh = b.qh + 32 * h;
      const uint8x16_t l0 = vld1q_u8(ql), l1 = vld1q_u8(ql + 16), l2 = vld1q_u8(ql + 32), l3 = vld1q_u8(ql + 48);
      const uint8x16_t h0 = vld1q_u8(qh), h1 = vld1q_u8(qh + 16);
      int8_t* out = p.q[r] + 128 * h;
      auto put = [&](int at, uint8x16_t low, uint8x16_t high) {
        vst1q_s8(out + at, vsubq_s8(as_s8(vorrq_u8(low, high)), offset));
      };
      put(0, vandq_u8(l0, low4), vshlq_n_u8(vandq_u8(h0, three), 4));
      put(16, vandq_u8(l1, low4), vshlq_n_u8(vandq_u8(h1, three), 4));
      put(32, vandq_u8(l2, low4), vandq_u8(vshlq_n_u8(h0, 2), bits45));
      put(48, vandq_u8(l3, low4), vandq_u8(vshlq_n_u8(h1, 2), bits45));
      put(64, vshrq_n_u8(l0, 4), vandq_u8(h0, bits45));
      put(80, vshrq_n_u8(l1, 4), vandq_u8(h1, bits45));
      put(96, vshrq_n_u8(l2, 4), vandq_u8(vshrq_n_u8(h0, 2), bits45));
      put(112, vshrq_n_u8(l3, 4), vandq_u8(vshrq_n_u8(h1, 2), bits45));
    }
    for (int g = 0; g < 16; ++g) p.sc[g][r] = b.scales[g];
    p.d[r] = f16_to_f32(b.d);
  }
};

// Lane r = the sum of the 4 lanes of t[r].
static inline int32x4_t rows_in_lanes(const int32x4_t t[kRows]) {
  return vpaddq_s32(vpaddq_s32(t[0], t[1]), vpaddq_s32(t[2], t[3]));
}

// s[r] += scale of row r (lane r of sc) * t[r], for the 4 rows.
static inline void mla_rows(int32x4_t s[kRows], const int32x4_t t[kRows], int32x4_t sc) {
  s[0] = vmlaq_laneq_s32(s[0], t[0], sc, 0);
  s[1] = vmlaq_laneq_s32(s[1], t[1], sc, 1);
  s[2] = vmlaq_laneq_s32(s[2], t[2], sc, 2);
  s[3] = vmlaq_laneq_s32(s[3], t[3], sc, 3);
}

// Lane r = sum over the sub-blocks of min * bsum for row r (bsums of 16 paired up when the
// mins are per 32).
template <int kMins>
static inline int32x4_t min_sums(const KPack& p, const int16_t* bsums) {
  const int16x8_t b0 = vld1q_s16(bsums), b1 = vld1q_s16(bsums + 8);
  int32x4_t m[kRows];
  if constexpr (kMins == 16) {
    for (int r = 0; r < kRows; ++r) {
      const int16x8_t m0 = vld1q_s16(p.mins[r]), m1 = vld1q_s16(p.mins[r] + 8);
      int32x4_t t = vmull_s16(vget_low_s16(m0), vget_low_s16(b0));
      t = vmlal_high_s16(t, m0, b0);
      t = vmlal_s16(t, vget_low_s16(m1), vget_low_s16(b1));
      m[r] = vmlal_high_s16(t, m1, b1);
    }
  } else {
    const int16x8_t pairs = vpaddq_s16(b0, b1);
    for (int r = 0; r < kRows; ++r) {
      const int16x8_t mn = vld1q_s16(p.mins[r]);
      m[r] = vmlal_high_s16(vmull_s16(vget_low_s16(mn), vget_low_s16(pairs)), mn, pairs);
    }
  }
  return rows_in_lanes(m);
}

// acc[c] (rows in lanes) += this super-block's dots of the pack's 4 rows with NC columns.
template <class Fmt, int NC>
void micro_kernel(const KPack& p, const BlockQ8_K* const* xc, float32x4_t* acc) {
  int32x4_t isum[NC][kRows];
  for (int c = 0; c < NC; ++c) {
    for (int r = 0; r < kRows; ++r) isum[c][r] = vdupq_n_s32(0);
  }
  if constexpr (Fmt::kGroup == 16) {
    for (int g = 0; g < 16; ++g) {
      int8x16_t w[kRows];
      for (int r = 0; r < kRows; ++r) w[r] = vld1q_s8(p.q[r] + 16 * g);
      if constexpr (Fmt::kScaled) {
        const int32x4_t sc = vld1q_s32(p.sc[g]);
        for (int c = 0; c < NC; ++c) {
          const int8x16_t a = vld1q_s8(xc[c]->qs + 16 * g);
          int32x4_t t[kRows];
          for (int r = 0; r < kRows; ++r) t[r] = vdotq_s32(vdupq_n_s32(0), w[r], a);
          mla_rows(isum[c], t, sc);
        }
      } else {
        for (int c = 0; c < NC; ++c) {
          const int8x16_t a = vld1q_s8(xc[c]->qs + 16 * g);
          for (int r = 0; r < kRows; ++r) isum[c][r] = vdotq_s32(isum[c][r], w[r], a);
        }
      }
    }
  } else {
    static_assert(Fmt::kGroup == 32 && Fmt::kScaled);
    for (int g = 0; g < 8; ++g) {
      int8x16_t w0[kRows], w1[kRows];
      for (int r = 0; r < kRows; ++r) {
        w0[r] = vld1q_s8(p.q[r] + 32 * g);
        w1[r] = vld1q_s8(p.q[r] + 32 * g + 16);
      }
      const int32x4_t sc = vld1q_s32(p.sc[g]);
      for (int c = 0; c < NC; ++c) {
        const int8x16_t a0 = vld1q_s8(xc[c]->qs + 32 * g), a1 = vld1q_s8(xc[c]->qs + 32 * g + 16);
        int32x4_t t[kRows];
        for (int r = 0; r < kRows; ++r) t[r] = vdotq_s32(vdotq_s32(vdupq_n_s32(0), w0[r], a0), w1[r], a1);
        mla_rows(isum[c], t, sc);
      }
    }
  }
  const float32x4_t d = vld1q_f32(p.d);
  for (int c = 0; c < NC; ++c) {
    float32x4_t a = vfmaq_f32(acc[c], vcvtq_f32_s32(rows_in_lanes(isum[c])), vmulq_n_f32(d, xc[c]->d));
    if constexpr (Fmt::kMins > 0) {
      const int32x4_t m = min_sums<Fmt::kMins>(p, xc[c]->bsums);
      a = vfmsq_f32(a, vcvtq_f32_s32(m), vmulq_n_f32(vld1q_f32(p.dmin), xc[c]->d));
    }
    acc[c] = a;
  }
}

// The micro-kernel for exactly nc (1..NC) columns.
template <class Fmt, int NC>
void micro_dispatch(int nc, const KPack& p, const BlockQ8_K* const* xc, float32x4_t* acc) {
  if constexpr (NC > 0) {
    if (nc == NC) return micro_kernel<Fmt, NC>(p, xc, acc);
    return micro_dispatch<Fmt, NC - 1>(nc, p, xc, acc);
  }
}

template <class Fmt>
void gemm_tile(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
               size_t x_stride, float* y, size_t y_stride) {
  using Block = typename Fmt::Block;
  const int64_t nb = n / kQK_K;
  const uint8_t* wb = static_cast<const uint8_t*>(w);
  const uint8_t* xb = static_cast<const uint8_t*>(x);
  KPack pack;
  float32x4_t acc[kPanel];
  // Row group outer, super-blocks inner: the group's outputs for the panel stay in L1 while K
  // is walked; the panel's activations come from L2.
  for (int64_t p0 = 0; p0 < n_cols; p0 += kPanel) {
    const int np = static_cast<int>(n_cols - p0 < kPanel ? n_cols - p0 : kPanel);
    for (int64_t r0 = 0; r0 < n_rows; r0 += kRows) {
      const int nr = static_cast<int>(n_rows - r0 < kRows ? n_rows - r0 : kRows);
      const Block* rows[kRows];
      for (int r = 0; r < kRows; ++r) {
        rows[r] = reinterpret_cast<const Block*>(wb + static_cast<size_t>(r0 + (r < nr ? r : nr - 1)) * w_stride);
      }
      for (int c = 0; c < np; ++c) acc[c] = vdupq_n_f32(0.0f);
      for (int64_t sb = 0; sb < nb; ++sb) {
        for (int r = 0; r < kRows; ++r) Fmt::unpack(rows[r][sb], pack, r);
        for (int c0 = 0; c0 < np; c0 += kCols) {
          const int nc = np - c0 < kCols ? np - c0 : kCols;
          const BlockQ8_K* xc[kCols];
          for (int c = 0; c < nc; ++c) {
            xc[c] = reinterpret_cast<const BlockQ8_K*>(xb + static_cast<size_t>(p0 + c0 + c) * x_stride) + sb;
          }
          micro_dispatch<Fmt, kCols>(nc, pack, xc, acc + c0);
        }
      }
      for (int c = 0; c < np; ++c) {
        float* yc = y + static_cast<size_t>(p0 + c) * y_stride + static_cast<size_t>(r0);
        if (nr == kRows) {
          vst1q_f32(yc, acc[c]);
        } else {
          float t[kRows];
          vst1q_f32(t, acc[c]);
          for (int r = 0; r < nr; ++r) yc[r] = t[r];
        }
      }
    }
  }
}

}  // namespace

#define EDGEINFER_K_TILE(name, Fmt)                                                                         \
  void name(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,        \
            size_t x_stride, float* y, size_t y_stride) {                                                    \
    gemm_tile<Fmt>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);                                \
  }
EDGEINFER_K_TILE(q2_k_gemm_tile_neon, FmtQ2_K)
EDGEINFER_K_TILE(q3_k_gemm_tile_neon, FmtQ3_K)
EDGEINFER_K_TILE(q4_k_gemm_tile_neon, FmtQ4_K)
EDGEINFER_K_TILE(q5_k_gemm_tile_neon, FmtQ5_K)
EDGEINFER_K_TILE(q6_k_gemm_tile_neon, FmtQ6_K)
#undef EDGEINFER_K_TILE

}  // namespace edgeinfer
