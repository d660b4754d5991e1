#include "engine/draft_model.h"

#include <algorithm>
#include <string>

#include "util/error.h"

namespace edgeinfer {

DraftModel::DraftModel(const Model& draft, const Model& main, ThreadPool& pool, TensorType kv_type,
                       int32_t block_size, int64_t kv_tokens)
    : model_(draft),
      fwd_(draft, kernels_for(select_isa()), pool),
      kv_(draft.config().n_layer, draft.config().kv_dim(), block_size,
          static_cast<int32_t>((std::max<int64_t>(kv_tokens, block_size) + block_size - 1) / block_size), kv_type),
      pool_blocks_(kv_.n_blocks()) {
  if (draft.config().n_vocab != main.config().n_vocab) {
    throw Error("draft model: its vocabulary has " + std::to_string(draft.config().n_vocab) +
                " tokens, the main model's " + std::to_string(main.config().n_vocab) +
                " (a draft model must share the main model's vocabulary)");
  }
}

int32_t DraftModel::argmax_row(const float* row) const {
  const int64_t V = model_.config().n_vocab;
  return static_cast<int32_t>(std::max_element(row, row + V) - row);
}

void DraftModel::release(uint64_t id) {
  auto it = states_.find(id);
  if (it == states_.end()) return;
  for (int32_t b : it->second.blocks) pool_blocks_.release(b, BlockPool::Requeue::kHead);
  states_.erase(it);
}

void DraftModel::propose(std::span<Want> wants) {
  const int32_t bs = kv_.block_size();
  batch_.clear();
  active_.clear();
  active_st_.clear();
  for (size_t i = 0; i < wants.size(); ++i) {
    Want& w = wants[i];
    w.out->clear();
    const int64_t n = static_cast<int64_t>(w.tokens.size());
    if (w.n_draft <= 0 || n == 0) continue;
    State& st = states_[w.id];
    // Keep the cached positions whose tokens still match; at least the last token is fed again
    // so that its logits give the first proposal.
    int64_t valid = 0;
    const int64_t lim = std::min<int64_t>(static_cast<int64_t>(st.fed.size()), n - 1);
    while (valid < lim && st.fed[static_cast<size_t>(valid)] == w.tokens[static_cast<size_t>(valid)]) ++valid;
    st.fed.resize(static_cast<size_t>(valid));
    // Positions written: [valid, n + n_draft - 1).
    const int64_t need = (n + w.n_draft - 1 + bs - 1) / bs;
    const int64_t have = static_cast<int64_t>(st.blocks.size());
    if (need > have) {
      auto more = pool_blocks_.allocate(static_cast<int32_t>(need - have));
      if (!more) continue;  // the draft pool is full: no drafts for this one now
      st.blocks.insert(st.blocks.end(), more->begin(), more->end());
    }
    SeqBatch sb;
    sb.tokens = w.tokens.subspan(static_cast<size_t>(valid));
    sb.pos0 = valid;
    sb.block_table = st.blocks;
    sb.logits = SeqBatch::Logits::Last;
    sb.decode_from = w.n_prompt;
    batch_.push_back(sb);
    active_.push_back(i);
    active_st_.push_back(&st);
  }
  if (active_.empty()) return;
  last_.resize(wants.size());
  // Step 0: catch up and propose the first token of each.
  const float* logits = fwd_.forward(batch_, kv_);
  ++n_steps_;
  const int64_t V = model_.config().n_vocab;
  for (size_t j = 0; j < active_.size(); ++j) {
    Want& w = wants[active_[j]];
    State& st = *active_st_[j];
    st.fed.insert(st.fed.end(), batch_[j].tokens.begin(), batch_[j].tokens.end());
    const int32_t id = argmax_row(logits + static_cast<int64_t>(j) * V);
    w.out->push_back(id);
    last_[active_[j]] = id;
  }
  // Further steps: feed each sequence's latest proposal while it wants more.
  for (;;) {
    batch_.clear();
    size_t k = 0;
    for (size_t j = 0; j < active_.size(); ++j) {
      Want& w = wants[active_[j]];
      if (static_cast<int32_t>(w.out->size()) >= w.n_draft) continue;
      State& st = *active_st_[j];
      SeqBatch sb;
      sb.tokens = std::span<const int32_t>(&last_[active_[j]], 1);
      sb.pos0 = static_cast<int64_t>(st.fed.size());
      sb.block_table = st.blocks;
      sb.logits = SeqBatch::Logits::Last;
      sb.decode_from = w.n_prompt;
      batch_.push_back(sb);
      active_st_[k] = active_st_[j];
      active_[k++] = active_[j];
    }
    active_.resize(k);
    active_st_.resize(k);
    if (active_.empty()) break;
    logits = fwd_.forward(batch_, kv_);
    ++n_steps_;
    for (size_t j = 0; j < active_.size(); ++j) {
      Want& w = wants[active_[j]];
      active_st_[j]->fed.push_back(last_[active_[j]]);
      const int32_t id = argmax_row(logits + static_cast<int64_t>(j) * V);
      w.out->push_back(id);
      last_[active_[j]] = id;
    }
  }
}

}  // namespace edgeinfer
