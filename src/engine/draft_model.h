#pragma once
// Speculative drafts from a second, smaller model with the main model's vocabulary (--draft).
// The draft model keeps a paged KV cache of its own for each sequence it drafts for: it catches
// up on whatever tokens it has not seen (the prompt the first time, then the tokens accepted
// since), then proposes tokens greedily, every drafting sequence batched into each of its steps.
// Its cache is reused across steps: after a verification only the positions whose tokens
// differ from the sequence's are recomputed. Drafts never change the output, only how many
// tokens a main-model step can accept. Engine thread only.
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "kv/block_pool.h"
#include "kv/kv_storage.h"
#include "model/forward.h"
#include "model/model.h"
#include "util/thread_pool.h"

namespace edgeinfer {

class DraftModel {
 public:
  // kv_tokens: capacity of the draft's KV pool in tokens (shared by all sequences). Throws Error
  // when the vocabularies differ.
  DraftModel(const Model& draft, const Model& main, ThreadPool& pool, TensorType kv_type, int32_t block_size,
             int64_t kv_tokens);

  struct Want {
    uint64_t id = 0;                   // the sequence (its draft cache is kept under this id)
    std::span<const int32_t> tokens;   // the sequence's tokens so far (prompt + generated)
    int32_t n_prompt = 0;              // how many of them are prompt (kernel choice, as the engine)
    int32_t n_draft = 0;               // at most this many proposals
    std::vector<int32_t>* out = nullptr;  // cleared, then filled with the proposals
  };
  // Proposes drafts for every want. A sequence whose cache cannot grow (pool full) gets none.
  void propose(std::span<Want> wants);
  // Forgets a sequence and frees its blocks.
  void release(uint64_t id);

  const Model& model() const { return model_; }
  int32_t n_blocks_used() const { return pool_blocks_.n_used(); }
  int64_t n_forward_steps() const { return n_steps_; }

 private:
  struct State {
    std::vector<int32_t> blocks;
    std::vector<int32_t> fed;  // token at each position whose K/V the draft cache holds
  };
  int32_t argmax_row(const float* row) const;

  const Model& model_;
  ForwardPass fwd_;
  KvStorage kv_;
  BlockPool pool_blocks_;
  std::unordered_map<uint64_t, State> states_;
  int64_t n_steps_ = 0;
  // Per-propose scratch (kept to avoid reallocations).
  std::vector<SeqBatch> batch_;
  std::vector<size_t> active_;     // indices into the wants being drafted for
  std::vector<State*> active_st_;  // their states (map nodes: pointers stay valid)
  std::vector<int32_t> last_;
};

}  // namespace edgeinfer
