#pragma once
// Continuous batching under a token budget (vLLM v1's shape): there is no prefill phase or decode
// phase. Each sequence has tokens and a count of those already computed; every step the scheduler
// gives each running sequence the tokens it still needs — one for a decoding sequence (plus its
// speculative drafts), a chunk for one still prefilling — and then admits waiting sequences while
// budget and KV blocks last. Prefix-cache hits are taken at admission, so a shared prefix is
// computed once and its blocks shared.
//
// Order: running sequences by (priority desc, arrival asc), decoding ones first; then waiting
// sequences in the same order. A step is built in four passes:
//   0. priority preemption: when the best waiting sequence outranks the worst running one and
//      cannot start (no free slot under max_running, or too few blocks for its first chunk), the
//      lowest-ranked running sequences are preempted for it (vLLM v0's priority policy);
//   1. decode: one token per decoding sequence, best first; drafts ride along only with budget
//      left after every decoder's one token and with blocks to spare (else they are dropped);
//   2. prefill: the next chunk of running sequences still prefilling;
//   3. admission: waiting sequences in order while budget, slots and blocks last; an admitted
//      sequence gets the blocks of its whole prompt at once and is admitted only when they are
//      free beyond what this step's decoders need. Prefill in passes 2 and 3 shares
//      max_prefill_with_decode while anything decodes.
// When KV blocks run out, the lowest-ranked running sequence not yet scheduled this step is
// preempted: its blocks are released (full blocks stay in the prefix cache, so the recompute is
// mostly hits) and it goes back to waiting with its tokens kept. Nothing ever fails for lack of
// memory; a sequence that could not fit even alone is refused (or capped) at submission.
//
// Shared prefixes in flight: a waiting sequence whose next uncached block is being computed right
// now by a running sequence's prefill (same chained hash) is not admitted yet — it waits until
// that block is cached and then takes it as a hit, so N requests arriving together with one long
// common prefix compute it once instead of N times. Sequences behind it may be admitted meanwhile.
//
// The scheduler touches only token counts and block tables, so tests drive it with a simulated
// model (no tensors) and check budgets, priorities, preemption and cancellation exactly.
#include <cstdint>
#include <vector>

#include "engine/sequence.h"
#include "kv/prefix_cache.h"

namespace edgeinfer {

struct SchedulerConfig {
  int32_t max_batch_tokens = 512;  // tokens per step (decode + prefill chunks + drafts)
  int32_t max_running = 16;        // sequences with KV at once
  // Prompt tokens a step may carry while other sequences are decoding: keeps their time per
  // output token steady. 0 = no limit beyond max_batch_tokens. The engine tunes it from measured
  // step times.
  int32_t max_prefill_with_decode = 0;
  int32_t max_ctx = 4096;          // tokens per sequence
  BlockHash root = kDefaultRootBlockHash;
  // Hold back a waiting sequence whose next prefix block a running prefill is computing.
  bool share_inflight_prefixes = true;
};

struct ScheduledSeq {
  Sequence* seq = nullptr;
  int32_t n_tokens = 0;  // tokens[n_computed, n_computed + n_tokens) run this step
  int32_t n_draft = 0;   // followed by seq->draft[0, n_draft)
  bool sample = false;   // the chunk reaches the end of tokens: logits needed
};

struct SchedulerStats {
  uint64_t n_steps = 0;
  uint64_t n_preemptions = 0;
  uint64_t n_prompt_tokens_computed = 0;  // prefill tokens scheduled (recomputation included)
  uint64_t n_cached_tokens = 0;           // tokens taken from the prefix cache at admission
  uint64_t n_deferred = 0;                // admissions held back for an in-flight shared prefix
};

class Scheduler {
 public:
  Scheduler(PrefixCache& cache, const SchedulerConfig& cfg);

  const SchedulerConfig& config() const { return cfg_; }
  void set_max_prefill_with_decode(int32_t n) { cfg_.max_prefill_with_decode = n; }

  // Whether a sequence of `n_total` tokens (prompt + max generation) could ever run alone.
  bool fits(int64_t n_total) const;
  // Most tokens (prompt + generation) one sequence can ever hold: min(max_ctx, KV pool).
  int64_t max_tokens_alone() const;

  // Queues a new sequence (status Waiting). Its tokens and n_prompt must be set; Error when its
  // tokens could never fit (see fits()).
  void add(Sequence* seq);
  // Removes a sequence (finished or cancelled) and releases its blocks at once.
  void remove(Sequence* seq);

  // Picks this step's work. A sequence with a non-empty draft gets it appended when it is
  // decoding and budget and blocks allow. Allocates the blocks the step needs.
  std::vector<ScheduledSeq> schedule();

  // After the forward pass: seq computed `n_computed_new` more tokens (the chunk, or for a
  // verified draft: 1 + accepted drafts). Registers newly full blocks in the prefix cache.
  void advance(Sequence* seq, int32_t n_computed_new);

  int32_t n_running() const { return static_cast<int32_t>(running_.size()); }
  int32_t n_waiting() const { return static_cast<int32_t>(waiting_.size()); }
  const SchedulerStats& stats() const { return stats_; }
  const std::vector<Sequence*>& running() const { return running_; }
  const std::vector<Sequence*>& waiting() const { return waiting_; }

 private:
  struct Admission {
    int32_t hits = 0;       // cached prefix blocks it would take
    int32_t hits_free = 0;  // of those, sitting on the free list
    int32_t usable = 0;     // full blocks that may be looked up (the last token stays uncovered)
  };
  Admission peek_admission(Sequence* seq);
  bool waits_for_inflight(const Sequence* seq, const Admission& a) const;
  // Free blocks admitting seq takes: its whole prompt's new blocks plus the hits that leave the
  // free list.
  int32_t admission_need(const Sequence* seq, const Admission& a) const;
  // Free blocks this step's decoders take first: one for each whose next position opens a block.
  int32_t decode_reserve() const;
  bool ensure_blocks(Sequence* seq, int32_t n_positions);
  void preempt(Sequence* seq);
  void register_full_blocks(Sequence* seq);
  void priority_preemption();

  PrefixCache& cache_;
  SchedulerConfig cfg_;
  std::vector<Sequence*> running_;
  std::vector<Sequence*> waiting_;
  std::vector<BlockId> tmp_blocks_;
  SchedulerStats stats_;
};

}  // namespace edgeinfer
