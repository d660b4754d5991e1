#pragma once
// Runs one sequence at a time over a model: a KV cache sized for a context window (blocks
// assigned in order), prompt prefill in chunks, then token-by-token decoding. This is what
// `edgeinfer run`, `logits` and `perplexity` use; the serving engine (engine/scheduler) runs
// many sequences over a shared block pool instead.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kv/kv_storage.h"
#include "model/forward.h"

namespace edgeinfer {

struct RunnerOptions {
  int64_t n_ctx = 0;          // 0: min(model context length, 4096)
  int64_t n_batch = 512;      // prompt tokens per forward call
  TensorType kv_type = TensorType::F16;
  int32_t kv_block_size = 16;
};

class SequenceRunner {
 public:
  SequenceRunner(const Model& model, const Kernels& kernels, ThreadPool& pool, const RunnerOptions& opt);

  int64_t n_ctx() const { return n_ctx_; }
  int64_t n_past() const { return n_past_; }
  int64_t n_vocab() const { return model_.config().n_vocab; }
  size_t kv_bytes() const { return kv_->total_bytes(); }

  // Forgets every token (the cache memory is reused).
  void clear() { n_past_ = 0; }
  // Keeps only the first n tokens (e.g. the part of a chat that did not change).
  void rewind(int64_t n) { n_past_ = n < n_past_ ? (n < 0 ? 0 : n) : n_past_; }

  // Appends tokens to the sequence. Returns the logits of the last token ([n_vocab]), or, with
  // all_logits, of every appended token ([tokens.size()][n_vocab]). Throws Error when the
  // context window would overflow. The returned pointer is valid until the next call.
  const float* eval(std::span<const int32_t> tokens, bool all_logits = false);

 private:
  const Model& model_;
  ForwardPass fwd_;
  std::unique_ptr<KvStorage> kv_;
  std::vector<int32_t> block_table_;
  int64_t n_ctx_ = 0;
  int64_t n_batch_ = 512;
  int64_t n_past_ = 0;
  std::vector<float> all_logits_;
};

}  // namespace edgeinfer
