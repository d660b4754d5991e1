#pragma once
// The serving engine: one thread owns all engine state (KV pool, prefix cache, scheduler,
// sequences) and runs steps — schedule, one batched forward pass over every scheduled
// sequence, sample, stream events. Other threads only submit, cancel and read statistics.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/draft_model.h"
#include "engine/prompt_lookup.h"
#include "engine/request.h"
#include "engine/scheduler.h"
#include "engine/step_cost.h"
#include "engine/sequence.h"
#include "kernels/kernels.h"
#include "kv/kv_storage.h"
#include "kv/prefix_cache.h"
#include "model/forward.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"
#include "util/thread_pool.h"

namespace edgeinfer {

// What one engine step did, for a step observer (EngineOptions::on_step).
struct StepInfo {
  uint64_t step = 0;
  int32_t n_seqs = 0;          // sequences in the batch
  int32_t n_decode = 0;        // of those, decoding one token (plus drafts)
  int32_t n_prefill_tokens = 0;  // prompt (or recomputed) tokens
  int32_t n_draft_tokens = 0;  // draft tokens verified
  int32_t n_accepted = 0;      // drafts accepted
  int32_t prefill_cap = 0;     // cap on prompt tokens while decoding, in force for this step (0: none)
  double schedule_ms = 0;      // drafting + scheduling
  double forward_ms = 0;       // the batched forward pass
  double attention_ms = 0;     // of it, attention (all layers)
  double total_ms = 0;         // the whole step, sampling and events included
};

struct EngineOptions {
  int n_threads = 0;                    // 0: all hardware threads
  TensorType kv_type = TensorType::F16;
  int32_t kv_block_size = 16;           // tokens per KV block
  int64_t kv_tokens = 0;                // KV capacity in tokens; 0: from kv_mem_bytes, else max(8192, n_ctx)
  int64_t kv_mem_bytes = 0;             // KV budget in bytes (used when kv_tokens == 0)
  int32_t n_ctx = 0;                    // tokens per sequence; 0: min(model context, 4096)
  int32_t max_batch_tokens = 512;       // tokens per step
  int32_t max_running = 8;              // sequences decoding at once
  int32_t max_prefill_with_decode = -1; // prompt tokens per step while others decode; -1: adaptive, 0: no cap
  PromptLookupParams lookup;            // speculative drafting
  bool speculative = true;
  // Verify only the drafts whose expected saving pays for their rows in the batch (StepCostModel,
  // from measured step times); false: every draft proposed (as long as the step budget allows).
  bool draft_cost_gate = true;
  // How much longer than a plain decode step (StepCostModel's estimate) prompt tokens may make a
  // step under the adaptive prefill cap, and, with the cost gate on and other sequences
  // decoding, all sequences' drafts together: other streams' time per output token stays
  // within this of its plain value. A lone stream's drafts are limited by the gate only.
  double step_slack = 0.2;
  // Draft model (same vocabulary) proposing tokens where the prediction and prompt lookup have
  // none; must outlive the engine. nullptr: prompt lookup only.
  const Model* draft_model = nullptr;
  std::string cache_dir;                // persist hot prefix blocks here (empty: off)
  int32_t persist_max_blocks = 4096;
  // With cache_dir: also save while the engine is idle, at most once per this interval and only
  // when blocks were cached since the last save, so that a crash or kill loses at most that much
  // (the save at stop() always happens). A request arriving during a save waits for it. <= 0:
  // save at stop() only.
  int64_t persist_interval_ms = 60000;
  // Called on the engine thread after every step that ran a forward pass (empty: none). Must be
  // quick and must not call back into the engine.
  std::function<void(const StepInfo&)> on_step;
};

struct EngineStats {
  int32_t n_running = 0;
  int32_t n_waiting = 0;
  int32_t kv_blocks_total = 0;
  int32_t kv_blocks_used = 0;
  int32_t kv_block_size = 0;
  uint64_t n_steps = 0;
  uint64_t n_preemptions = 0;
  uint64_t prefix_queries = 0;       // prompt blocks looked up
  uint64_t prefix_hits = 0;          // of those, found
  uint64_t n_prompt_tokens = 0;      // prompt tokens submitted
  uint64_t n_cached_tokens = 0;      // prompt tokens served from the prefix cache
  uint64_t n_generated_tokens = 0;
  uint64_t n_drafted = 0;
  uint64_t n_draft_accepted = 0;
  uint64_t n_finished[5] = {};       // by FinishReason
  int32_t prefill_cap = 0;           // current adaptive cap
  int32_t n_persisted_loaded = 0;    // blocks restored from cache_dir at start
  uint64_t n_persist_saves = 0;      // saves to cache_dir so far (idle saves; the one at stop after)
};

class Engine {
 public:
  // The model and tokenizer must outlive the engine. Starts the engine thread.
  Engine(const Model& model, const Tokenizer& tokenizer, const EngineOptions& opt);
  ~Engine();  // stop(Cancel)
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Queues a request; its sink receives events on the engine thread. Throws Error (nothing
  // queued) for an empty prompt, an out-of-vocabulary token, invalid sampling parameters, or a
  // prompt that fills the context or the whole KV pool. Generation is capped so that prompt +
  // generated tokens fit both (finish reason Length when the cap is reached).
  uint64_t submit(GenerationRequest req);
  // Cancels a request: its blocks are freed within one step and its sink gets a final event
  // with FinishReason::Cancelled. Unknown or finished ids are ignored.
  void cancel(uint64_t id);

  enum class StopMode { Drain, Cancel };
  // Stops the engine thread. Drain: finish running/waiting requests first (up to grace_ms,
  // then cancel the rest). Cancel: cancel everything now. Persists the prefix cache if asked.
  void stop(StopMode mode = StopMode::Cancel, int64_t grace_ms = 0);

  EngineStats stats() const;
  const EngineOptions& options() const { return opt_; }
  int32_t n_ctx() const { return n_ctx_; }
  const Model& model() const { return model_; }
  const Tokenizer& tokenizer() const { return tok_; }
  // Blocks until no request is queued or running (tests, benchmarks).
  void wait_idle();

 private:
  struct Inbox {
    std::vector<std::unique_ptr<Sequence>> new_seqs;
    std::vector<uint64_t> cancels;
  };

  void loop();
  void step();
  void take_inbox();
  void finish(Sequence* seq, FinishReason reason, const std::string& error = {});
  // Appends accepted tokens, streams their text; returns true when the sequence finished.
  // The first n_already_accepted tokens were already fed to the sampler (verified drafts).
  bool emit_tokens(Sequence* seq, const std::vector<int32_t>& toks, std::vector<TokenLogprobs>& lps,
                   int32_t n_already_accepted);
  void update_stats();
  void tune_prefill_cap(double step_ms, int32_t n_decode, int32_t n_extra, double attn_ms, int64_t attn_positions);
  // Tells the cost model the contexts of the sequences decoding next (StepCostModel).
  void set_decode_positions();
  void load_persisted();
  void save_persisted();
  // Whether the idle engine should save the prefix cache once the interval since the last save
  // has passed (engine thread).
  bool idle_save_due() const;

  const Model& model_;
  const Tokenizer& tok_;
  EngineOptions opt_;
  int32_t n_ctx_ = 0;
  ThreadPool pool_;
  ForwardPass fwd_;
  std::unique_ptr<KvStorage> kv_;
  std::unique_ptr<PrefixCache> cache_;
  std::unique_ptr<Scheduler> sched_;
  std::unique_ptr<DraftModel> draft_;
  std::vector<DraftModel::Want> draft_wants_;
  BlockHash root_ = 0;
  std::unordered_map<uint64_t, std::unique_ptr<Sequence>> seqs_;  // engine thread only

  mutable std::mutex mu_;
  std::condition_variable cv_;       // wakes the engine thread
  std::condition_variable idle_cv_;  // wakes wait_idle()
  Inbox inbox_;
  uint64_t next_id_ = 1;
  uint64_t next_arrival_ = 0;
  bool stopping_ = false;
  StopMode stop_mode_ = StopMode::Cancel;
  std::chrono::steady_clock::time_point stop_deadline_;
  bool idle_ = true;
  EngineStats stats_;  // guarded by mu_

  // Engine-thread counters folded into stats_.
  uint64_t n_prompt_tokens_ = 0, n_generated_ = 0, n_drafted_ = 0, n_accepted_ = 0;
  uint64_t n_finished_[5] = {};
  int32_t n_persisted_loaded_ = 0;
  // Idle saves: blocks inserted into the cache at the last save (or load), and when it was.
  uint64_t inserted_at_save_ = 0;
  std::chrono::steady_clock::time_point last_save_;
  uint64_t n_persist_saves_ = 0;
  StepCostModel cost_;  // step times, for the prefill cap and the drafts worth verifying

  // Step scratch.
  std::vector<std::vector<int32_t>> step_tokens_;
  std::vector<SeqBatch> step_batch_;
  std::vector<float> row_copy_;

  std::thread thread_;
};

}  // namespace edgeinfer
