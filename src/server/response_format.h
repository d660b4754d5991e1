#pragma once
// Response bodies: OpenAI's chat.completion / text_completion objects and their stream chunks,
// and llama.cpp's /infill shape. Every final response carries
//   "usage":   {prompt_tokens, completion_tokens, total_tokens, prompt_tokens_details: {cached_tokens}}
//   "timings": {queue_ms, prompt_n, cache_n, prompt_ms, prompt_per_second, predicted_n,
//               predicted_ms, predicted_per_token_ms, predicted_per_second, ttft_ms,
//               draft_n, draft_n_accepted, preemptions}
// prompt_ms is the prefill (first scheduled → first token), predicted_ms the decode (first
// token → last), queue_ms arrival → first scheduled.
#include <cstdint>
#include <string>
#include <vector>

#include "server/generation_result.h"
#include "server/json_fields.h"
#include "tokenizer/tokenizer.h"

namespace edgeinfer::server {

// Identity shared by a response and all its chunks.
struct ResponseMeta {
  std::string id;       // "chatcmpl-...", "cmpl-..."
  int64_t created = 0;  // unix seconds
  std::string model;
};

json usage_json(const RequestTimings& t);
json timings_json(const RequestTimings& t);

// OpenAI chat logprobs: {"content": [{token, logprob, bytes, top_logprobs: [...]}]}.
json chat_logprobs_json(const Tokenizer& tok, const std::vector<TokenLogprobs>& lps);
// OpenAI completions logprobs: {tokens, token_logprobs, top_logprobs: [{piece: lp}], text_offset}.
json completion_logprobs_json(const Tokenizer& tok, const std::vector<TokenLogprobs>& lps, size_t text_offset);

json chat_completion_json(const ResponseMeta& m, const GenerationResult& r, const Tokenizer& tok, bool logprobs);
// One stream chunk; `finish_reason` null for intermediate chunks.
json chat_chunk_json(const ResponseMeta& m, json delta, json finish_reason, json logprobs);

json completion_json(const ResponseMeta& m, const GenerationResult& r, const Tokenizer& tok, bool logprobs);
json completion_chunk_json(const ResponseMeta& m, const std::string& text, json finish_reason, json logprobs);

// llama.cpp /infill (and /completion) shape: {content, tokens, stop, model, tokens_predicted,
// tokens_evaluated, tokens_cached, stop_type ("eos", "word", "limit"), stopping_word, truncated,
// timings, usage}.
json infill_json(const std::string& model, const GenerationResult& r);
json infill_chunk_json(const std::string& content, const std::vector<int32_t>& tokens);

}  // namespace edgeinfer::server
