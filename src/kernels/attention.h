#pragma once
// Causal attention of one token's query heads over a sequence's paged KV rows, in one pass
// with an online softmax: the positions are taken in spans of whole cache blocks (at least 64
// positions, aligned to the span); per span the scores (the kernel table's dot product for the
// KV type, the query converted to that type's vec_dot_type first, as the reference engine does:
// f16 for an f16 cache), one softmax step (Kernels::softmax_step: the running maximum and
// denominator, the sum so far rescaled when the maximum moves), and the weighted sum of the
// span's V rows in f32; the sum is divided by the denominator at the end. Scratch does not grow
// with the context, and each cache block's K and V rows are read close together. The spans
// depend only on the block size, so a token's result does not depend on how it is batched.
#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/kernels.h"

namespace edgeinfer {

// Where one layer's K and V rows of a sequence live: position p is slot p % block_size of
// block block_table[p / block_size]; a block is block_stride bytes, a row row_bytes.
struct PagedKvView {
  const uint8_t* k_base = nullptr;
  const uint8_t* v_base = nullptr;
  size_t block_stride = 0;
  size_t row_bytes = 0;
  int32_t block_size = 0;
  TensorType type = TensorType::F16;
  const int32_t* block_table = nullptr;

  const uint8_t* k_row(int64_t pos) const {
    return k_base + block_table[pos / block_size] * block_stride + (pos % block_size) * row_bytes;
  }
  const uint8_t* v_row(int64_t pos) const {
    return v_base + block_table[pos / block_size] * block_stride + (pos % block_size) * row_bytes;
  }
};

struct AttentionShape {
  int64_t n_head;
  int64_t n_head_kv;
  int64_t head_dim;
  float scale;  // usually 1/sqrt(head_dim)
};

// Scratch floats one call of attend_head, or of attend_group with up to n_head / n_head_kv
// heads, needs for a cache of blocks of block_size positions (any context length).
size_t attention_scratch_floats(const AttentionShape& s, int64_t block_size);

// out[head][head_dim] for query head `head` of one token at position n_ctx - 1, attending over
// positions [0, n_ctx). q is that head's [head_dim] f32 values.
void attend_head(const Kernels& k, const PagedKvView& kv, const AttentionShape& s, int64_t head,
                 const float* q, int64_t n_ctx, float* out, float* scratch);

// attend_head for the n_group query heads head0 .. head0 + n_group - 1, which must share one KV
// head (GQA): q and out hold their [head_dim] values one after another. Each K and V row is
// read once for all of them where the kernel table has the group kernels for the cache type;
// every head's output is bit-identical to attend_head's.
void attend_group(const Kernels& k, const PagedKvView& kv, const AttentionShape& s, int64_t head0, int64_t n_group,
                  const float* q, int64_t n_ctx, float* out, float* scratch);

// One token's part in attend_tokens: the values of its query heads head0 .. head0 + n_group - 1
// (q, [n_group][head_dim]), where their outputs go (out, the same shape), its position + 1
// (n_ctx) and its sequence's block table.
struct AttnToken {
  const float* q = nullptr;
  float* out = nullptr;
  int64_t n_ctx = 0;
  const int32_t* block_table = nullptr;
};

// Scratch floats one attend_tokens call needs for up to n_tokens tokens over a cache of blocks
// of block_size positions (at least attention_scratch_floats).
size_t attention_tokens_scratch_floats(const AttentionShape& s, int64_t n_tokens, int64_t block_size);

// attend_group for several tokens at once (kv.block_table is ignored: each token brings its
// own): a cache block is read and converted once for all the neighbouring tokens in `toks`
// whose tables hold it at the same index (the tokens of a prompt chunk, sequences sharing a
// cached prefix), so list tokens that share blocks next to each other. Each token's output is
// bit-identical to attend_group's for it alone (the group kernels' per-row contract).
void attend_tokens(const Kernels& k, const PagedKvView& kv, const AttentionShape& s, int64_t head0, int64_t n_group,
                   std::span<const AttnToken> toks, float* scratch);

}  // namespace edgeinfer
