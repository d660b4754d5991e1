// AVX-512 kernels of F16 weights over the x16 layout (quant/x16_layout.h: element k of 16 rows
// side by side): the prefill tile and the decode GEMV, with the arithmetic kernels.h gives them
// (kF16X16SumBlock), the one the tile's register form needs.
//
// The row tile (gemm_float_avx512.h) holds lane partials of 6 rows x 4 columns and converts
// each weight vector for 4 FMAs; on a core with two 512-bit FMA ports its loads and
// conversions feed the FMAs ~55-63% of the time. Here one weight vector holds element k of 16
// rows and serves 24 columns, each column's x_k broadcast from memory into the FMA: 24
// accumulators of 16 rows, 25 loads per 24 FMAs. The first register tile of a span converts the
// group's block and keeps it as floats (8 KiB) for the span's other tiles (see WFrom). One
// thread on the Intel VM (probe 172-175 GFLOP/s): a standalone loop over cached weights ran
// this form at 151 GFLOP/s and the row tile's at 108; this tile over weights from DRAM
// (bench_kernels gemm_x16, 2048 x 2048 x 512) at 115-130 when every tile converted. Tried
// there, no difference beyond the noise: 48 or 24 columns converted at once instead of 72,
// requests ahead into L2 instead of L1.
#include <algorithm>

#include "kernels/simd_avx512.h"
#include "quant/x16_layout.h"

namespace edgeinfer {

namespace {

constexpr int64_t kKc = kF16X16SumBlock;
static_assert(kKc % 16 == 0, "the GEMV converts activations 16 at a time within a block");
constexpr int kCols = 24;  // columns of one register tile: 24 accumulators and the weight vector
// Columns whose activations one K block converts at once: 72 x kKc F32 (36 KiB) stay in L1
// beside the block of weights of the group being read (kKc x 16 F16, 4 KiB, and the same as
// F32, 8 KiB), which serves all three register tiles. The engine's calls have at most 64
// columns (kTokenChunk), 32 KiB of activations.
constexpr int kSpan = 3 * kCols;

// The first min(n, 16) lanes (rows of a group, or elements of a tail).
inline __mmask16 first_lanes(int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << n) - 1);
}

inline __m512 load_w(const uint16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// The halves at p in the lanes of m as floats (exact), zero elsewhere; reads only those lanes.
inline __m512 load_halves(const uint16_t* p, __mmask16 m) { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p)); }

// K block [k0, k0 + len) of activation rows 0..nc-1 (F16, x_stride bytes apart) as F32 (exact):
// row c at xs + c * kKc.
void convert_block(const uint8_t* x, size_t x_stride, int nc, int64_t k0, int64_t len, float* xs) {
  for (int c = 0; c < nc; ++c) {
    const uint16_t* h = reinterpret_cast<const uint16_t*>(x + static_cast<size_t>(c) * x_stride) + k0;
    float* o = xs + static_cast<size_t>(c) * kKc;
    int64_t k = 0;
    for (; k + 16 <= len; k += 16) _mm512_store_ps(o + k, load_w(h + k));
    if (k < len) {
      const __mmask16 m = first_lanes(len - k);
      _mm512_mask_storeu_ps(o + k, m, load_halves(h + k, m));
    }
  }
}

// Where a register tile's weight vectors come from: the group's halves, converted per K step
// (and, with kHalvesKeep, also stored as floats for the span's later tiles), or those floats.
// vcvtph2ps costs the FMA ports more than its one vector suggests: a standalone 24-column loop
// over cached weights on the Intel VM ran at 75-79% of the FMA peak converting each step,
// 86-89% loading floats (16 columns: 77-78% against 91-93%). Converting once per span instead of
// once per register tile takes two of the three conversions of a 64-column call off the ports:
// 5632 x 2048 x 64 calls, medians of 15 interleaved repetitions against the tile that converted
// in every register tile, 1 thread from L2 136 -> 146 GFLOP/s, from DRAM 116 -> 138, 2 threads
// from DRAM 254 -> 290.
enum class WFrom { kHalves, kHalvesKeep, kFloats };

// K step k of a register tile: the weight vector (as kFrom says) times each column's x_k.
template <int C, WFrom kFrom>
[[gnu::always_inline]] inline void tile_step(__m512 (&acc)[C], int64_t k, const uint16_t* wg, float* wf,
                                             const float* xs) {
  __m512 w;
  if constexpr (kFrom == WFrom::kFloats) {
    w = _mm512_load_ps(wf + k * kX16Rows);
  } else {
    w = load_w(wg + k * kX16Rows);
    if constexpr (kFrom == WFrom::kHalvesKeep) _mm512_store_ps(wf + k * kX16Rows, w);
  }
#pragma GCC unroll 24
  for (int c = 0; c < C; ++c) acc[c] = _mm512_fmadd_ps(w, _mm512_set1_ps(xs[c * kKc + k]), acc[c]);
}

// One group's 16 rows x C columns over one K block: the block's partials, stored as the result
// so far (the first block) or added to it. Rows beyond the call's (m) are neither read nor
// written in y. wg: the group's block as halves; wf: the same block as floats (kFloats reads
// it, kHalvesKeep writes it). `next` (or nullptr): the same block of the next group, requested
// into L1 one line per two K steps. The groups' blocks are 4 KiB pieces n * 32 bytes apart,
// each a new page to the hardware prefetcher; requested a group ahead, the 2048 x 2048 prefill
// over weights from DRAM (bench_kernels gemm_x16, one thread, Intel) ran at 115 GFLOP/s,
// against 93 without.
template <int C, WFrom kFrom>
void block_tile(int64_t len, const uint16_t* wg, float* wf, const float* xs, float* y, size_t y_stride, __mmask16 m,
                bool first, const uint16_t* next) {
  __m512 acc[C];
#pragma GCC unroll 24
  for (int c = 0; c < C; ++c) acc[c] = _mm512_setzero_ps();
  // Two K steps per pass with one unconditional request (to the block being read when there is
  // no next one): fewer loop instructions beside the FMAs. Tiles reading the floats request
  // nothing: the tile that converted the block already asked for the next one.
  const char* ahead = reinterpret_cast<const char*>(next ? next : wg);
  int64_t k = 0;
  for (; k + 2 <= len; k += 2) {
    if constexpr (kFrom != WFrom::kFloats) _mm_prefetch(ahead + k * kX16Rows * sizeof(uint16_t), _MM_HINT_T0);
    tile_step<C, kFrom>(acc, k, wg, wf, xs);
    tile_step<C, kFrom>(acc, k + 1, wg, wf, xs);
  }
  if (k < len) tile_step<C, kFrom>(acc, k, wg, wf, xs);
  if (first) {
#pragma GCC unroll 24
    for (int c = 0; c < C; ++c) _mm512_mask_storeu_ps(y + static_cast<size_t>(c) * y_stride, m, acc[c]);
  } else {
#pragma GCC unroll 24
    for (int c = 0; c < C; ++c) {
      float* yc = y + static_cast<size_t>(c) * y_stride;
      _mm512_mask_storeu_ps(yc, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, yc), acc[c]));
    }
  }
}

template <int C, WFrom kFrom>
void dispatch_cols(int nc, int64_t len, const uint16_t* wg, float* wf, const float* xs, float* y, size_t y_stride,
                   __mmask16 m, bool first, const uint16_t* next) {
  if constexpr (C > 0) {
    if (nc == C) return block_tile<C, kFrom>(len, wg, wf, xs, y, y_stride, m, first, next);
    return dispatch_cols<C - 1, kFrom>(nc, len, wg, wf, xs, y, y_stride, m, first, next);
  }
}

// G groups (G x 16 rows) against one activation row: one accumulator per group, K block by K
// block as the tile sums; G streams read side by side, with no requests ahead (tiny1b F16 tg32
// on 2 threads, Intel: 90-96% of the probed read bandwidth, against 62-67% for the rows' vec_dot
// with its requests ahead). The activations are converted 16 at a time.
template <int G>
void gemv_groups(int64_t n, const uint8_t* w, size_t w_stride, const uint16_t* x, float* y, int64_t rows_left) {
  const uint16_t* wg[G];
  for (int g = 0; g < G; ++g) wg[g] = reinterpret_cast<const uint16_t*>(w + static_cast<size_t>(g) * w_stride);
  __m512 total[G];
  for (int g = 0; g < G; ++g) total[g] = _mm512_setzero_ps();
  alignas(64) float xf[16];
  for (int64_t k0 = 0; k0 < n; k0 += kKc) {
    const int64_t len = std::min(kKc, n - k0);
    __m512 part[G];
    for (int g = 0; g < G; ++g) part[g] = _mm512_setzero_ps();
    for (int64_t k = k0; k < k0 + len; k += 16) {
      const int64_t run = std::min<int64_t>(16, k0 + len - k);
      _mm512_store_ps(xf, load_halves(x + k, first_lanes(run)));
      if (run == 16) {
#pragma GCC unroll 16
        for (int j = 0; j < 16; ++j) {
          const __m512 xb = _mm512_set1_ps(xf[j]);
          for (int g = 0; g < G; ++g) part[g] = _mm512_fmadd_ps(load_w(wg[g] + (k + j) * kX16Rows), xb, part[g]);
        }
      } else {
        for (int64_t j = 0; j < run; ++j) {
          const __m512 xb = _mm512_set1_ps(xf[j]);
          for (int g = 0; g < G; ++g) part[g] = _mm512_fmadd_ps(load_w(wg[g] + (k + j) * kX16Rows), xb, part[g]);
        }
      }
    }
    for (int g = 0; g < G; ++g) total[g] = k0 == 0 ? part[g] : _mm512_add_ps(total[g], part[g]);
  }
  for (int g = 0; g < G; ++g) {
    _mm512_mask_storeu_ps(y + g * kX16Rows, first_lanes(rows_left - g * kX16Rows), total[g]);
  }
}

}  // namespace

void f16_gemv_x16_avx512(int64_t n, int64_t n_rows, const void* w, size_t w_stride, const void* x, float* y) {
  constexpr int kGroups = 4;  // streams read at once
  const uint8_t* wb = static_cast<const uint8_t*>(w);
  const uint16_t* xh = static_cast<const uint16_t*>(x);
  const int64_t groups = (n_rows + kX16Rows - 1) / kX16Rows;
  int64_t g = 0;
  for (; g + kGroups <= groups; g += kGroups) {
    gemv_groups<kGroups>(n, wb + static_cast<size_t>(g) * w_stride, w_stride, xh, y + g * kX16Rows,
                         n_rows - g * kX16Rows);
  }
  for (; g < groups; ++g) {
    gemv_groups<1>(n, wb + static_cast<size_t>(g) * w_stride, w_stride, xh, y + g * kX16Rows,
                   n_rows - g * kX16Rows);
  }
}

void f16_gemm_tile_x16_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                              const void* x, size_t x_stride, float* y, size_t y_stride) {
  alignas(64) float xs[kSpan * kKc];
  alignas(64) float wf[kKc * kX16Rows];  // the block of the group being read, as floats
  const uint8_t* wb = static_cast<const uint8_t*>(w);
  const uint8_t* xb = static_cast<const uint8_t*>(x);
  const int64_t groups = (n_rows + kX16Rows - 1) / kX16Rows;
  for (int64_t s0 = 0; s0 < n_cols; s0 += kSpan) {
    const int ns = static_cast<int>(std::min<int64_t>(kSpan, n_cols - s0));
    // K outermost within a span: each block of a group's weights is read once for the span.
    for (int64_t k0 = 0; k0 < n; k0 += kKc) {
      const int64_t len = std::min(kKc, n - k0);
      convert_block(xb + static_cast<size_t>(s0) * x_stride, x_stride, ns, k0, len, xs);
      for (int64_t g = 0; g < groups; ++g) {
        const uint16_t* wg = reinterpret_cast<const uint16_t*>(wb + static_cast<size_t>(g) * w_stride) + k0 * kX16Rows;
        const __mmask16 m = first_lanes(n_rows - g * kX16Rows);
        // The first register tile converts the block (keeping the floats when more tiles follow,
        // and requesting the next group's block); the others read the floats.
        const uint16_t* next = g + 1 < groups ? wg + w_stride / sizeof(uint16_t) : nullptr;
        float* yg = y + static_cast<size_t>(s0) * y_stride + g * kX16Rows;
        const int nc0 = std::min(kCols, ns);
        if (ns > kCols) {
          dispatch_cols<kCols, WFrom::kHalvesKeep>(nc0, len, wg, wf, xs, yg, y_stride, m, k0 == 0, next);
        } else {
          dispatch_cols<kCols, WFrom::kHalves>(nc0, len, wg, wf, xs, yg, y_stride, m, k0 == 0, next);
        }
        for (int c0 = kCols; c0 < ns; c0 += kCols) {
          dispatch_cols<kCols, WFrom::kFloats>(std::min(kCols, ns - c0), len, wg, wf, xs + static_cast<size_t>(c0) * kKc,
                                               yg + static_cast<size_t>(c0) * y_stride, y_stride, m, k0 == 0, nullptr);
        }
      }
    }
  }
}

}  // namespace edgeinfer
