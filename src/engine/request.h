#pragma once
// What a client hands the serving engine, and what comes back: a generation request, and a
// stream of events (text deltas, then one final event with the finish reason and timings).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sampling/sampling_params.h"

namespace edgeinfer {

enum class FinishReason {
  None,       // still running (intermediate events)
  Stop,       // end-of-generation token or a stop string
  Length,     // max_tokens reached or the context window is full
  Cancelled,  // cancel() or the client went away
  Error,      // the request could not be served (message in TokenEvent::error)
};
const char* finish_reason_name(FinishReason r);  // "stop", "length", "cancelled", "error"

struct RequestTimings {
  double queue_ms = 0;    // arrival → first scheduled
  double prefill_ms = 0;  // first scheduled → first token sampled
  double decode_ms = 0;   // first token → finish
  double ttft_ms = 0;     // arrival → first token
  int32_t n_prompt = 0;
  int32_t n_cached = 0;     // prompt tokens whose KV came from the prefix cache
  int32_t n_generated = 0;
  int32_t n_drafted = 0;    // speculative tokens proposed
  int32_t n_accepted = 0;   // of those, accepted
  int32_t n_preempted = 0;  // times this request was preempted and recomputed
};

struct TokenLogprobs {
  int32_t id = -1;
  float logprob = 0;
  std::vector<std::pair<int32_t, float>> top;  // most likely first
};

struct TokenEvent {
  uint64_t request_id = 0;
  std::vector<int32_t> tokens;            // tokens accepted in this step (may be several with speculation)
  std::string text;                       // new text, UTF-8 complete; stop strings never appear
  std::vector<TokenLogprobs> logprobs;    // one per token when asked for
  bool done = false;
  FinishReason finish = FinishReason::None;
  std::string stop_match;  // the stop string that ended it, if any
  std::string error;       // when finish == Error
  RequestTimings timings;  // complete when done
};

// Called on the engine's thread, in order, for every event of the request; must return quickly
// (copy the event into a queue, write to a socket buffer...). The last call has done == true.
using EventSink = std::function<void(const TokenEvent&)>;

struct GenerationRequest {
  std::vector<int32_t> prompt;  // already tokenized (BOS included when the model wants one)
  SamplingParams sampling;
  int32_t max_tokens = 256;     // generated tokens at most
  std::vector<std::string> stop;
  bool ignore_eos = false;
  int32_t priority = 0;         // larger runs first and is preempted last
  int32_t n_logprobs = -1;      // -1: none; 0: the chosen token's; n: plus the n most likely
  bool speculative = true;      // allow prompt-lookup drafting (output is unchanged by it)
  // Tokens the output is expected to be (OpenAI's "predicted outputs": the original of a file
  // being edited): drafts come from it first, then from prompt lookup. Output is unchanged by it.
  std::vector<int32_t> prediction;
  bool show_special = false;    // render special tokens in text
  uint64_t cache_salt = 0;      // requests with different salts never share prefix blocks
  EventSink sink;
};

}  // namespace edgeinfer
