#include "server/generation_result.h"

namespace edgeinfer::server {

void GenerationResult::add(const TokenEvent& ev) {
  text += ev.text;
  tokens.insert(tokens.end(), ev.tokens.begin(), ev.tokens.end());
  logprobs.insert(logprobs.end(), ev.logprobs.begin(), ev.logprobs.end());
  if (ev.done) {
    done = true;
    finish = ev.finish;
    stop_match = ev.stop_match;
    error = ev.error;
    timings = ev.timings;
  }
}

const char* GenerationResult::client_finish_reason() const {
  if (finish == FinishReason::Stop) return "stop";
  return "length";
}

bool GenerationResult::failed() const {
  return finish == FinishReason::Error || (finish == FinishReason::Cancelled && !time_limited);
}

}  // namespace edgeinfer::server
