#include "engine/sequence_runner.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "util/error.h"

namespace edgeinfer {

SequenceRunner::SequenceRunner(const Model& model, const Kernels& kernels, ThreadPool& pool,
                               const RunnerOptions& opt)
    : model_(model), fwd_(model, kernels, pool) {
  const ModelConfig& c = model.config();
  n_ctx_ = opt.n_ctx > 0 ? opt.n_ctx : std::min<int64_t>(c.n_ctx_train, 4096);
  if (n_ctx_ <= 0) throw Error("context size must be positive");
  n_batch_ = std::max<int64_t>(1, opt.n_batch);
  const int32_t bs = std::max<int32_t>(1, opt.kv_block_size);
  const int64_t n_blocks = (n_ctx_ + bs - 1) / bs;
  kv_ = std::make_unique<KvStorage>(c.n_layer, c.kv_dim(), bs, static_cast<int32_t>(n_blocks), opt.kv_type);
  block_table_.resize(n_blocks);
  for (int64_t i = 0; i < n_blocks; ++i) block_table_[i] = static_cast<int32_t>(i);
}

const float* SequenceRunner::eval(std::span<const int32_t> tokens, bool all_logits) {
  if (tokens.empty()) throw Error("eval: no tokens");
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n_past_ + n > n_ctx_) {
    throw Error("context window full: " + std::to_string(n_past_) + " + " + std::to_string(n) +
                " tokens exceed the context size " + std::to_string(n_ctx_) + " (raise -c)");
  }
  const int64_t V = n_vocab();
  if (all_logits) all_logits_.resize(static_cast<size_t>(n * V));
  const float* last = nullptr;
  for (int64_t i = 0; i < n; i += n_batch_) {
    const int64_t len = std::min(n_batch_, n - i);
    SeqBatch sb;
    sb.tokens = tokens.subspan(i, len);
    sb.pos0 = n_past_;
    sb.block_table = block_table_;
    sb.logits = all_logits ? SeqBatch::Logits::All : (i + len == n ? SeqBatch::Logits::Last : SeqBatch::Logits::None);
    // A call with one token is a decode step; a longer one is a prompt, prefilled (also its
    // last chunk when that is a single token), as the engine treats prompt tokens.
    sb.decode_from = n == 1 ? n_past_ : n_past_ + len;
    last = fwd_.forward(std::span<const SeqBatch>(&sb, 1), *kv_);
    n_past_ += len;
    if (all_logits) std::memcpy(all_logits_.data() + i * V, last, sizeof(float) * len * V);
  }
  if (all_logits) return all_logits_.data();
  return last;
}

}  // namespace edgeinfer
