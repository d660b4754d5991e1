#pragma once
// The x16 weight layout: a load-time repacking of a Q4_0, Q8_0, Q4_K, Q6_K or F16 matrix in which
// the kernels of wide SIMD paths read 16 rows side by side from one contiguous stream. Facts of
// the format:
//   - rows are taken in groups of 16 (the last group padded with zero rows), each group
//     group_bytes long, groups in row order;
//   - a Q4_0/Q8_0 group is a sequence of chunks of 8 blocks (32 elements each; the last chunk
//     may have fewer), so that a kernel walking K reads the group front to back as one stream.
//     A chunk of kb blocks starting at block c0 begins at byte c0 * 16 * (Q + 2), where Q is the
//     type's quant bytes per block (16 for Q4_0, 32 for Q8_0). It holds the quants of its
//     blocks and then their scales: the quants of block c0 + i at + i * 16 * Q, as Q / 4
//     vectors of 64 bytes, byte 4r + k of vector j being byte 4j + k of row r's quants (the 16
//     rows' dword j in one vector); the scales of block c0 + i at + kb * 16 * Q + i * 32, the
//     f16 scale of row r at + 2r;
//   - the quants and scales are the GGUF blocks' own bytes, moved, not changed: the size is the
//     same as the rows' (plus the padding of a last partial group).
// Q6_K has its own group form, super-block by super-block (256 elements), each kX16Q6KBytes
// long: the 16 rows' ql as 32 vectors of 64 bytes (byte 4r + k of vector j = byte 4j + k of
// row r's ql), then their qh as 16 such vectors, their scales as 4, the 16 f16 d (row r at
// + 2r), and 32 zero bytes that keep every super-block on a 64-byte boundary (1% over the rows).
// Q4_K has the same kind of group form, each super-block kX16Q4KBytes long: the 16 rows' first
// dword (f16 d in the low half, f16 dmin in the high half) as one vector, their 12 scale bytes
// as 3 vectors, their qs as 32 vectors (byte 4r + k of vector j of a field = byte 4j + k of
// that field in row r). That is every dword of the GGUF block in its own order, transposed:
// vector j of a super-block holds dword j of the 16 rows' blocks. 16 blocks of 144 bytes are a
// whole number of 64-byte vectors, so there is no padding and the size is the rows'.
// F16 has the simplest group form: element k of the 16 rows side by side, k = 0, 1, ... n_in - 1,
// so element k of row r (of the group) is the f16 at + 32k + 2r. Any row length fits; the size is
// the rows' (plus the padding of a last partial group).
// The rows stay where they were; a matrix that has an x16 copy is still readable row by row.
#include <cstddef>
#include <cstdint>

#include "quant/tensor_type.h"

namespace edgeinfer {

inline constexpr int kX16Rows = 16;
inline constexpr int kX16ChunkBlocks = 8;
// Bytes of one Q6_K super-block of a group: 16 rows of 210 bytes and 32 bytes of padding.
inline constexpr size_t kX16Q6KBytes = 16 * 210 + 32;
// Bytes of one Q4_K super-block of a group: 16 rows of 144 bytes.
inline constexpr size_t kX16Q4KBytes = 16 * 144;

// Whether `t` has an x16 layout (Q4_0, Q8_0, Q4_K, Q6_K, F16).
bool x16_supported(TensorType t);
// Whether rows of n_in elements of `t` can be repacked: a supported type and whole blocks.
bool x16_row_fits(TensorType t, int64_t n_in);
// Bytes of one group of 16 rows of n_in elements; n_in must be a whole number of the type's
// blocks (32 elements; 256 for Q4_K and Q6_K; F16: any n_in >= 1).
size_t x16_group_bytes(TensorType t, int64_t n_in);
// Bytes of the whole repacked matrix of n_out rows.
size_t x16_matrix_bytes(TensorType t, int64_t n_in, int64_t n_out);
// Repacks n_out rows of n_in elements (row r at rows + r * row_bytes) into dst
// (x16_matrix_bytes of it). Throws Error for a type without the layout or a partial block.
void x16_pack(TensorType t, int64_t n_in, int64_t n_out, const uint8_t* rows, size_t row_bytes, uint8_t* dst);
// The same for groups [g0, g1) only (rows [16 g0, 16 g1)), so that a matrix can be packed by
// several threads; dst is still the whole matrix's buffer.
void x16_pack_groups(TensorType t, int64_t n_in, int64_t n_out, const uint8_t* rows, size_t row_bytes, uint8_t* dst,
                     int64_t g0, int64_t g1);
// Row `row` of a repacked matrix back in GGUF row form (row_bytes of it): the inverse of
// x16_pack, for tests and checks.
void x16_unpack_row(TensorType t, int64_t n_in, const uint8_t* packed, int64_t row, uint8_t* out);

}  // namespace edgeinfer
