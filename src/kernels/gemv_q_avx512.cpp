// AVX-512 decode GEMV of Q4_0 and Q8_0 with the arithmetic of their prefill tiles
// (gemm_q_avx512.cpp), so that a token's numbers are the same whether it is decoded alone
// (this kernel) or batched with others (the tile). Per output element the tile computes, over
// the row's blocks b in order,
//     acc = fma(float(isum_b), dw_b * da_b, acc),   acc starting at +0,
// with isum_b the exact integer dot of block b. This kernel gets the integer sums the way
// vec_dot does (one row at a time, sequential reads that the hardware prefetcher follows; the
// weights unpacked once), 16 blocks of 16 rows at a time, transposes the 16x16 sums and scales
// so that lane = row, and then runs the same FMA chain as the tile, one vector for 16 rows.
// Blocks past the last whole 16 and rows past the last whole 16 take a scalar path with the
// same operations (fmaf is the same correctly rounded fused multiply-add).
#include <cmath>

#include "kernels/block16_avx512.h"
#include "kernels/simd_avx512.h"

namespace edgeinfer {

namespace {

using namespace avx512;

// Position in kBlockOrder of each block: lane kPos[b] of a reduce16 result is block b.
constexpr int kPos[16] = {0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15};

struct GemvQ4_0 {
  using Block = BlockQ4_0;
  // Integer sums of 16 blocks of one row against the chunk's activations xq (pairs), before
  // the activation offset term (subtracted by the caller), lanes in kBlockOrder.
  static __m512i sums16(const Block* a, const __m512i xq[8]) {
    __m512i v[8];
    for (int p = 0; p < 8; ++p) v[p] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), unpack_nibbles2(a[2 * p].qs, a[2 * p + 1].qs), xq[p]);
    return reduce16(v);
  }
  static constexpr int kOffset = 8;  // the unsigned nibbles are w + 8
  static __m512 scales16(const Block* a) { return scales_stride18(reinterpret_cast<const uint8_t*>(a)); }
  static int32_t isum(const Block& w, const BlockQ8_0& x) {
    int32_t s = 0;
    for (int i = 0; i < kQK / 2; ++i) {
      s += (static_cast<int32_t>(w.qs[i] & 0x0F) - 8) * x.qs[i];
      s += (static_cast<int32_t>(w.qs[i] >> 4) - 8) * x.qs[i + kQK / 2];
    }
    return s;
  }
};

struct GemvQ8_0 {
  using Block = BlockQ8_0;
  static __m512i sums16(const Block* a, const __m512i xq[8]) {
    const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));  // int8 w -> unsigned w + 128
    __m512i v[8];
    for (int p = 0; p < 8; ++p) {
      v[p] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_xor_si512(load2x256(a[2 * p].qs, a[2 * p + 1].qs), bias), xq[p]);
    }
    return reduce16(v);
  }
  static constexpr int kOffset = 128;
  static __m512 scales16(const Block* a) { return scales_stride34(reinterpret_cast<const uint8_t*>(a)); }
  static int32_t isum(const Block& w, const BlockQ8_0& x) {
    int32_t s = 0;
    for (int i = 0; i < kQK; ++i) s += static_cast<int32_t>(w.qs[i]) * x.qs[i];
    return s;
  }
};

template <class G>
void gemv(int64_t n, int64_t n_rows, const void* w, size_t w_stride, const void* xv, float* y) {
  using Block = typename G::Block;
  const int64_t nb = n / kQK, nb16 = nb / 16 * 16;
  const BlockQ8_0* x = static_cast<const BlockQ8_0*>(xv);
  const uint8_t* wb = static_cast<const uint8_t*>(w);
  const __m512i off = _mm512_set1_epi8(static_cast<char>(G::kOffset));
  for (int64_t r0 = 0; r0 < n_rows; r0 += 16) {
    const int nr = static_cast<int>(n_rows - r0 < 16 ? n_rows - r0 : 16);
    const Block* rows[16];
    for (int r = 0; r < 16; ++r) rows[r] = reinterpret_cast<const Block*>(wb + static_cast<size_t>(r0 + (r < nr ? r : nr - 1)) * w_stride);
    __m512 acc = _mm512_setzero_ps();  // lane r: row r0 + r
    const char* next_group = reinterpret_cast<const char*>(wb + static_cast<size_t>(r0 + 16) * w_stride);
    const char* group_end = reinterpret_cast<const char*>(wb + static_cast<size_t>(r0 + 16 + (n_rows - r0 - 16 < 16 ? n_rows - r0 - 16 : 16)) * w_stride);
    const size_t prefetch_per_chunk = nb16 ? (16 * w_stride + static_cast<size_t>(nb16 / 16) - 1) / static_cast<size_t>(nb16 / 16) : 0;
    const size_t lines_per_row = (prefetch_per_chunk + 16 * 64 - 1) / (16 * 64);
    for (int64_t k0 = 0; k0 < nb16; k0 += 16) {
      __m512i xq[8], xo[8];
      for (int p = 0; p < 8; ++p) {
        xq[p] = load2x256(x[k0 + 2 * p].qs, x[k0 + 2 * p + 1].qs);
        xo[p] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), off, xq[p]);
      }
      const __m512i offset_sums = reduce16(xo);  // offset * sum(a) per block, kBlockOrder
      alignas(64) float da[16];
      _mm512_store_ps(da, scales_stride34(reinterpret_cast<const uint8_t*>(x + k0)));
      __m512i s[16], d[16];
      // Sixteen rows read side by side are more streams than the hardware prefetcher follows
      // (from DRAM the kernel ran at half of vec_dot's speed, bench_kernels gemv_exact); the
      // next row group is one contiguous range, requested here a slice per chunk, a few lines per row.
      const char* stop = next_group + prefetch_per_chunk < group_end ? next_group + prefetch_per_chunk : group_end;
      for (int r = 0; r < 16; ++r) {
        for (size_t l = 0; l < lines_per_row && next_group < stop; ++l, next_group += 64) _mm_prefetch(next_group, _MM_HINT_T0);
        s[r] = _mm512_sub_epi32(G::sums16(rows[r] + k0, xq), offset_sums);
        d[r] = _mm512_castps_si512(G::scales16(rows[r] + k0));
      }
      transpose16(s);  // s[k] lane r: block kBlockOrder[k] of row r
      transpose16(d);
      for (int b = 0; b < 16; ++b) {
        const int k = kPos[b];
        const __m512 scale = _mm512_mul_ps(_mm512_castsi512_ps(d[k]), _mm512_set1_ps(da[k]));
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s[k]), scale, acc);
      }
    }
    alignas(64) float out[16];
    _mm512_store_ps(out, acc);
    if (nb16 < nb) {
      for (int r = 0; r < nr; ++r) {
        float a = out[r];
        for (int64_t b = nb16; b < nb; ++b) {
          const float scale = f16_to_f32(rows[r][b].d) * f16_to_f32(x[b].d);
          a = std::fmaf(static_cast<float>(G::isum(rows[r][b], x[b])), scale, a);
        }
        out[r] = a;
      }
    }
    for (int r = 0; r < nr; ++r) y[r0 + r] = out[r];
  }
}

}  // namespace

void q4_0_gemv_avx512(int64_t n, int64_t n_rows, const void* w, size_t w_stride, const void* x, float* y) {
  gemv<GemvQ4_0>(n, n_rows, w, w_stride, x, y);
}
void q8_0_gemv_avx512(int64_t n, int64_t n_rows, const void* w, size_t w_stride, const void* x, float* y) {
  gemv<GemvQ8_0>(n, n_rows, w, w_stride, x, y);
}

}  // namespace edgeinfer
