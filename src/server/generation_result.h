#pragma once
// What a finished (or finishing) generation produced, accumulated from its engine events.
#include <string>
#include <vector>

#include "engine/request.h"

namespace edgeinfer::server {

struct GenerationResult {
  std::string text;
  std::vector<int32_t> tokens;
  std::vector<TokenLogprobs> logprobs;
  bool done = false;
  FinishReason finish = FinishReason::None;
  bool time_limited = false;  // cancelled by the server because t_max_predict_ms ran out
  std::string stop_match;
  std::string error;
  RequestTimings timings;

  // Adds one event (text, tokens, logprobs; the final one's finish state and timings).
  void add(const TokenEvent& ev);
  // The finish reason clients see: "stop" or "length" (a time limit reads as "length").
  const char* client_finish_reason() const;
  // Whether the request ended without a result to report (engine error, or cancelled by the
  // server's shutdown rather than by a limit the client set).
  bool failed() const;
};

}  // namespace edgeinfer::server
