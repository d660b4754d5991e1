#pragma once
// The engine's state of one request: its tokens, how many of them have KV in the cache, and the
// blocks holding that KV. The scheduler decides what runs; the engine owns these objects.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "engine/request.h"
#include "engine/step_cost.h"
#include "engine/stop_matcher.h"
#include "kv/block_hash.h"
#include "kv/block_pool.h"
#include "sampling/sampler.h"

namespace edgeinfer {

class StreamDecoder;

enum class SeqStatus { Waiting, Running, Finished };

struct Sequence {
  using Clock = std::chrono::steady_clock;

  uint64_t id = 0;
  int32_t priority = 0;
  uint64_t arrival = 0;  // submission order, for FCFS within a priority
  SeqStatus status = SeqStatus::Waiting;

  std::vector<int32_t> tokens;  // prompt, then accepted generated tokens
  int32_t n_prompt = 0;
  int32_t max_tokens = 0;
  int32_t n_computed = 0;       // tokens [0, n_computed) have their KV in `blocks`
  std::vector<BlockId> blocks;  // block table
  std::vector<BlockHash> hashes;  // hashes of the full blocks of `tokens`
  int32_t n_blocks_cached = 0;    // blocks [0, n_blocks_cached) are registered in the prefix cache
  uint64_t cache_salt = 0;

  std::vector<int32_t> draft;  // speculative tokens riding along in the current step
  uint64_t scheduled_step = 0;  // the scheduler's step number when it was last scheduled
  int32_t draft_len = 0;        // current adaptive draft length (0: not set yet)
  DraftRecord draft_record;     // how often its drafts were accepted

  // Request-side state (the scheduler does not look at these).
  GenerationRequest req;
  std::unique_ptr<Sampler> sampler;
  std::unique_ptr<StreamDecoder> decoder;
  std::unique_ptr<StopMatcher> stop;
  RequestTimings timings;
  Clock::time_point t_arrival, t_scheduled, t_first_token;
  bool scheduled_once = false;
  bool cancel_requested = false;

  int32_t n_generated() const { return static_cast<int32_t>(tokens.size()) - n_prompt; }
  // Tokens still to run before the next token can be sampled (>= 1 while running).
  int32_t n_pending() const { return static_cast<int32_t>(tokens.size()) - n_computed; }
};

}  // namespace edgeinfer
