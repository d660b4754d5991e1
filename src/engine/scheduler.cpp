#include "engine/scheduler.h"

#include <algorithm>
#include <string>

#include "util/error.h"

namespace edgeinfer {

namespace {

bool runs_before(const Sequence* a, const Sequence* b) {
  if (a->priority != b->priority) return a->priority > b->priority;
  return a->arrival < b->arrival;
}

int32_t blocks_for(int64_t n_positions, int32_t bs) { return static_cast<int32_t>((n_positions + bs - 1) / bs); }

}  // namespace

Scheduler::Scheduler(PrefixCache& cache, const SchedulerConfig& cfg) : cache_(cache), cfg_(cfg) {
  if (cfg_.max_batch_tokens < 1) throw Error("scheduler: max_batch_tokens must be at least 1");
  if (cfg_.max_running < 1) throw Error("scheduler: max_running must be at least 1");
  if (cfg_.max_ctx < 1) throw Error("scheduler: max_ctx must be at least 1");
}

bool Scheduler::fits(int64_t n_total) const {
  return n_total <= cfg_.max_ctx && blocks_for(n_total, cache_.block_size()) <= cache_.n_blocks();
}

void Scheduler::add(Sequence* seq) {
  seq->status = SeqStatus::Waiting;
  waiting_.push_back(seq);
}

void Scheduler::remove(Sequence* seq) {
  auto drop = [&](std::vector<Sequence*>& v) { v.erase(std::remove(v.begin(), v.end(), seq), v.end()); };
  drop(running_);
  drop(waiting_);
  if (!seq->blocks.empty()) cache_.release(seq->blocks);
  seq->blocks.clear();
  seq->draft.clear();
  seq->status = SeqStatus::Finished;
}

bool Scheduler::ensure_blocks(Sequence* seq, int32_t n_positions) {
  const int32_t need = blocks_for(n_positions, cache_.block_size()) - static_cast<int32_t>(seq->blocks.size());
  if (need <= 0) return true;
  if (cache_.n_free() < need) return false;
  tmp_blocks_.resize(need);
  if (!cache_.allocate(need, tmp_blocks_)) return false;
  seq->blocks.insert(seq->blocks.end(), tmp_blocks_.begin(), tmp_blocks_.end());
  return true;
}

void Scheduler::preempt(Sequence* seq) {
  if (!seq->blocks.empty()) cache_.release(seq->blocks);
  seq->blocks.clear();
  seq->n_computed = 0;
  seq->n_blocks_cached = 0;
  seq->draft.clear();
  seq->status = SeqStatus::Waiting;
  seq->timings.n_preempted++;
  running_.erase(std::remove(running_.begin(), running_.end(), seq), running_.end());
  waiting_.push_back(seq);
  stats_.n_preemptions++;
}

void Scheduler::admit_prefix(Sequence* seq) {
  const int32_t bs = cache_.block_size();
  extend_block_hashes(seq->tokens, bs, cfg_.root, seq->cache_salt, seq->hashes);
  // Leave at least the last token to compute: its logits are needed to sample.
  const size_t usable = std::min(seq->hashes.size(), (seq->tokens.size() - 1) / bs);
  const int32_t hits = cache_.match_prefix(std::span<const BlockHash>(seq->hashes.data(), usable), seq->blocks);
  seq->n_computed = hits * bs;
  seq->n_blocks_cached = hits;
  stats_.n_cached_tokens += static_cast<uint64_t>(hits) * bs;
  if (!seq->scheduled_once) seq->timings.n_cached = hits * bs;
}

void Scheduler::register_full_blocks(Sequence* seq) {
  const int32_t bs = cache_.block_size();
  extend_block_hashes(seq->tokens, bs, cfg_.root, seq->cache_salt, seq->hashes);
  const int32_t full = std::min<int32_t>(seq->n_computed / bs, static_cast<int32_t>(seq->hashes.size()));
  if (full <= seq->n_blocks_cached) return;
  const int32_t from = seq->n_blocks_cached;
  const BlockHash parent = from == 0 ? cfg_.root : seq->hashes[from - 1];
  cache_.insert(std::span<const BlockHash>(seq->hashes.data() + from, full - from),
                std::span<const BlockId>(seq->blocks.data() + from, full - from), parent);
  seq->n_blocks_cached = full;
}

void Scheduler::advance(Sequence* seq, int32_t n_computed_new) {
  seq->n_computed += n_computed_new;
  register_full_blocks(seq);
}

std::vector<ScheduledSeq> Scheduler::schedule() {
  stats_.n_steps++;
  std::stable_sort(running_.begin(), running_.end(), runs_before);
  std::stable_sort(waiting_.begin(), waiting_.end(), runs_before);
  const int32_t bs = cache_.block_size();

  std::vector<ScheduledSeq> out;
  int32_t budget = cfg_.max_batch_tokens;
  std::vector<const Sequence*> scheduled;  // victims are only picked among the unscheduled
  auto is_scheduled = [&](const Sequence* s) {
    return std::find(scheduled.begin(), scheduled.end(), s) != scheduled.end();
  };
  // Preempts the lowest-ranked running sequence that is not scheduled this step and ranks below
  // `than` (or is `than` itself when allowed). Returns false when there is none.
  auto preempt_one = [&](const Sequence* than, bool allow_self) -> bool {
    for (auto it = running_.rbegin(); it != running_.rend(); ++it) {
      Sequence* victim = *it;
      if (is_scheduled(victim)) continue;
      if (victim == than) {
        if (!allow_self) return false;
        preempt(victim);
        return true;
      }
      if (than && !runs_before(than, victim)) return false;
      preempt(victim);
      return true;
    }
    return false;
  };

  // 1. Running sequences that are decoding: one token each, plus drafts.
  std::vector<Sequence*> order = running_;
  bool any_decode = false;
  for (Sequence* seq : order) {
    if (seq->status != SeqStatus::Running || seq->n_pending() != 1 || budget < 1) continue;
    int32_t n_draft = static_cast<int32_t>(seq->draft.size());
    n_draft = std::min(n_draft, budget - 1);
    n_draft = std::min<int32_t>(n_draft, cfg_.max_ctx - static_cast<int32_t>(seq->tokens.size()));
    n_draft = std::max(n_draft, 0);
    bool ok = false;
    for (;;) {
      if (ensure_blocks(seq, seq->n_computed + 1 + n_draft)) {
        ok = true;
        break;
      }
      if (n_draft > 0) {
        n_draft = 0;
        continue;
      }
      if (!preempt_one(seq, /*allow_self=*/true)) break;
      if (seq->status != SeqStatus::Running) break;  // it was the lowest itself
    }
    if (!ok || seq->status != SeqStatus::Running) continue;
    seq->draft.resize(n_draft);
    out.push_back({seq, 1, n_draft, true});
    scheduled.push_back(seq);
    budget -= 1 + n_draft;
    any_decode = true;
  }

  int32_t prefill_cap = budget;
  if (any_decode && cfg_.max_prefill_with_decode > 0) prefill_cap = std::min(prefill_cap, cfg_.max_prefill_with_decode);

  // Largest chunk the free blocks allow for this sequence now.
  auto chunk_fitting = [&](const Sequence* seq, int32_t want) {
    const int64_t capacity = (static_cast<int64_t>(seq->blocks.size()) + cache_.n_free()) * bs - seq->n_computed;
    return static_cast<int32_t>(std::clamp<int64_t>(capacity, 0, want));
  };

  // 2. Running sequences still prefilling: the next chunk.
  for (Sequence* seq : order) {
    if (seq->status != SeqStatus::Running || is_scheduled(seq) || seq->n_pending() <= 1) continue;
    if (prefill_cap <= 0) break;
    int32_t chunk = std::min(seq->n_pending(), prefill_cap);
    while (!ensure_blocks(seq, seq->n_computed + chunk)) {
      if (!preempt_one(seq, /*allow_self=*/false)) {
        chunk = chunk_fitting(seq, chunk);
        if (chunk == 0 || !ensure_blocks(seq, seq->n_computed + chunk)) chunk = 0;
        break;
      }
    }
    if (chunk == 0) continue;
    seq->draft.clear();
    const bool sample = seq->n_computed + chunk == static_cast<int32_t>(seq->tokens.size());
    out.push_back({seq, chunk, 0, sample});
    scheduled.push_back(seq);
    prefill_cap -= chunk;
    budget -= chunk;
    stats_.n_prompt_tokens_computed += chunk;
  }

  // 3. Admit waiting sequences.
  while (!waiting_.empty() && prefill_cap > 0 && static_cast<int32_t>(running_.size()) < cfg_.max_running) {
    Sequence* seq = waiting_.front();
    admit_prefix(seq);
    int32_t chunk = std::min(seq->n_pending(), prefill_cap);
    while (!ensure_blocks(seq, seq->n_computed + chunk)) {
      if (!preempt_one(seq, /*allow_self=*/false)) {
        chunk = chunk_fitting(seq, chunk);
        if (chunk == 0 || !ensure_blocks(seq, seq->n_computed + chunk)) chunk = 0;
        break;
      }
    }
    if (chunk == 0) {
      // Not even one token fits: give the prefix hits back and wait for blocks.
      if (!seq->blocks.empty()) cache_.release(seq->blocks);
      seq->blocks.clear();
      seq->n_computed = 0;
      seq->n_blocks_cached = 0;
      break;
    }
    waiting_.erase(waiting_.begin());
    seq->status = SeqStatus::Running;
    seq->draft.clear();
    running_.push_back(seq);
    const bool sample = seq->n_computed + chunk == static_cast<int32_t>(seq->tokens.size());
    out.push_back({seq, chunk, 0, sample});
    scheduled.push_back(seq);
    prefill_cap -= chunk;
    budget -= chunk;
    stats_.n_prompt_tokens_computed += chunk;
  }
  return out;
}

}  // namespace edgeinfer
