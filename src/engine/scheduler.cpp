#include "engine/scheduler.h"

#include <algorithm>
#include <span>
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

int64_t Scheduler::max_tokens_alone() const {
  return std::min<int64_t>(cfg_.max_ctx, static_cast<int64_t>(cache_.n_blocks()) * cache_.block_size());
}

void Scheduler::add(Sequence* seq) {
  if (seq->tokens.empty() || !fits(static_cast<int64_t>(seq->tokens.size()))) {
    throw Error("scheduler: a sequence of " + std::to_string(seq->tokens.size()) +
                " tokens can never fit (context " + std::to_string(cfg_.max_ctx) + ", KV pool " +
                std::to_string(static_cast<int64_t>(cache_.n_blocks()) * cache_.block_size()) + " tokens)");
  }
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

Scheduler::Admission Scheduler::peek_admission(Sequence* seq) {
  const int32_t bs = cache_.block_size();
  extend_block_hashes(seq->tokens, bs, cfg_.root, seq->cache_salt, seq->hashes);
  Admission a;
  // Leave at least the last token to compute: its logits are needed to sample.
  a.usable = static_cast<int32_t>(std::min(seq->hashes.size(), (seq->tokens.size() - 1) / bs));
  const PrefixPeek p = cache_.peek_prefix(std::span<const BlockHash>(seq->hashes.data(), a.usable));
  a.hits = p.n_blocks;
  a.hits_free = p.n_free;
  return a;
}

bool Scheduler::waits_for_inflight(const Sequence* seq, const Admission& a) const {
  if (!cfg_.share_inflight_prefixes || a.hits >= a.usable) return false;
  const auto next = static_cast<size_t>(a.hits);
  const BlockHash h = seq->hashes[next];
  const int32_t end = (a.hits + 1) * cache_.block_size();
  for (const Sequence* r : running_) {
    if (r != seq && r->n_computed < end && r->hashes.size() > next && r->hashes[next] == h) return true;
  }
  return false;
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

int32_t Scheduler::decode_reserve() const {
  const int32_t bs = cache_.block_size();
  int32_t reserve = 0;
  for (const Sequence* r : running_) {
    if (r->n_pending() == 1 && static_cast<int32_t>(r->blocks.size()) * bs <= r->n_computed) {
      ++reserve;
    }
  }
  return reserve;
}

int32_t Scheduler::admission_need(const Sequence* seq, const Admission& a) const {
  return blocks_for(static_cast<int64_t>(seq->tokens.size()), cache_.block_size()) - a.hits + a.hits_free;
}

void Scheduler::priority_preemption() {
  // The first waiting sequence that could start now (one held back for an in-flight prefix
  // gains nothing from preemption).
  for (size_t i = 0; i < waiting_.size(); ++i) {
    Sequence* w = waiting_[i];
    Admission a = peek_admission(w);
    if (waits_for_inflight(w, a)) continue;
    for (;;) {
      if (running_.empty() || !runs_before(w, running_.back())) return;
      const bool slot = static_cast<int32_t>(running_.size()) < cfg_.max_running;
      if (slot && admission_need(w, a) + decode_reserve() <= cache_.n_free()) return;
      preempt(running_.back());
      a = peek_admission(w);  // the victim's blocks may be hits for w
    }
  }
}

std::vector<ScheduledSeq> Scheduler::schedule() {
  const uint64_t step = ++stats_.n_steps;
  std::stable_sort(running_.begin(), running_.end(), runs_before);
  std::stable_sort(waiting_.begin(), waiting_.end(), runs_before);
  const int32_t bs = cache_.block_size();

  priority_preemption();

  std::vector<ScheduledSeq> out;
  int32_t budget = cfg_.max_batch_tokens;
  auto is_scheduled = [&](const Sequence* s) { return s->scheduled_step == step; };
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
  auto emit = [&](Sequence* seq, int32_t chunk, int32_t n_draft) {
    const bool sample = seq->n_computed + chunk == static_cast<int32_t>(seq->tokens.size());
    out.push_back({seq, chunk, n_draft, sample});
    seq->scheduled_step = step;
    budget -= chunk + n_draft;
  };

  // 1. Running sequences that are decoding: one token each, plus drafts with what budget is left
  // after every decoder's token.
  const std::vector<Sequence*> order = running_;
  int32_t decoders_left = 0;
  for (const Sequence* seq : order) decoders_left += seq->n_pending() == 1 ? 1 : 0;
  bool any_decode = false;
  for (Sequence* seq : order) {
    if (seq->n_pending() != 1) continue;
    --decoders_left;
    if (seq->status != SeqStatus::Running || budget < 1) continue;
    int32_t n_draft = static_cast<int32_t>(seq->draft.size());
    n_draft = std::min(n_draft, budget - 1 - decoders_left);
    n_draft = std::min<int32_t>(n_draft, cfg_.max_ctx - static_cast<int32_t>(seq->tokens.size()));
    n_draft = std::max(n_draft, 0);
    bool ok = false;
    for (;;) {
      if (ensure_blocks(seq, seq->n_computed + 1 + n_draft)) {
        ok = true;
        break;
      }
      if (n_draft > 0) {  // drafts are a bonus: trimmed to the free blocks, never worth a preemption
        const int64_t room = (static_cast<int64_t>(seq->blocks.size()) + cache_.n_free()) * bs - seq->n_computed - 1;
        n_draft = static_cast<int32_t>(std::clamp<int64_t>(room, 0, n_draft - 1));
        continue;
      }
      if (!preempt_one(seq, /*allow_self=*/true)) break;
      if (seq->status != SeqStatus::Running) break;  // it was the lowest itself
    }
    if (!ok || seq->status != SeqStatus::Running) continue;
    seq->draft.resize(n_draft);
    emit(seq, 1, n_draft);
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
    if (prefill_cap <= 0) break;
    if (seq->status != SeqStatus::Running || is_scheduled(seq) || seq->n_pending() <= 1) continue;
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
    emit(seq, chunk, 0);
    prefill_cap -= chunk;
    stats_.n_prompt_tokens_computed += chunk;
  }

  // 3. Admit waiting sequences. Admission is decided on a peek of the prefix cache, so a
  // sequence that cannot start takes nothing (no hits resurrected and given back, no counters).
  // It gets the blocks of its whole prompt at once (prefilled in chunks later): a prompt is
  // never left half-computed for lack of blocks, and is admitted only when they are there,
  // beyond the blocks running decoders need next — otherwise it would be admitted only to be
  // preempted by them.
  for (size_t i = 0; i < waiting_.size();) {
    if (prefill_cap <= 0 || static_cast<int32_t>(running_.size()) >= cfg_.max_running) break;
    Sequence* seq = waiting_[i];
    Admission a = peek_admission(seq);
    if (waits_for_inflight(seq, a)) {
      stats_.n_deferred++;
      ++i;
      continue;
    }
    while (admission_need(seq, a) + decode_reserve() > cache_.n_free()) {
      if (!preempt_one(seq, /*allow_self=*/false)) break;
      a = peek_admission(seq);  // a victim's released blocks may be hits now
    }
    // Not enough blocks: wait (nothing behind it jumps the queue, so it cannot starve).
    if (admission_need(seq, a) + decode_reserve() > cache_.n_free()) break;
    const int32_t n_comp = a.hits * bs;
    const int32_t chunk = std::min(static_cast<int32_t>(seq->tokens.size()) - n_comp, prefill_cap);
    const int32_t hits = cache_.match_prefix(std::span<const BlockHash>(seq->hashes.data(), a.usable), seq->blocks);
    if (hits != a.hits || !ensure_blocks(seq, static_cast<int32_t>(seq->tokens.size()))) {
      throw Error("scheduler: admission accounting is inconsistent with the prefix cache");
    }
    seq->n_computed = n_comp;
    seq->n_blocks_cached = hits;
    stats_.n_cached_tokens += static_cast<uint64_t>(n_comp);
    if (!seq->scheduled_once) seq->timings.n_cached = n_comp;
    waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(i));
    seq->status = SeqStatus::Running;
    seq->draft.clear();
    running_.push_back(seq);
    emit(seq, chunk, 0);
    prefill_cap -= chunk;
    stats_.n_prompt_tokens_computed += chunk;
  }
  return out;
}

}  // namespace edgeinfer
