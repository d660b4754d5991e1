#pragma once
// What each endpoint streams, as SSE bytes:
//  chat:        a first chunk with the assistant role, content deltas, a last chunk with
//               finish_reason + usage + timings, (stream_options.include_usage) a chunk with
//               empty choices and the usage, then "data: [DONE]";
//  completions: text deltas, the finish chunk with usage + timings, optional usage chunk, [DONE];
//  infill:      llama.cpp's {"content", "tokens", "stop": false} events, then the full result
//               with "stop": true (no [DONE], as llama.cpp).
// A request that fails mid-stream (engine error, server shutdown) ends with an OpenAI error
// event {"error": {...}} instead of a finish chunk.
#include <memory>
#include <string>

#include "engine/request.h"
#include "server/generation_result.h"
#include "server/response_format.h"

namespace edgeinfer::server {

class StreamFormat {
 public:
  virtual ~StreamFormat() = default;
  virtual std::string begin() { return {}; }
  // An event with new text or tokens (the final event included, before end()).
  virtual std::string delta(const TokenEvent& ev) = 0;
  // After the final event: `r` holds the whole result.
  virtual std::string end(const GenerationResult& r) = 0;
};

std::unique_ptr<StreamFormat> chat_stream_format(ResponseMeta meta, const Tokenizer& tok, bool logprobs,
                                                 bool include_usage);
std::unique_ptr<StreamFormat> completion_stream_format(ResponseMeta meta, const Tokenizer& tok, bool logprobs,
                                                       bool include_usage);
std::unique_ptr<StreamFormat> infill_stream_format(std::string model);

// The error event for a failed result.
json stream_error_json(const GenerationResult& r);

}  // namespace edgeinfer::server
