// AVX-512 prefill tiles (GemmTileFn) of the 32-wide quant types: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0.
//
// Layout: 16 weight rows live in the 16 int32 lanes of a register. For each 32-element block
// the rows' quants are unpacked once into 8 registers (register j, lane r = the 4 unsigned
// bytes of elements 4j..4j+3 of row r) and then reused for every activation column: one
// vpdpbusd with the column's 4 activation bytes broadcast from memory advances 16 rows by 4
// elements. A block costs, per column, 8 vpdpbusd + 1 conversion + 1 multiply + 1 FMA for 16
// rows (512 multiply-adds), and its int32 accumulator starts at -offset * sum(a) so the
// weights' constant offset (8, 16, 128) needs no extra instruction.
//
// Blocking: columns in panels of kPanel; K in chunks of kChunkBlocks blocks; within a chunk,
// per-(column, block) activation terms are computed once for all row groups, per-(row, block)
// weights are unpacked once for all columns of the panel, and y accumulates across chunks.
// Best use: pass many rows (a thread's whole share) and many columns in one call.
//
// Q4_0 and Q8_0 also read the x16 layout (quant/x16_layout.h), whose group of 16 rows holds the
// transposed quants and the scales as they are loaded here: the unpack becomes a few
// contiguous loads, and each group is one stream instead of sixteen. The WeightPack is the
// same, and so are the results, bit for bit. The x16 GEMV (one column) runs the micro-kernel's
// arithmetic for one column straight from the loaded registers.
#include <type_traits>

#include "kernels/simd_avx512.h"
#include "quant/x16_layout.h"

namespace edgeinfer {

namespace {

using namespace avx512;

constexpr int kRows = 16;
constexpr int kChunkBlocks = 8;
constexpr int kPanel = 64;
constexpr int kRowBlock = 128;  // rows sharing one pass of activation terms (multiple of kRows)
constexpr int kMaxCols = 8;  // columns per micro-kernel call (accumulator registers)
static_assert(kChunkBlocks == kX16ChunkBlocks, "the x16 layout's chunks are the tile's K chunks");

// One row group's weights for one K chunk.
struct WeightPack {
  __m512i q[kChunkBlocks][8];  // q[b][j] lane r: unsigned quants 4j..4j+3 of block b, row r
  __m512 d[kChunkBlocks];      // lane r: scale of block b, row r
  __m512 m[kChunkBlocks];      // lane r: min of block b, row r (affine types)
};

// One panel's activation terms for one K chunk, [column][block]. With kQuants, also the
// columns' int8 quants, [block][column]: the micro-kernel then reads the 32 * NC bytes of a
// block's columns at constant offsets from one pointer instead of one pointer per column.
template <int NCOLS, bool kQuants>
struct ActTerms {
  alignas(32) int32_t init[NCOLS][kChunkBlocks];  // -offset * sum(a)
  alignas(32) float d[NCOLS][kChunkBlocks];       // da
  alignas(32) float s[NCOLS][kChunkBlocks];       // da * sum(a) as stored in Q8_1 (affine types)
  struct Empty {};
  struct Quants {
    alignas(64) int8_t v[kChunkBlocks][NCOLS][kQK];
  };
  [[no_unique_address]] std::conditional_t<kQuants, Quants, Empty> q;
  static constexpr bool kHasQuants = kQuants;
};
using ActPack = ActTerms<kPanel, true>;
// Most columns of the few-column path (few_columns: batched decode, with a few prompt or draft
// rows beside it); 9 to 16 took the panel path before, at more than twice the time of 8
// (bench_kernels gemm_x16_cols). The quants stay in the activation rows there: a copy for every
// chunk would not fit the stack.
constexpr int kFewMaxCols = 2 * kMaxCols;
constexpr int64_t kFewActMaxChunks = 128;  // K up to 32768 (larger K: per row group, as for panels)

// 16 rows x 16 bytes at p[r] + off -> T[d] lane r = dword d of row r.
inline void transpose16x4(const uint8_t* const* rows, size_t off, __m512i t[4]) {
  __m512i z[4];
  for (int g = 0; g < 4; ++g) {
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[g] + off)));
    v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[g + 4] + off)), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[g + 8] + off)), 2);
    z[g] = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[g + 12] + off)), 3);
  }
  // Within each 128-bit lane L, z[g] holds row g + 4L: a 4x4 dword transpose per lane leaves
  // dword d of rows 0..15 in order in t[d].
  const __m512i a0 = _mm512_unpacklo_epi32(z[0], z[1]), a1 = _mm512_unpackhi_epi32(z[0], z[1]);
  const __m512i a2 = _mm512_unpacklo_epi32(z[2], z[3]), a3 = _mm512_unpackhi_epi32(z[2], z[3]);
  t[0] = _mm512_unpacklo_epi64(a0, a2);
  t[1] = _mm512_unpackhi_epi64(a0, a2);
  t[2] = _mm512_unpacklo_epi64(a1, a3);
  t[3] = _mm512_unpackhi_epi64(a1, a3);
}

// x16 layout: the 16 f16 scales of a block, at sc.
inline __m512 x16_scales(const uint8_t* sc) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(sc)));
}

// Where block blk of an x16 group starts (quants) and where its scales are; V = 64-byte quant
// vectors per block (the layout's Q / 4).
template <int V>
struct X16Block {
  static constexpr size_t kBlockBytes = 64 * V + 32;  // 16 rows' quants and scales
  const uint8_t* q;
  const uint8_t* sc;
  X16Block(const uint8_t* g, int64_t nb, int64_t blk) {
    const int64_t c0 = blk / kX16ChunkBlocks * kX16ChunkBlocks;
    const int64_t kb = nb - c0 < kX16ChunkBlocks ? nb - c0 : kX16ChunkBlocks;
    const uint8_t* chunk = g + static_cast<size_t>(c0) * kBlockBytes;
    q = chunk + static_cast<size_t>(blk - c0) * (64 * V);
    sc = chunk + static_cast<size_t>(kb) * (64 * V) + static_cast<size_t>(blk - c0) * 32;
  }
};

// How far ahead of the chunk being read the x16 tiles request the stream (bytes): their
// compute-bound loops need the lines in flight before they get to them. (The one-column GEMV,
// memory-bound, requests nothing on Zen 4: its plain sequential reads are what the hardware
// prefetcher follows best there; on Intel it requests a line per line read, see gemv_x16.
// With the burst below it ran slower on Zen 4: gemv_x16 q4_0 5632x2048 from DRAM
// 248-272 us without vs 289-315 with; tiny1b Q8_0 tg64 on 1 thread 26.3/25.9 vs 19.5/19.2
// tok/s.) The requests go to L2 (T2), not L1: a chunk's ~36 lines asked for at once fill the
// core's few L1 miss buffers, and the prefetch instructions then stall the kernel
// (on Zen 4 a fifth of the tile's samples sat on them; tiny1b Q4_0 tg64 2 threads, alternating:
// 1 stream 46.4/51.3 vs 36.9/39.7 tok/s, 8 streams 132.4/130.4 vs 107.2/91.0 with T0).
constexpr size_t kX16PrefetchAhead = 4096;
inline void x16_prefetch(const uint8_t* chunk, size_t bytes) {
  const char* p = reinterpret_cast<const char*>(chunk) + kX16PrefetchAhead;
  for (size_t o = 0; o < bytes; o += 64) _mm_prefetch(p + o, _MM_HINT_T2);
}

// f16 fields at rows[r] + off as 16 floats.
inline __m512 gather_f16(const uint8_t* const* rows, size_t off) {
  alignas(32) uint16_t h[kRows];
  for (int r = 0; r < kRows; ++r) std::memcpy(&h[r], rows[r] + off, 2);
  return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(h)));
}

inline void nibbles_to_pack(const __m512i t[4], __m512i q[8]) {
  const __m512i lo4 = _mm512_set1_epi8(0x0F);
  for (int j = 0; j < 4; ++j) {
    q[j] = _mm512_and_si512(t[j], lo4);
    q[j + 4] = _mm512_and_si512(_mm512_srli_epi16(t[j], 4), lo4);
  }
}

// The Q5 fifth bits: lane r of `qh` holds row r's 32-bit qh; adds 16 to byte k of q[j] when
// bit 4j + k is set.
inline void add_fifth_bits(__m512i qh, __m512i q[8]) {
  const __m512i sixteen = _mm512_set1_epi8(16);
  // Byte index of each dword's first byte within its 128-bit lane, repeated over the dword.
  const __m512i dword_base = _mm512_set1_epi64(0x0c0c0c0c08080808ll);
  const __m512i base = _mm512_unpacklo_epi64(_mm512_set1_epi64(0x0404040400000000ll), dword_base);
  for (int j = 0; j < 8; ++j) {
    // Every byte of a dword takes byte j/2 of that dword; byte k then tests bit 4(j%2) + k.
    const __m512i bytes = _mm512_shuffle_epi8(qh, _mm512_add_epi8(base, _mm512_set1_epi8(static_cast<char>(j / 2))));
    const unsigned sh = 4u * static_cast<unsigned>(j % 2);
    const __m512i pat = _mm512_set1_epi32(static_cast<int>((1u << sh) | ((2u << sh) << 8) | ((4u << sh) << 16) | ((8u << sh) << 24)));
    q[j] = _mm512_mask_add_epi8(q[j], _mm512_test_epi8_mask(bytes, pat), q[j], sixteen);
  }
}

// --- formats -----------------------------------------------------------------------------
// unpack(rows, blk, pack, b): block blk of the 16 rows into slot b. sum_offset: the constant
// subtracted from the unsigned quants (0 for affine types). Activation block types: Q8_0 for
// symmetric formats, Q8_1 for affine ones.

struct FmtQ4_0 {
  using Block = BlockQ4_0;
  using XBlock = BlockQ8_0;
  static constexpr int kOffset = 8;
  static constexpr bool kAffine = false;
  static void unpack(const uint8_t* const* rows, int64_t blk, WeightPack& p, int b) {
    const size_t base = static_cast<size_t>(blk) * sizeof(Block);
    __m512i t[4];
    transpose16x4(rows, base + offsetof(Block, qs), t);
    nibbles_to_pack(t, p.q[b]);
    p.d[b] = gather_f16(rows, base + offsetof(Block, d));
  }
  // x16 layout: the block's quants at q (X16Block).
  static constexpr int kX16Vectors = 4;  // 64-byte quant vectors per block
  static void quants_x16(const uint8_t* q, __m512i out[8]) {
    __m512i t[kX16Vectors];
    for (int j = 0; j < kX16Vectors; ++j) t[j] = _mm512_loadu_si512(q + 64 * j);
    nibbles_to_pack(t, out);
  }
};

struct FmtQ4_1 {
  using Block = BlockQ4_1;
  using XBlock = BlockQ8_1;
  static constexpr int kOffset = 0;
  static constexpr bool kAffine = true;
  static void unpack(const uint8_t* const* rows, int64_t blk, WeightPack& p, int b) {
    const size_t base = static_cast<size_t>(blk) * sizeof(Block);
    __m512i t[4];
    transpose16x4(rows, base + offsetof(Block, qs), t);
    nibbles_to_pack(t, p.q[b]);
    p.d[b] = gather_f16(rows, base + offsetof(Block, d));
    p.m[b] = gather_f16(rows, base + offsetof(Block, m));
  }
};

inline __m512i gather_u32(const uint8_t* const* rows, size_t off) {
  alignas(64) uint32_t v[kRows];
  for (int r = 0; r < kRows; ++r) std::memcpy(&v[r], rows[r] + off, 4);
  return _mm512_load_si512(v);
}

struct FmtQ5_0 {
  using Block = BlockQ5_0;
  using XBlock = BlockQ8_0;
  static constexpr int kOffset = 16;
  static constexpr bool kAffine = false;
  static void unpack(const uint8_t* const* rows, int64_t blk, WeightPack& p, int b) {
    const size_t base = static_cast<size_t>(blk) * sizeof(Block);
    __m512i t[4];
    transpose16x4(rows, base + offsetof(Block, qs), t);
    nibbles_to_pack(t, p.q[b]);
    add_fifth_bits(gather_u32(rows, base + offsetof(Block, qh)), p.q[b]);
    p.d[b] = gather_f16(rows, base + offsetof(Block, d));
  }
};

struct FmtQ5_1 {
  using Block = BlockQ5_1;
  using XBlock = BlockQ8_1;
  static constexpr int kOffset = 0;
  static constexpr bool kAffine = true;
  static void unpack(const uint8_t* const* rows, int64_t blk, WeightPack& p, int b) {
    const size_t base = static_cast<size_t>(blk) * sizeof(Block);
    __m512i t[4];
    transpose16x4(rows, base + offsetof(Block, qs), t);
    nibbles_to_pack(t, p.q[b]);
    add_fifth_bits(gather_u32(rows, base + offsetof(Block, qh)), p.q[b]);
    p.d[b] = gather_f16(rows, base + offsetof(Block, d));
    p.m[b] = gather_f16(rows, base + offsetof(Block, m));
  }
};

struct FmtQ8_0 {
  using Block = BlockQ8_0;
  using XBlock = BlockQ8_0;
  static constexpr int kOffset = 128;
  static constexpr bool kAffine = false;
  static void unpack(const uint8_t* const* rows, int64_t blk, WeightPack& p, int b) {
    const size_t base = static_cast<size_t>(blk) * sizeof(Block);
    const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));  // int8 w -> unsigned w + 128
    __m512i t[4];
    transpose16x4(rows, base + offsetof(Block, qs), t);
    for (int j = 0; j < 4; ++j) p.q[b][j] = _mm512_xor_si512(t[j], bias);
    transpose16x4(rows, base + offsetof(Block, qs) + 16, t);
    for (int j = 0; j < 4; ++j) p.q[b][j + 4] = _mm512_xor_si512(t[j], bias);
    p.d[b] = gather_f16(rows, base + offsetof(Block, d));
  }
  static constexpr int kX16Vectors = 8;
  static void quants_x16(const uint8_t* q, __m512i out[8]) {
    const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
    for (int j = 0; j < 8; ++j) out[j] = _mm512_xor_si512(_mm512_loadu_si512(q + 64 * j), bias);
  }
};

// Where the micro-kernel takes a block's weights from. block(b, q) fills q[8] (as WeightPack's
// q[b]) and returns the scales; mins(b) the affine types' mins.
struct PackWeights {  // a WeightPack unpacked by the caller, reused across column groups
  const WeightPack& w;
  __m512 block(int b, __m512i q[8]) const {
    for (int j = 0; j < 8; ++j) q[j] = w.q[b][j];
    return w.d[b];
  }
  __m512 mins(int b) const { return w.m[b]; }
};
template <class Fmt>
struct X16Weights {  // straight from an x16 group into registers (few columns: used once)
  const uint8_t* g;
  int64_t nb, k0;
  __m512 block(int b, __m512i q[8]) const {
    const X16Block<Fmt::kX16Vectors> at(g, nb, k0 + b);
    // The stream ahead of every line read here: a few requests per block, not x16_prefetch's
    // burst per chunk, which stalls this compute-bound loop on full miss buffers. (Without any
    // request this loop waits on memory: tiny1b Q4_0 tg32 x8 ~145 vs ~255 tok/s.)
    const char* qa = reinterpret_cast<const char*>(at.q) + kX16PrefetchAhead;
    for (int j = 0; j < Fmt::kX16Vectors; ++j) _mm_prefetch(qa + 64 * j, _MM_HINT_T2);
    _mm_prefetch(reinterpret_cast<const char*>(at.sc) + kX16PrefetchAhead, _MM_HINT_T2);
    Fmt::quants_x16(at.q, q);
    return x16_scales(at.sc);
  }
  __m512 mins(int) const { return _mm512_setzero_ps(); }  // x16 types are symmetric
};

// Where a tile's weights come from. RowSource: GGUF rows, `stride` bytes apart, 16 row pointers
// per group. X16Source: the x16 layout, `stride` = group bytes, one pointer per group.
template <class Fmt>
struct RowSource {
  const uint8_t* wb;
  size_t stride;
  int64_t n_rows;
  struct Group {
    const uint8_t* rows[kRows];
  };
  static constexpr bool kOneStream = false;
  Group group(int64_t r0, int nr) const {
    Group g;
    for (int r = 0; r < kRows; ++r) g.rows[r] = wb + static_cast<size_t>(r0 + (r < nr ? r : nr - 1)) * stride;
    return g;
  }
  void unpack(const Group& g, int64_t blk, WeightPack& p, int b) const { Fmt::unpack(g.rows, blk, p, b); }
  void prefetch_after(int64_t r0, int64_t k0, int kb) const;
};

template <class Fmt>
struct X16Source {
  const uint8_t* wb;
  size_t stride;
  int64_t nb;
  struct Group {
    const uint8_t* p;
  };
  using Block = X16Block<Fmt::kX16Vectors>;
  static constexpr bool kOneStream = true;
  Group group(int64_t r0, int) const { return {wb + static_cast<size_t>(r0 / kRows) * stride}; }
  void unpack(const Group& g, int64_t blk, WeightPack& p, int b) const {
    const Block at(g.p, nb, blk);
    Fmt::quants_x16(at.q, p.q[b]);
    p.d[b] = x16_scales(at.sc);
  }
  X16Weights<Fmt> direct(const Group& g, int64_t k0) const { return {g.p, nb, k0}; }
  // The thread's groups are one contiguous stream: requested ahead of the chunk at k0.
  void prefetch_after(int64_t r0, int64_t k0, int kb) const {
    x16_prefetch(wb + static_cast<size_t>(r0 / kRows) * stride + static_cast<size_t>(k0) * Block::kBlockBytes,
                 static_cast<size_t>(kb) * Block::kBlockBytes);
  }
};

// Sums of the 32 int8 of up to 8 consecutive activation blocks (kb of them; the others 0).
template <class XB>
inline __m256i block_sums8(const XB* xb, int kb) {
  const __m512i ones = _mm512_set1_epi8(1);
  __m512i v[4];
  for (int p = 0; p < 4; ++p) {
    const int b0 = 2 * p, b1 = b0 + 1 < kb ? b0 + 1 : b0;
    v[p] = b0 < kb ? _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, load2x256(xb[b0].qs, xb[b1].qs))
                   : _mm512_setzero_si512();
  }
  // v[p]: lanes 0-7 block 2p, 8-15 block 2p + 1. Pairwise reduction down to one lane per block.
  const __m512i x0 = _mm512_add_epi32(_mm512_unpacklo_epi32(v[0], v[1]), _mm512_unpackhi_epi32(v[0], v[1]));
  const __m512i x1 = _mm512_add_epi32(_mm512_unpacklo_epi32(v[2], v[3]), _mm512_unpackhi_epi32(v[2], v[3]));
  const __m512i y = _mm512_add_epi32(_mm512_unpacklo_epi64(x0, x1), _mm512_unpackhi_epi64(x0, x1));
  const __m512i z = _mm512_add_epi32(y, _mm512_shuffle_i32x4(y, y, 0xB1));
  const __m128i even = _mm512_castsi512_si128(z), odd = _mm512_extracti32x4_epi32(z, 2);  // blocks 0,2,4,6 / 1,3,5,7
  __m256i sums = _mm256_set_m128i(_mm_unpackhi_epi32(even, odd), _mm_unpacklo_epi32(even, odd));
  if (kb < 8) sums = _mm256_maskz_mov_epi32(static_cast<__mmask8>((1u << kb) - 1), sums);
  return sums;
}

// Few columns (batched decode): one row group walks all of K, and the 16 rows read side by side
// are more streams than the hardware prefetcher follows; requests the next group's bytes of
// blocks [k0, k0 + kb) (rows [r_next, n_rows), at most 16), ready when that group starts.
template <class Fmt>
inline void prefetch_next_group(const uint8_t* wb, size_t w_stride, int64_t r_next, int64_t n_rows, int64_t k0, int kb) {
  const int64_t nn = n_rows - r_next < kRows ? n_rows - r_next : kRows;
  const size_t bytes = static_cast<size_t>(kb) * sizeof(typename Fmt::Block);
  for (int64_t r = 0; r < nn; ++r) {
    const char* p = reinterpret_cast<const char*>(wb + static_cast<size_t>(r_next + r) * w_stride) +
                    static_cast<size_t>(k0) * sizeof(typename Fmt::Block);
    for (size_t o = 0; o < bytes; o += 64) _mm_prefetch(p + o, _MM_HINT_T0);
  }
}

template <class Fmt>
void RowSource<Fmt>::prefetch_after(int64_t r0, int64_t k0, int kb) const {
  prefetch_next_group<Fmt>(wb, stride, r0 + kRows, n_rows, k0, kb);
}

// Activation terms of columns [0, np) of the panel for blocks [k0, k0 + kb).
template <class Fmt, class Act>
void prepare_activations(const uint8_t* x, size_t x_stride, int np, int64_t k0, int kb, Act& a) {
  using XB = typename Fmt::XBlock;
  for (int c = 0; c < np; ++c) {
    const XB* xb = reinterpret_cast<const XB*>(x + static_cast<size_t>(c) * x_stride) + k0;
    alignas(16) uint16_t h[kChunkBlocks] = {};
    for (int b = 0; b < kb; ++b) h[b] = xb[b].d;
    _mm256_store_ps(a.d[c], _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(h))));
    if constexpr (Fmt::kAffine) {
      for (int b = 0; b < kb; ++b) h[b] = xb[b].s;
      _mm256_store_ps(a.s[c], _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(h))));
      _mm256_store_si256(reinterpret_cast<__m256i*>(a.init[c]), _mm256_setzero_si256());
    } else {
      const __m256i init = _mm256_mullo_epi32(block_sums8(xb, kb), _mm256_set1_epi32(-Fmt::kOffset));
      _mm256_store_si256(reinterpret_cast<__m256i*>(a.init[c]), init);
    }
    if constexpr (Act::kHasQuants) {
      for (int b = 0; b < kb; ++b) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(a.q.v[b][c]),
                           _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb[b].qs)));
      }
    }
  }
}

// acc[c] += the chunk's dots for NC columns starting at panel column c0, 16 rows. One int32
// chain per column (8 vpdpbusd; the NC chains interleaved hide the latency), then the block's
// one FMA by dw * da per column. The chains' split does not matter (integer sums are exact);
// the FMAs' order is the one every tile-exact kernel follows.
template <class Fmt, int NC, class Act, class W>
__attribute__((always_inline)) inline void accumulate_chunk(const W& w, int kb, const Act& a, int c0, const uint8_t* x,
                                                            size_t x_stride, int64_t k0, __m512 (&acc)[NC]) {
  using XB = typename Fmt::XBlock;
  // Every loop over columns is unrolled so that the arrays live in registers (GCC otherwise kept
  // acc in memory, stored it every block and zeroed it with rep stos: a tenth of the tile's
  // time).
  // Where block b's quants of column c are: in the pack, or in the activation rows.
  const auto quants = [&](int b, int c) -> const int8_t* {
    if constexpr (Act::kHasQuants) {
      return a.q.v[b][c0 + c];
    } else {
      return (reinterpret_cast<const XB*>(x + static_cast<size_t>(c0 + c) * x_stride) + k0 + b)->qs;
    }
  };
  for (int b = 0; b < kb; ++b) {
    __m512i s[NC];
#pragma GCC unroll 8
    for (int c = 0; c < NC; ++c) s[c] = _mm512_set1_epi32(a.init[c0 + c][b]);
    __m512i q[8];
    const __m512 dw = w.block(b, q);
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
#pragma GCC unroll 8
      for (int c = 0; c < NC; ++c) s[c] = dpbusd_bcast(s[c], q[j], quants(b, c) + 4 * j);
    }
#pragma GCC unroll 8
    for (int c = 0; c < NC; ++c) {
      acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s[c]), _mm512_mul_ps(dw, _mm512_set1_ps(a.d[c0 + c][b])), acc[c]);
      if constexpr (Fmt::kAffine) acc[c] = _mm512_fmadd_ps(w.mins(b), _mm512_set1_ps(a.s[c0 + c][b]), acc[c]);
    }
  }
}

// y[c][r0 + r] (+)= the chunk's dots (accumulate_chunk) for NC columns starting at panel
// column c0. A zero mask loads zeros without touching y.
template <class Fmt, int NC, class Act, class W>
void micro_kernel(const W& w, int kb, const Act& a, int c0, const uint8_t* x, size_t x_stride,
                  int64_t k0, float* y, size_t y_stride, __mmask16 rmask, bool first) {
  const __mmask16 lmask = first ? __mmask16{0} : rmask;
  __m512 acc[NC];
#pragma GCC unroll 8
  for (int c = 0; c < NC; ++c) acc[c] = _mm512_maskz_loadu_ps(lmask, y + static_cast<size_t>(c0 + c) * y_stride);
  accumulate_chunk<Fmt, NC>(w, kb, a, c0, x, x_stride, k0, acc);
#pragma GCC unroll 8
  for (int c = 0; c < NC; ++c) _mm512_mask_storeu_ps(y + static_cast<size_t>(c0 + c) * y_stride, rmask, acc[c]);
}

// One 16-row group's whole K for NC columns (NC <= kMaxCols) from a source read in place (the
// x16 layout), the sums in registers from the first chunk to the last: stored to y once. (A
// micro-kernel call per chunk stored them and loaded them back at the next chunk; y's columns
// lie an output row apart, the masked reload waited on the masked store, and those loads took
// a fifth of an 8-column GEMM's samples.) Same operations in the same order as micro_kernel
// chunk after chunk, so the same bits.
template <class Fmt, int NC, class Src, class Act>
void group_kernel(const Src& src, const typename Src::Group& g, int64_t nb, int64_t n_chunks, const Act* fa, int c0,
                  const uint8_t* x, size_t x_stride, float* y, size_t y_stride, __mmask16 rmask) {
  __m512 acc[NC];
#pragma GCC unroll 8
  for (int c = 0; c < NC; ++c) acc[c] = _mm512_setzero_ps();
  for (int64_t ch = 0; ch < n_chunks; ++ch) {
    const int64_t k0 = ch * kChunkBlocks;
    const int kb = static_cast<int>(nb - k0 < kChunkBlocks ? nb - k0 : kChunkBlocks);
    accumulate_chunk<Fmt, NC>(src.direct(g, k0), kb, fa[ch], c0, x, x_stride, k0, acc);
  }
#pragma GCC unroll 8
  for (int c = 0; c < NC; ++c) _mm512_mask_storeu_ps(y + static_cast<size_t>(c0 + c) * y_stride, rmask, acc[c]);
}

template <class Fmt, int NC, class Src, class Act>
void group_dispatch(int nc, const Src& src, const typename Src::Group& g, int64_t nb, int64_t n_chunks, const Act* fa,
                    int c0, const uint8_t* x, size_t x_stride, float* y, size_t y_stride, __mmask16 rmask) {
  if constexpr (NC > 0) {
    if (nc == NC) return group_kernel<Fmt, NC>(src, g, nb, n_chunks, fa, c0, x, x_stride, y, y_stride, rmask);
    return group_dispatch<Fmt, NC - 1>(nc, src, g, nb, n_chunks, fa, c0, x, x_stride, y, y_stride, rmask);
  }
}

template <class Fmt, int NC, class Act, class W>
void micro_dispatch(int nc, const W& w, int kb, const Act& a, int c0, const uint8_t* x, size_t x_stride,
                    int64_t k0, float* y, size_t y_stride, __mmask16 rmask, bool first) {
  if constexpr (NC > 0) {
    if (nc == NC) return micro_kernel<Fmt, NC, Act, W>(w, kb, a, c0, x, x_stride, k0, y, y_stride, rmask, first);
    return micro_dispatch<Fmt, NC - 1, Act, W>(nc, w, kb, a, c0, x, x_stride, k0, y, y_stride, rmask, first);
  }
}

// Few columns (n_cols <= NC, a multiple of kMaxCols): one 16-row group walks all of K, so the
// activation terms of every chunk are computed up front and shared by all row groups (per group
// they were ~20% of the work). A source read in place (x16) goes through group_kernel, the row
// group's whole K per kMaxCols columns; GGUF rows are unpacked a chunk at a time, with one
// micro-kernel call per chunk and kMaxCols columns. The pack has room for NC columns: 8 keep the
// terms of one call close together (a 16-column pack made 2..8 columns ~10% slower).
template <class Fmt, class Src, int NC>
void few_columns(const Src& src, int64_t nb, int64_t n_chunks, int64_t n_rows, int64_t n_cols, const uint8_t* xb,
                 size_t x_stride, float* y, size_t y_stride) {
  alignas(64) WeightPack wp;
  alignas(64) ActTerms<NC, false> fa[kFewActMaxChunks];
  const int np = static_cast<int>(n_cols);
  for (int64_t ch = 0; ch < n_chunks; ++ch) {
    const int64_t k0 = ch * kChunkBlocks;
    prepare_activations<Fmt>(xb, x_stride, np, k0, static_cast<int>(nb - k0 < kChunkBlocks ? nb - k0 : kChunkBlocks), fa[ch]);
  }
  // The column groups of one chunk: with NC == kMaxCols one, starting at column 0.
  auto groups = [&](auto&& call) {
    if constexpr (NC == kMaxCols) {
      call(np, 0);
    } else {
      for (int c0 = 0; c0 < np; c0 += kMaxCols) call(np - c0 < kMaxCols ? np - c0 : kMaxCols, c0);
    }
  };
  for (int64_t r0 = 0; r0 < n_rows; r0 += kRows) {
    const int nr = static_cast<int>(n_rows - r0 < kRows ? n_rows - r0 : kRows);
    const typename Src::Group g = src.group(r0, nr);
    const __mmask16 rmask = static_cast<__mmask16>((1u << nr) - 1);
    if constexpr (Src::kOneStream) {
      // Per column group, the row group's whole K with the sums in registers; the blocks come
      // straight into registers (X16Weights also requests the stream ahead; a second column
      // group finds them in L1 or L2).
      groups([&](int nc, int c0) {
        group_dispatch<Fmt, kMaxCols>(nc, src, g, nb, n_chunks, fa, c0, xb, x_stride, y + r0, y_stride, rmask);
      });
    } else {
      for (int64_t ch = 0; ch < n_chunks; ++ch) {
        const int64_t k0 = ch * kChunkBlocks;
        const int kb = static_cast<int>(nb - k0 < kChunkBlocks ? nb - k0 : kChunkBlocks);
        src.prefetch_after(r0, k0, kb);
        for (int b = 0; b < kb; ++b) src.unpack(g, k0 + b, wp, b);
        groups([&](int nc, int c0) {
          micro_dispatch<Fmt, kMaxCols>(nc, PackWeights{wp}, kb, fa[ch], c0, xb, x_stride, k0, y + r0, y_stride, rmask,
                                        k0 == 0);
        });
      }
    }
  }
}

template <class Fmt, class Src>
void gemm_tile(const Src& src, int64_t n, int64_t n_rows, int64_t n_cols, const void* x, size_t x_stride, float* y,
               size_t y_stride) {
  const int64_t nb = n / kQK;
  const uint8_t* xb = static_cast<const uint8_t*>(x);
  const int64_t n_chunks = (nb + kChunkBlocks - 1) / kChunkBlocks;
  if (n_chunks <= kFewActMaxChunks && n_cols <= kFewMaxCols) {
    if (n_cols <= kMaxCols) {
      few_columns<Fmt, Src, kMaxCols>(src, nb, n_chunks, n_rows, n_cols, xb, x_stride, y, y_stride);
    } else {
      few_columns<Fmt, Src, kFewMaxCols>(src, nb, n_chunks, n_rows, n_cols, xb, x_stride, y, y_stride);
    }
    return;
  }
  alignas(64) WeightPack wp;
  alignas(64) ActPack ap;
  alignas(64) float ybuf[kRowBlock / kRows][kPanel][kRows];
  for (int64_t p0 = 0; p0 < n_cols; p0 += kPanel) {
    const int np = static_cast<int>(n_cols - p0 < kPanel ? n_cols - p0 : kPanel);
    const uint8_t* xp = xb + static_cast<size_t>(p0) * x_stride;
    float* yp = y + static_cast<size_t>(p0) * y_stride;
    // Row blocks keep the panel's partial outputs (kRowBlock x kPanel floats) near L1 while K
    // is walked; the activation terms of a chunk are shared by the block's row groups. The
    // partial sums live in ybuf, [row group][column][16 rows], and reach y once the block's K
    // is done: y's columns are a whole output row apart (often a multiple of 4 KiB), so every
    // column of a row group fell in one L1 set and the micro-kernel waited on its loads.
    const int64_t row_block = np <= kMaxCols ? kRows : kRowBlock;
    for (int64_t rb0 = 0; rb0 < n_rows; rb0 += row_block) {
      const int64_t rb1 = n_rows - rb0 < row_block ? n_rows : rb0 + row_block;
      for (int64_t k0 = 0; k0 < nb; k0 += kChunkBlocks) {
        const int kb = static_cast<int>(nb - k0 < kChunkBlocks ? nb - k0 : kChunkBlocks);
        prepare_activations<Fmt>(xp, x_stride, np, k0, kb, ap);
        for (int64_t r0 = rb0; r0 < rb1; r0 += kRows) {
          const int nr = static_cast<int>(rb1 - r0 < kRows ? rb1 - r0 : kRows);
          const typename Src::Group g = src.group(r0, nr);
          if (row_block == kRows || Src::kOneStream) src.prefetch_after(r0, k0, kb);
          for (int b = 0; b < kb; ++b) src.unpack(g, k0 + b, wp, b);
          const __mmask16 rmask = static_cast<__mmask16>((1u << nr) - 1);
          float* yg = ybuf[(r0 - rb0) / kRows][0];
          for (int c0 = 0; c0 < np; c0 += kMaxCols) {
            const int nc = np - c0 < kMaxCols ? np - c0 : kMaxCols;
            micro_dispatch<Fmt, kMaxCols>(nc, PackWeights{wp}, kb, ap, c0, xp, x_stride, k0, yg, kRows, rmask, k0 == 0);
          }
        }
      }
      for (int64_t r0 = rb0; r0 < rb1; r0 += kRows) {
        const int nr = static_cast<int>(rb1 - r0 < kRows ? rb1 - r0 : kRows);
        const __mmask16 rmask = static_cast<__mmask16>((1u << nr) - 1);
        for (int c = 0; c < np; ++c) {
          _mm512_mask_storeu_ps(yp + static_cast<size_t>(c) * y_stride + r0, rmask,
                                _mm512_load_ps(ybuf[(r0 - rb0) / kRows][c]));
        }
      }
    }
  }
}

template <class Fmt>
void gemm_tile_rows(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                    size_t x_stride, float* y, size_t y_stride) {
  const RowSource<Fmt> src{static_cast<const uint8_t*>(w), w_stride, n_rows};
  gemm_tile<Fmt>(src, n, n_rows, n_cols, x, x_stride, y, y_stride);
}

template <class Fmt>
void gemm_tile_x16(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride, const void* x,
                   size_t x_stride, float* y, size_t y_stride) {
  const X16Source<Fmt> src{static_cast<const uint8_t*>(w), w_stride, n / kQK};
  gemm_tile<Fmt>(src, n, n_rows, n_cols, x, x_stride, y, y_stride);
}

// One column over the x16 layout: micro_kernel<Fmt, 1>'s operations on each block, in the same
// order (the block's exact integer sum, here in two chains, then one FMA by dw * da), with the
// quants unpacked into registers instead of a WeightPack, so every element has the tile's bits.
// kPrefetchStep 0: the weights are read in order with no prefetch requests (see
// kX16PrefetchAhead; what Zen 4 streams fastest). Otherwise each block also requests, into L2,
// the stream kX16PrefetchAhead bytes ahead, one request per kPrefetchStep bytes. On Intel (Xeon,
// model 207, 2 vCPUs) a request per line (64) streams closest to the read probe. tiny1b tg128,
// alternating binaries, % of the read bandwidth probed in the same run:
//   2 threads, Q4_0: 77.8/77.6/72.8 with every other line (128) -> 87.4/94.7/83.6;
//             Q8_0: 85.4/89.4 with no requests -> 96.8/93.4;
//   1 thread,  Q4_0: 80.0/68.8/76.6 -> 89.6/87.6/87.7; Q8_0: 83.5/83.8 -> 97.4/91.6.
// (Every other line had been ~25% faster than none in the 1-thread kernel benchmark,
// gemv_x16 q4_0 5632x2048 from DRAM; 2 or 6 KiB ahead instead of 4 did no better in the engine.)
template <class Fmt, size_t kPrefetchStep>
void gemv_x16(int64_t n, int64_t n_rows, const void* w, size_t group_bytes, const void* xv, float* y) {
  static_assert(!Fmt::kAffine);
  using XB = typename Fmt::XBlock;
  using Block = X16Block<Fmt::kX16Vectors>;
  const int64_t nb = n / kQK;
  const int64_t n_chunks = (nb + kChunkBlocks - 1) / kChunkBlocks;
  const XB* x = static_cast<const XB*>(xv);
  const uint8_t* wb = static_cast<const uint8_t*>(w);
  // The activation terms of every chunk, computed once per call as the tile computes them; K
  // past kFewActMaxChunks chunks is taken in segments, y holding the sums in between (a float
  // stored and reloaded is unchanged, as in the tile).
  alignas(64) ActTerms<1, false> fa[kFewActMaxChunks];
  for (int64_t s0 = 0; s0 < n_chunks; s0 += kFewActMaxChunks) {
    const int64_t s1 = n_chunks - s0 < kFewActMaxChunks ? n_chunks : s0 + kFewActMaxChunks;
    for (int64_t ch = s0; ch < s1; ++ch) {
      const int64_t k0 = ch * kChunkBlocks;
      prepare_activations<Fmt>(static_cast<const uint8_t*>(xv), 0, 1, k0,
                               static_cast<int>(nb - k0 < kChunkBlocks ? nb - k0 : kChunkBlocks), fa[ch - s0]);
    }
    for (int64_t r0 = 0; r0 < n_rows; r0 += kRows) {
      const int nr = static_cast<int>(n_rows - r0 < kRows ? n_rows - r0 : kRows);
      const __mmask16 rmask = static_cast<__mmask16>((1u << nr) - 1);
      const uint8_t* g = wb + static_cast<size_t>(r0 / kRows) * group_bytes;
      __m512 acc = s0 == 0 ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(rmask, y + r0);
      const char* pf = reinterpret_cast<const char*>(g) + static_cast<size_t>(s0 * kChunkBlocks) * Block::kBlockBytes +
                       kX16PrefetchAhead;
      for (int64_t ch = s0; ch < s1; ++ch) {
        const int64_t k0 = ch * kChunkBlocks;
        const int kb = static_cast<int>(nb - k0 < kChunkBlocks ? nb - k0 : kChunkBlocks);
        const ActTerms<1, false>& a = fa[ch - s0];
        for (int b = 0; b < kb; ++b) {
          if constexpr (kPrefetchStep != 0) {
            for (size_t o = 0; o < Block::kBlockBytes; o += kPrefetchStep) _mm_prefetch(pf + o, _MM_HINT_T2);
            pf += Block::kBlockBytes;
          }
          const Block at(g, nb, k0 + b);
          __m512i q[8];
          Fmt::quants_x16(at.q, q);
          const int8_t* xq = x[k0 + b].qs;
          __m512i e = _mm512_set1_epi32(a.init[0][b]), o = _mm512_setzero_si512();
          for (int j = 0; j < 8; j += 2) {
            e = dpbusd_bcast(e, q[j], xq + 4 * j);
            o = dpbusd_bcast(o, q[j + 1], xq + 4 * j + 4);
          }
          const __m512 dw = x16_scales(at.sc);
          acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(e, o)), _mm512_mul_ps(dw, _mm512_set1_ps(a.d[0][b])),
                                acc);
        }
      }
      _mm512_mask_storeu_ps(y + r0, rmask, acc);
    }
  }
}

}  // namespace

void q4_0_gemm_tile_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                           const void* x, size_t x_stride, float* y, size_t y_stride) {
  gemm_tile_rows<FmtQ4_0>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}
void q4_1_gemm_tile_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                           const void* x, size_t x_stride, float* y, size_t y_stride) {
  gemm_tile_rows<FmtQ4_1>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}
void q5_0_gemm_tile_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                           const void* x, size_t x_stride, float* y, size_t y_stride) {
  gemm_tile_rows<FmtQ5_0>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}
void q5_1_gemm_tile_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                           const void* x, size_t x_stride, float* y, size_t y_stride) {
  gemm_tile_rows<FmtQ5_1>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}
void q8_0_gemm_tile_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                           const void* x, size_t x_stride, float* y, size_t y_stride) {
  gemm_tile_rows<FmtQ8_0>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}

void q4_0_gemm_tile_x16_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                               const void* x, size_t x_stride, float* y, size_t y_stride) {
  gemm_tile_x16<FmtQ4_0>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}
void q8_0_gemm_tile_x16_avx512(int64_t n, int64_t n_rows, int64_t n_cols, const void* w, size_t w_stride,
                               const void* x, size_t x_stride, float* y, size_t y_stride) {
  gemm_tile_x16<FmtQ8_0>(n, n_rows, n_cols, w, w_stride, x, x_stride, y, y_stride);
}
void q4_0_gemv_x16_avx512(int64_t n, int64_t n_rows, const void* w, size_t w_stride, const void* x, float* y) {
  gemv_x16<FmtQ4_0, 0>(n, n_rows, w, w_stride, x, y);
}
void q4_0_gemv_x16_prefetch_avx512(int64_t n, int64_t n_rows, const void* w, size_t w_stride, const void* x,
                                   float* y) {
  gemv_x16<FmtQ4_0, 64>(n, n_rows, w, w_stride, x, y);
}
void q8_0_gemv_x16_avx512(int64_t n, int64_t n_rows, const void* w, size_t w_stride, const void* x, float* y) {
  gemv_x16<FmtQ8_0, 0>(n, n_rows, w, w_stride, x, y);
}
void q8_0_gemv_x16_prefetch_avx512(int64_t n, int64_t n_rows, const void* w, size_t w_stride, const void* x,
                                   float* y) {
  gemv_x16<FmtQ8_0, 64>(n, n_rows, w, w_stride, x, y);
}

}  // namespace edgeinfer
