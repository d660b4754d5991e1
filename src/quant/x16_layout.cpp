#include "quant/x16_layout.h"

#include <cstddef>
#include <cstring>
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

// --- Q6_K: super-block by super-block ------------------------------------------------------
// The fields moved as 64-byte vectors of 16 rows' dwords, in the order the group stores them,
// then the f16 d.
struct K6Field {
  size_t block_offset;  // in BlockQ6_K
  size_t dwords;        // per row
};
constexpr K6Field kK6Fields[] = {{offsetof(BlockQ6_K, ql), sizeof(BlockQ6_K::ql) / 4},
                                 {offsetof(BlockQ6_K, qh), sizeof(BlockQ6_K::qh) / 4},
                                 {offsetof(BlockQ6_K, scales), sizeof(BlockQ6_K::scales) / 4}};
constexpr size_t kK6DOffset = 16 * (sizeof(BlockQ6_K) - sizeof(BlockQ6_K::d));
static_assert(kK6DOffset + 32 + 32 == kX16Q6KBytes && kX16Q6KBytes % 64 == 0);
static_assert(sizeof(BlockQ6_K) == 210);

int64_t k6_blocks_or_throw(int64_t n_in) {
  if (n_in <= 0 || n_in % kQK_K != 0) {
    throw Error("x16 layout: row of " + std::to_string(n_in) + " elements is not a whole number of q6_K super-blocks");
  }
  return n_in / kQK_K;
}

// Calls move(group_offset, block_offset, bytes) for every piece of row r's block within its
// super-block of a group.
template <class F>
void k6_pieces(int r, F&& move) {
  size_t at = 0;
  for (const K6Field& f : kK6Fields) {
    for (size_t j = 0; j < f.dwords; ++j) move(at + j * 64 + 4 * static_cast<size_t>(r), f.block_offset + 4 * j, size_t{4});
    at += f.dwords * 64;
  }
  move(kK6DOffset + 2 * static_cast<size_t>(r), offsetof(BlockQ6_K, d), size_t{2});
}

}  // namespace

bool x16_supported(TensorType t) { return t == TensorType::Q4_0 || t == TensorType::Q8_0 || t == TensorType::Q6_K; }

bool x16_row_fits(TensorType t, int64_t n_in) {
  if (!x16_supported(t) || n_in <= 0) return false;
  return n_in % (t == TensorType::Q6_K ? kQK_K : kQK) == 0;
}

size_t x16_group_bytes(TensorType t, int64_t n_in) {
  if (t == TensorType::Q6_K) return static_cast<size_t>(k6_blocks_or_throw(n_in)) * kX16Q6KBytes;
  const X16Shape s = shape_or_throw(t, n_in);
  return static_cast<size_t>(n_in / kQK) * kX16Rows * s.block_bytes;
}

size_t x16_matrix_bytes(TensorType t, int64_t n_in, int64_t n_out) {
  const int64_t groups = (n_out + kX16Rows - 1) / kX16Rows;
  return static_cast<size_t>(groups) * x16_group_bytes(t, n_in);
}

void x16_pack_groups(TensorType t, int64_t n_in, int64_t n_out, const uint8_t* rows, size_t row_bytes, uint8_t* dst,
                     int64_t g0, int64_t g1) {
  if (t == TensorType::Q6_K) {
    const int64_t nb = k6_blocks_or_throw(n_in);
    if (row_bytes < static_cast<size_t>(nb) * sizeof(BlockQ6_K)) throw Error("x16 layout: rows shorter than their blocks");
    const size_t gb = x16_group_bytes(t, n_in);
    const BlockQ6_K zero{};  // padding rows
    for (int64_t g = g0; g < g1; ++g) {
      uint8_t* out = dst + static_cast<size_t>(g) * gb;
      for (int64_t b = 0; b < nb; ++b) {
        uint8_t* sb = out + static_cast<size_t>(b) * kX16Q6KBytes;
        for (int r = 0; r < kX16Rows; ++r) {
          const int64_t row = g * kX16Rows + r;
          const uint8_t* blk = row < n_out ? rows + static_cast<size_t>(row) * row_bytes + static_cast<size_t>(b) * sizeof(BlockQ6_K)
                                           : reinterpret_cast<const uint8_t*>(&zero);
          k6_pieces(r, [&](size_t go, size_t bo, size_t n) { std::memcpy(sb + go, blk + bo, n); });
        }
        std::memset(sb + kK6DOffset + 32, 0, 32);
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
  if (t == TensorType::Q6_K) {
    const int64_t nb = k6_blocks_or_throw(n_in);
    const uint8_t* g = packed + static_cast<size_t>(row / kX16Rows) * x16_group_bytes(t, n_in);
    for (int64_t b = 0; b < nb; ++b) {
      const uint8_t* sb = g + static_cast<size_t>(b) * kX16Q6KBytes;
      uint8_t* blk = out + static_cast<size_t>(b) * sizeof(BlockQ6_K);
      k6_pieces(static_cast<int>(row % kX16Rows), [&](size_t go, size_t bo, size_t n) { std::memcpy(blk + bo, sb + go, n); });
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
