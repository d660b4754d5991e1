#pragma once
// The forward pass: one batch of new tokens from one or more sequences, through every layer,
// writing each token's K/V into the caller's paged KV storage and returning logits only for
// the rows asked for. One pass over the weights serves every token in the batch.
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/matmul.h"
#include "kv/kv_storage.h"
#include "model/forward_profile.h"
#include "model/model.h"
#include "util/thread_pool.h"

namespace edgeinfer {

// The new tokens of one sequence in a batch.
struct SeqBatch {
  std::span<const int32_t> tokens;
  // Position of tokens[0]: how many of this sequence's tokens are already in the KV cache.
  int64_t pos0 = 0;
  // Blocks of the sequence, covering positions [0, pos0 + tokens.size()).
  std::span<const int32_t> block_table;
  // Which of the new tokens need logits: none (a prompt chunk that does not end the prompt),
  // the last one (the next token is sampled from it), or all (speculative verification,
  // perplexity, reference comparisons).
  enum class Logits { None, Last, All };
  Logits logits = Logits::Last;
  // Tokens at positions >= decode_from were generated (fed back, or speculative drafts) and go
  // through the matmuls' decode kernel; earlier ones are prompt and go through the prefill
  // kernel, whatever else shares the batch (the two round differently; see kernels/matmul.h).
  // -1: an entry of one token is decoded, a longer one prefilled.
  int64_t decode_from = -1;
};

class ForwardPass {
 public:
  ForwardPass(const Model& model, const Kernels& kernels, ThreadPool& pool);

  // Runs the batch. Returns logits as [n_rows][n_vocab]: for each sequence in order, the rows
  // its `logits` mode asks for. The pointer stays valid until the next call.
  // Throws Error for out-of-range token ids or a block table too short for the positions.
  const float* forward(std::span<const SeqBatch> seqs, KvStorage& kv);
  int64_t n_logit_rows() const { return n_out_rows_; }
  // The last call's attention: wall time over all layers, and the positions its tokens attended
  // (each token's position + 1), so that callers can tell what context costs.
  double attention_seconds() const { return attention_seconds_; }
  int64_t attended_positions() const { return attended_positions_; }

  const Model& model() const { return model_; }
  ThreadPool& pool() { return pool_; }
  const Kernels& kernels() const { return kernels_; }

  // Attaches a per-op timer (nullptr detaches); see model/forward_profile.h.
  void set_profile(ForwardProfile* p) { profile_ = p; }

 private:
  // Per-token buffers for n_tokens, attention scratch for tasks of attn_tokens tokens.
  void reserve(int64_t n_tokens, int64_t block_size, int64_t attn_tokens);
  // Tokens one attention task takes at most, given the cache's block size (its scratch).
  int64_t attention_tokens(int64_t block_size) const;
  // Groups the batch's tokens into attention clusters (attn_tokens_, attn_clusters_).
  void plan_attention(std::span<const SeqBatch> seqs, int64_t max_tokens);

  const Model& model_;
  const Kernels& kernels_;
  ThreadPool& pool_;

  // Per-token scratch, [n_tokens][width]
  std::vector<float> x_, xb_, q_, k_, v_, attn_, gate_, up_, logits_;
  std::vector<float> attn_scratch_;  // [n_threads][attention_scratch_floats]
  std::vector<float> rope_cs_;       // [n][n_rot]: each token's RoPE cos/sin pairs (rope_angles)
  size_t attn_scratch_per_thread_ = 0;
  MatmulScratch mm_;
  ForwardProfile* profile_ = nullptr;
  std::vector<int32_t> tok_seq_;
  std::vector<int64_t> tok_pos_;
  std::vector<int64_t> out_rows_;
  std::vector<uint8_t> tok_decode_;  // per token: 1 = matmul decode kernel (see SeqBatch)
  std::vector<uint8_t> out_decode_;  // the same for the logit rows
  int64_t n_out_rows_ = 0;
  double attention_seconds_ = 0;
  int64_t attended_positions_ = 0;
  // Attention clusters: tokens whose sequences share KV blocks, attended together
  // (attend_tokens); attn_tokens_ lists the batch's tokens cluster by cluster.
  struct AttnCluster {
    int64_t begin = 0;  // in attn_tokens_
    int64_t size = 0;
    int64_t cost = 0;  // positions attended
  };
  std::vector<int64_t> attn_tokens_;
  std::vector<AttnCluster> attn_clusters_;  // costliest first
  std::vector<int32_t> attn_seq_order_;
  std::vector<int64_t> attn_seq_first_;
};

}  // namespace edgeinfer
