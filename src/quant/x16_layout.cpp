#include "quant/x16_layout.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <span>
#include <string>

#include "quant/blocks.h"
#include "util/error.h"

namespace edgeinfer {

namespace {

struct X16Shape {
  size_t block_bytes;  // GGUF block: f16 scale then quants
  size_t quant_bytes;  // quants per block
};

X16Shape shape_or_throw(TensorType t, int64_t n_in) {
  X16Shape s{};
  if (t == TensorType::Q4_0) {
    s = {sizeof(BlockQ4_0), sizeof(BlockQ4_0::qs)};
  } else if (t == TensorType::Q8_0) {
    s = {sizeof(BlockQ8_0), sizeof(BlockQ8_0::qs)};
  } else {
    throw Error("x16 layout: no layout for " + std::string(tensor_type_name(t)));
  }
  if (n_in <= 0 || n_in % kQK != 0) {
    throw Error("x16 layout: row of " + std::to_string(n_in) + " elements is not a whole number of blocks");
  }
  return s;
}

// Both types put the f16 scale first in the block and the quants right after it.
constexpr size_t kScaleOffset = 0;
constexpr size_t kQuantOffset = 2;
static_assert(offsetof(BlockQ4_0, d) == kScaleOffset && offsetof(BlockQ4_0, qs) == kQuantOffset);
static_assert(offsetof(BlockQ8_0, d) == kScaleOffset && offsetof(BlockQ8_0, qs) == kQuantOffset);

// Byte offsets within a group of block b's quant byte q of row r, and of its scale.
size_t chunk_at(const X16Shape& s, int64_t b) {
  return static_cast<size_t>(b / kX16ChunkBlocks * kX16ChunkBlocks) * kX16Rows * s.block_bytes;
}
size_t quant_at(const X16Shape& s, int64_t b, int r, size_t q) {
  return chunk_at(s, b) + static_cast<size_t>(b % kX16ChunkBlocks) * kX16Rows * s.quant_bytes + (q / 4) * 64 +
         static_cast<size_t>(r) * 4 + q % 4;
}
size_t scale_at(const X16Shape& s, int64_t nb, int64_t b, int r) {
  const int64_t c0 = b / kX16ChunkBlocks * kX16ChunkBlocks;
  const int64_t kb = nb - c0 < kX16ChunkBlocks ? nb - c0 : kX16ChunkBlocks;
  return chunk_at(s, b) + static_cast<size_t>(kb) * kX16Rows * s.quant_bytes +
         static_cast<size_t>(b - c0) * 2 * kX16Rows + static_cast<size_t>(r) * 2;
}

// --- K-quants: super-block by super-block ------------------------------------------------
// A type's fields moved as 64-byte vectors of 16 rows' dwords, in the order the group stores
// them, then (Q6_K) the 16 f16 d, then zero padding up to the super-block's size.
struct KField {
  size_t block_offset;  // in the GGUF block
  size_t dwords;        // per row
};
struct KForm {
  std::span<const KField> fields;
  size_t block_bytes;  // GGUF block
  size_t d_block;      // offset of an f16 stored after the fields (row r at + 2r), or kNoD
  size_t sb_bytes;     // one super-block of a group
};
constexpr size_t kNoD = ~size_t{0};

constexpr KField kK6Fields[] = {{offsetof(BlockQ6_K, ql), sizeof(BlockQ6_K::ql) / 4},
                                {offsetof(BlockQ6_K, qh), sizeof(BlockQ6_K::qh) / 4},
                                {offsetof(BlockQ6_K, scales), sizeof(BlockQ6_K::scales) / 4}};
constexpr size_t kK6DOffset = 16 * (sizeof(BlockQ6_K) - sizeof(BlockQ6_K::d));
static_assert(kK6DOffset + 32 + 32 == kX16Q6KBytes && kX16Q6KBytes % 64 == 0);
static_assert(sizeof(BlockQ6_K) == 210);

// Q4_K's block is 36 whole dwords (d|dmin, 3 of scales, 32 of qs): all of it transposes.
constexpr KField kK4Fields[] = {{offsetof(BlockQ4_K, d), 1},
                                {offsetof(BlockQ4_K, scales), sizeof(BlockQ4_K::scales) / 4},
                                {offsetof(BlockQ4_K, qs), sizeof(BlockQ4_K::qs) / 4}};
static_assert(offsetof(BlockQ4_K, dmin) == 2 && offsetof(BlockQ4_K, scales) == 4 && offsetof(BlockQ4_K, qs) == 16);
static_assert(sizeof(BlockQ4_K) == 144 && 16 * sizeof(BlockQ4_K) == kX16Q4KBytes && kX16Q4KBytes % 64 == 0);

// The K-quant group form of t, or nullptr for the 32-element types.
const KForm* k_form(TensorType t) {
  static constexpr KForm kQ6K{kK6Fields, sizeof(BlockQ6_K), offsetof(BlockQ6_K, d), kX16Q6KBytes};
  static constexpr KForm kQ4K{kK4Fields, sizeof(BlockQ4_K), kNoD, kX16Q4KBytes};
  if (t == TensorType::Q6_K) return &kQ6K;
  if (t == TensorType::Q4_K) return &kQ4K;
  return nullptr;
}

int64_t k_blocks_or_throw(TensorType t, int64_t n_in) {
  if (n_in <= 0 || n_in % kQK_K != 0) {
    throw Error("x16 layout: row of " + std::to_string(n_in) + " elements is not a whole number of " +
                std::string(tensor_type_name(t)) + " super-blocks");
  }
  return n_in / kQK_K;
}

// Calls move(group_offset, block_offset, bytes) for every piece of row r's block within its
// super-block of a group; returns where the moved bytes end (the padding starts).
template <class F>
size_t k_pieces(const KForm& f, int r, F&& move) {
  size_t at = 0;
  for (const KField& fl : f.fields) {
    for (size_t j = 0; j < fl.dwords; ++j) move(at + j * 64 + 4 * static_cast<size_t>(r), fl.block_offset + 4 * j, size_t{4});
    at += fl.dwords * 64;
  }
  if (f.d_block != kNoD) {
    move(at + 2 * static_cast<size_t>(r), f.d_block, size_t{2});
    at += 2 * kX16Rows;
  }
  return at;
}

// --- F16: element by element ----------------------------------------------------------
size_t f16_group_bytes_or_throw(int64_t n_in) {
  if (n_in <= 0) throw Error("x16 layout: F16 rows of " + std::to_string(n_in) + " elements");
  return static_cast<size_t>(n_in) * kX16Rows * sizeof(uint16_t);
}

// Groups [g0, g1) of an F16 matrix: K in runs of kRun elements, so that the 16 source runs
// (2 KiB) and the run of the group they fill (2 KiB) stay in L1 while it is transposed.
void f16_pack_groups(int64_t n_in, int64_t n_out, const uint8_t* rows, size_t row_bytes, uint8_t* dst, int64_t g0,
                     int64_t g1) {
  if (row_bytes < static_cast<size_t>(n_in) * sizeof(uint16_t)) throw Error("x16 layout: rows shorter than their elements");
  const size_t gb = f16_group_bytes_or_throw(n_in);
  constexpr int64_t kRun = 64;
  for (int64_t g = g0; g < g1; ++g) {
    uint8_t* out = dst + static_cast<size_t>(g) * gb;
    const int real = static_cast<int>(std::min<int64_t>(kX16Rows, n_out - g * kX16Rows));  // the rest pad
    for (int64_t k0 = 0; k0 < n_in; k0 += kRun) {
      const int64_t len = std::min(kRun, n_in - k0);
      uint16_t run[kRun][kX16Rows] = {};
      for (int r = 0; r < real; ++r) {
        uint16_t src[kRun];
        std::memcpy(src, rows + static_cast<size_t>(g * kX16Rows + r) * row_bytes + static_cast<size_t>(k0) * 2,
                    static_cast<size_t>(len) * 2);
        for (int64_t k = 0; k < len; ++k) run[k][r] = src[k];
      }
      std::memcpy(out + static_cast<size_t>(k0) * kX16Rows * 2, run, static_cast<size_t>(len) * kX16Rows * 2);
    }
  }
}

}  // namespace

bool x16_supported(TensorType t) {
  return t == TensorType::Q4_0 || t == TensorType::Q8_0 || t == TensorType::F16 || k_form(t) != nullptr;
}

bool x16_row_fits(TensorType t, int64_t n_in) {
  if (!x16_supported(t) || n_in <= 0) return false;
  if (t == TensorType::F16) return true;
  return n_in % (k_form(t) ? kQK_K : kQK) == 0;
}

size_t x16_group_bytes(TensorType t, int64_t n_in) {
  if (t == TensorType::F16) return f16_group_bytes_or_throw(n_in);
  if (const KForm* f = k_form(t)) return static_cast<size_t>(k_blocks_or_throw(t, n_in)) * f->sb_bytes;
  const X16Shape s = shape_or_throw(t, n_in);
  return static_cast<size_t>(n_in / kQK) * kX16Rows * s.block_bytes;
}

size_t x16_matrix_bytes(TensorType t, int64_t n_in, int64_t n_out) {
  const int64_t groups = (n_out + kX16Rows - 1) / kX16Rows;
  return static_cast<size_t>(groups) * x16_group_bytes(t, n_in);
}

void x16_pack_groups(TensorType t, int64_t n_in, int64_t n_out, const uint8_t* rows, size_t row_bytes, uint8_t* dst,
                     int64_t g0, int64_t g1) {
  if (t == TensorType::F16) return f16_pack_groups(n_in, n_out, rows, row_bytes, dst, g0, g1);
  if (const KForm* f = k_form(t)) {
    const int64_t nb = k_blocks_or_throw(t, n_in);
    if (row_bytes < static_cast<size_t>(nb) * f->block_bytes) throw Error("x16 layout: rows shorter than their blocks");
    const size_t gb = x16_group_bytes(t, n_in);
    static const uint8_t kZeroBlock[sizeof(BlockQ6_K)] = {};  // padding rows (the largest block)
    static_assert(sizeof(BlockQ6_K) >= sizeof(BlockQ4_K));
    for (int64_t g = g0; g < g1; ++g) {
      uint8_t* out = dst + static_cast<size_t>(g) * gb;
      for (int64_t b = 0; b < nb; ++b) {
        uint8_t* sb = out + static_cast<size_t>(b) * f->sb_bytes;
        size_t end = 0;
        for (int r = 0; r < kX16Rows; ++r) {
          const int64_t row = g * kX16Rows + r;
          const uint8_t* blk = row < n_out ? rows + static_cast<size_t>(row) * row_bytes + static_cast<size_t>(b) * f->block_bytes
                                           : kZeroBlock;
          end = k_pieces(*f, r, [&](size_t go, size_t bo, size_t n) { std::memcpy(sb + go, blk + bo, n); });
        }
        std::memset(sb + end, 0, f->sb_bytes - end);
      }
    }
    return;
  }
  const X16Shape s = shape_or_throw(t, n_in);
  const int64_t nb = n_in / kQK;
  if (row_bytes < static_cast<size_t>(nb) * s.block_bytes) throw Error("x16 layout: rows shorter than their blocks");
  const size_t gb = x16_group_bytes(t, n_in);
  const size_t words = s.quant_bytes / 4;
  static const uint8_t kZeroBlock[sizeof(BlockQ8_0)] = {};
  for (int64_t g = g0; g < g1; ++g) {
    uint8_t* out = dst + static_cast<size_t>(g) * gb;
    const uint8_t* src[kX16Rows];
    size_t step[kX16Rows];  // padding rows read one zero block over and over
    for (int r = 0; r < kX16Rows; ++r) {
      const int64_t row = g * kX16Rows + r;
      src[r] = row < n_out ? rows + static_cast<size_t>(row) * row_bytes : kZeroBlock;
      step[r] = row < n_out ? s.block_bytes : 0;
    }
    // Written front to back: chunk by chunk, each chunk's quants then its scales.
    for (int64_t c0 = 0; c0 < nb; c0 += kX16ChunkBlocks) {
      const int64_t kb = nb - c0 < kX16ChunkBlocks ? nb - c0 : kX16ChunkBlocks;
      uint8_t* scales = out + static_cast<size_t>(kb) * kX16Rows * s.quant_bytes;
      for (int64_t i = 0; i < kb; ++i) {
        for (int r = 0; r < kX16Rows; ++r) {
          const uint8_t* blk = src[r] + static_cast<size_t>(c0 + i) * step[r];
          std::memcpy(scales + i * 2 * kX16Rows + 2 * r, blk + kScaleOffset, 2);
          for (size_t j = 0; j < words; ++j) std::memcpy(out + j * 64 + 4 * static_cast<size_t>(r), blk + kQuantOffset + 4 * j, 4);
        }
        out += kX16Rows * s.quant_bytes;
      }
      out = scales + static_cast<size_t>(kb) * 2 * kX16Rows;
    }
  }
}

void x16_pack(TensorType t, int64_t n_in, int64_t n_out, const uint8_t* rows, size_t row_bytes, uint8_t* dst) {
  x16_pack_groups(t, n_in, n_out, rows, row_bytes, dst, 0, (n_out + kX16Rows - 1) / kX16Rows);
}

void x16_unpack_row(TensorType t, int64_t n_in, const uint8_t* packed, int64_t row, uint8_t* out) {
  if (t == TensorType::F16) {
    const uint8_t* g = packed + static_cast<size_t>(row / kX16Rows) * f16_group_bytes_or_throw(n_in);
    for (int64_t k = 0; k < n_in; ++k) {
      std::memcpy(out + 2 * k, g + static_cast<size_t>(k * kX16Rows + row % kX16Rows) * 2, 2);
    }
    return;
  }
  if (const KForm* f = k_form(t)) {
    const int64_t nb = k_blocks_or_throw(t, n_in);
    const uint8_t* g = packed + static_cast<size_t>(row / kX16Rows) * x16_group_bytes(t, n_in);
    for (int64_t b = 0; b < nb; ++b) {
      const uint8_t* sb = g + static_cast<size_t>(b) * f->sb_bytes;
      uint8_t* blk = out + static_cast<size_t>(b) * f->block_bytes;
      k_pieces(*f, static_cast<int>(row % kX16Rows), [&](size_t go, size_t bo, size_t n) { std::memcpy(blk + bo, sb + go, n); });
    }
    return;
  }
  const X16Shape s = shape_or_throw(t, n_in);
  const int64_t nb = n_in / kQK;
  const uint8_t* g = packed + static_cast<size_t>(row / kX16Rows) * x16_group_bytes(t, n_in);
  const int r = static_cast<int>(row % kX16Rows);
  for (int64_t b = 0; b < nb; ++b) {
    uint8_t* blk = out + static_cast<size_t>(b) * s.block_bytes;
    std::memcpy(blk + kScaleOffset, g + scale_at(s, nb, b, r), 2);
    for (size_t q = 0; q < s.quant_bytes; q += 4) std::memcpy(blk + kQuantOffset + q, g + quant_at(s, b, r, q), 4);
  }
}

}  // namespace edgeinfer
