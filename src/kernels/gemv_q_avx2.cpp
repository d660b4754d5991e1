// AVX2 decode GEMV of Q4_0 with the arithmetic of its prefill tile (gemm_q_avx2.cpp), so that a
// token's numbers are the same whether it is decoded alone (this kernel) or batched with others
// (the tile). Per output element the tile computes, over the row's blocks b in order,
//     acc = fma(float(s_b), dw_b * da_b, acc),   acc starting at +0,
// with s_b the exact integer dot of block b (the unsigned nibbles' dot plus the offset term
// -8 * sum(a_b)). The tile gets s_b for 8 rows at once from transposed weights, a transpose per
// weight block that a single column cannot amortize; this kernel gets the sums one row at a time
// over 8 blocks (sequential reads, two blocks per register against activations arranged to
// match once per call), reduces them to one vector per row (lane = block), transposes 8 rows x
// 8 blocks so that lane = row, and then runs the tile's FMA chain, one vector for 8 rows. Rows
// past the last whole 8 repeat the last row (their lanes are not stored), blocks past the last
// whole 8 are zeros that the chain skips.
//
// Q8_0 has no such kernel here: one block per register needs twice the horizontal adds, and it
// measured slower than q8_0_vec_dot_avx2 (bench_kernels gemv_exact_l2 527 us against 367 us).
#include "kernels/simd_avx2.h"

namespace edgeinfer {

namespace {

using namespace avx2;

constexpr int kRows = 8;         // rows per group: one per int32 lane after the transpose
constexpr int kBlocks = 8;       // blocks per step: one per int32 lane before it
constexpr int64_t kSpan = 256;   // blocks whose activation terms are prepared at once (even)

// In-register 8x8 transpose of 32-bit lanes: r[i] lane j -> r[j] lane i.
inline void transpose8(__m256i r[8]) {
  __m256i t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  // u[4g + j], 128-bit lane L: rows 4g..4g+3 of column 4L + j.
  for (int g = 0; g < 2; ++g) {
    u[4 * g + 0] = _mm256_unpacklo_epi64(t[4 * g], t[4 * g + 2]);
    u[4 * g + 1] = _mm256_unpackhi_epi64(t[4 * g], t[4 * g + 2]);
    u[4 * g + 2] = _mm256_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
    u[4 * g + 3] = _mm256_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
  }
  for (int j = 0; j < 4; ++j) {
    r[j] = _mm256_permute2x128_si256(u[j], u[4 + j], 0x20);
    r[4 + j] = _mm256_permute2x128_si256(u[j], u[4 + j], 0x31);
  }
}

// Per span of blocks, what every row group shares: the activation's scales, offset terms and
// quants arranged for block pairs (act[2k]: the first 16 quants of blocks 2k and 2k+1 of the
// span, act[2k+1]: their last 16; the half of a missing last block is zero).
struct Prep {
  alignas(32) float da[kSpan];
  alignas(32) int32_t init[kSpan];
  __m256i act[kSpan];
};

void prepare(const BlockQ8_0* x, int64_t ns, Prep& p) {
  for (int64_t b = 0; b < ns; ++b) {
    p.da[b] = f16_to_f32(x[b].d);
    p.init[b] = -8 * hsum_i32(dot_u8s8(_mm256_set1_epi8(1), loadu256(x[b].qs)));  // the nibbles are w + 8
  }
  for (int64_t b = 0; b < ns; b += 2) {
    const bool two = b + 1 < ns;
    const __m128i z = _mm_setzero_si128();
    p.act[b] = _mm256_set_m128i(two ? loadu128(x[b + 1].qs) : z, loadu128(x[b].qs));
    p.act[b + 1] = _mm256_set_m128i(two ? loadu128(x[b + 1].qs + 16) : z, loadu128(x[b].qs + 16));
  }
}

// Lane of block b of sums8's result.
constexpr int kPos[kBlocks] = {0, 4, 1, 5, 2, 6, 3, 7};

// The unsigned nibbles' dots of blocks 0..kb-1 at w (kb <= 8; all 8 when kFull) with the
// prepared activation pairs, block b in lane kPos[b], missing blocks zero. Two blocks per
// register, [block 2k's 16 bytes | block 2k+1's]: one and, one shift and one and unpack both
// (low nibbles: elements 0..15, high: 16..31), and the int16 pairs of the two halves add
// without overflow (2 * 2 * 15 * 128 < 2^15).
template <bool kFull>
__m256i sums8(const BlockQ4_0* w, int kb, const __m256i* act) {
  const __m256i lo4 = _mm256_set1_epi8(0x0F);
  __m256i p[4];
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    if (!kFull && 2 * k >= kb) {
      p[k] = _mm256_setzero_si256();
      continue;
    }
    const __m128i* q0 = reinterpret_cast<const __m128i*>(w[2 * k].qs);
    const __m256i v = kFull || 2 * k + 1 < kb
                          ? _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(w[2 * k + 1].qs), q0)
                          : _mm256_castsi128_si256(_mm_loadu_si128(q0));  // upper half: zero act
    const __m256i lo = _mm256_and_si256(v, lo4), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), lo4);
    const __m256i s16 = _mm256_add_epi16(_mm256_maddubs_epi16(lo, act[2 * k]), _mm256_maddubs_epi16(hi, act[2 * k + 1]));
    p[k] = _mm256_madd_epi16(s16, _mm256_set1_epi16(1));
  }
  // 128-bit lane 0 of p[k] is block 2k, lane 1 block 2k + 1: two levels of hadd leave
  // [blocks 0, 2, 4, 6 | 1, 3, 5, 7].
  return _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_hadd_epi32(p[2], p[3]));
}

void gemv(int64_t n, int64_t n_rows, const void* w, size_t w_stride, const void* x, float* y) {
  const int64_t nb = n / kQK;
  const uint8_t* wb = static_cast<const uint8_t*>(w);
  const BlockQ8_0* xa = static_cast<const BlockQ8_0*>(x);
  alignas(32) Prep prep;
  for (int64_t s0 = 0; s0 < nb; s0 += kSpan) {
    const int64_t ns = nb - s0 < kSpan ? nb - s0 : kSpan;
    prepare(xa + s0, ns, prep);
    const int64_t n_steps = (ns + kBlocks - 1) / kBlocks;
    const size_t span_bytes = static_cast<size_t>(ns) * sizeof(BlockQ4_0);
    for (int64_t r0 = 0; r0 < n_rows; r0 += kRows) {
      const int nr = static_cast<int>(n_rows - r0 < kRows ? n_rows - r0 : kRows);
      const BlockQ4_0* rows[kRows];
      const uint8_t* row_bytes[kRows];  // the same, for gather_f16x8
      for (int r = 0; r < kRows; ++r) {
        rows[r] = reinterpret_cast<const BlockQ4_0*>(wb + static_cast<size_t>(r0 + (r < nr ? r : nr - 1)) * w_stride) + s0;
        row_bytes[r] = reinterpret_cast<const uint8_t*>(rows[r]);
      }
      // Eight rows read side by side are more streams than the hardware prefetcher follows (from
      // DRAM the kernel ran at half its L2 speed); the next group's span, one contiguous range
      // per row, is requested a slice per step.
      const int64_t next_rows = n_rows - r0 - kRows < kRows ? n_rows - r0 - kRows : kRows;
      const size_t lines_per_step = next_rows > 0 ? ((span_bytes + 63) / 64 + n_steps - 1) / n_steps : 0;
      alignas(32) float tmp[kRows];
      __m256 acc = _mm256_setzero_ps();
      if (s0 > 0) {  // the chain goes on from the previous span's sums
        for (int r = 0; r < kRows; ++r) tmp[r] = r < nr ? y[r0 + r] : 0.0f;
        acc = _mm256_load_ps(tmp);
      }
      for (int64_t k0 = 0; k0 < ns; k0 += kBlocks) {
        const int kb = static_cast<int>(ns - k0 < kBlocks ? ns - k0 : kBlocks);
        const size_t o0 = static_cast<size_t>(k0 / kBlocks) * lines_per_step * 64;
        for (int64_t r = 0; r < next_rows; ++r) {
          const char* next = reinterpret_cast<const char*>(wb + static_cast<size_t>(r0 + kRows + r) * w_stride) +
                             static_cast<size_t>(s0) * sizeof(BlockQ4_0);
          for (size_t o = o0; o < o0 + lines_per_step * 64 && o < span_bytes; o += 64) _mm_prefetch(next + o, _MM_HINT_T0);
        }
        __m256i s[kRows];
        if (kb == kBlocks) {
          for (int r = 0; r < kRows; ++r) s[r] = sums8<true>(rows[r] + k0, kb, prep.act + k0);
        } else {
          for (int r = 0; r < kRows; ++r) s[r] = sums8<false>(rows[r] + k0, kb, prep.act + k0);
        }
        transpose8(s);  // s[kPos[b]] lane r: row r's sum of block k0 + b
        for (int b = 0; b < kb; ++b) {
          // (Eight scalar loads: a vpgatherdd here made the kernel slower than vec_dot.)
          const __m256 dw = gather_f16x8(row_bytes, static_cast<size_t>(k0 + b) * sizeof(BlockQ4_0) + offsetof(BlockQ4_0, d));
          const __m256i sb = _mm256_add_epi32(s[kPos[b]], _mm256_set1_epi32(prep.init[k0 + b]));
          acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sb), _mm256_mul_ps(dw, _mm256_set1_ps(prep.da[k0 + b])), acc);
        }
      }
      if (nr == kRows) {
        _mm256_storeu_ps(y + r0, acc);
      } else {
        _mm256_store_ps(tmp, acc);
        for (int r = 0; r < nr; ++r) y[r0 + r] = tmp[r];
      }
    }
  }
}

}  // namespace

void q4_0_gemv_avx2(int64_t n, int64_t n_rows, const void* w, size_t w_stride, const void* x, float* y) {
  gemv(n, n_rows, w, w_stride, x, y);
}

}  // namespace edgeinfer
