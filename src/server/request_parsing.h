#pragma once
// The JSON bodies the server accepts, parsed and validated into typed requests. Everything that
// can be checked without the model is checked here (types, ranges, required fields, unsupported
// options); what needs the model (token counts against the context, vocabulary ids, FIM tokens)
// is checked by PromptBuilder. Every failure is an ApiError 400 naming the field.
//
// Accepted beyond OpenAI's fields (llama.cpp / vLLM extensions): top_k, min_p, repeat_penalty,
// repeat_last_n, ignore_eos, n_predict, cache_prompt, priority, t_max_predict_ms.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sampling/sampling_params.h"
#include "server/json_fields.h"
#include "tokenizer/fim.h"

namespace edgeinfer::server {

// Parses a request body. Malformed JSON (including invalid UTF-8 inside strings, lone
// surrogate escapes, or nesting deeper than 64 levels) is a 400 with code "invalid_json".
json parse_body(std::string_view body);

// Settings shared by every generating endpoint.
struct GenerationOptions {
  SamplingParams sampling;
  std::optional<int32_t> max_tokens;  // absent: until end of generation or the context is full
  std::string max_tokens_param = "max_tokens";  // the field it came from, for errors
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;         // stream_options.include_usage
  int32_t n_logprobs = -1;            // -1: none; 0: the chosen token's; n: plus the n most likely
  bool ignore_eos = false;
  std::optional<int32_t> priority;    // larger runs first; the X-Priority header is the fallback
  int64_t t_max_predict_ms = 0;       // 0: no time limit on generation
};

struct ChatRequest {
  std::string model;   // "" when not given
  json messages;       // array of {role, content (string)}; content parts flattened to text
  json tools;          // null or array, passed to the chat template
  GenerationOptions gen;
};

struct CompletionRequest {
  std::string model;
  std::optional<std::string> prompt_text;  // prompt given as text ...
  std::vector<int32_t> prompt_tokens;      // ... or as token ids
  std::optional<std::string> suffix;       // fill-in-the-middle: text after the insertion point
  GenerationOptions gen;
};

// llama.cpp's /infill (what editor plugins such as llama.vim send).
struct InfillRequest {
  std::string input_prefix, input_suffix, prompt;
  std::vector<FimChunk> input_extra;
  GenerationOptions gen;
};

struct TokenizeRequest {
  std::string content;
  bool add_special = false;
  bool parse_special = true;
  bool with_pieces = false;
};

struct DetokenizeRequest {
  std::vector<int32_t> tokens;  // only checked to be integers here; the vocabulary range later
};

ChatRequest parse_chat_request(const json& body);
CompletionRequest parse_completion_request(const json& body);
InfillRequest parse_infill_request(const json& body);
TokenizeRequest parse_tokenize_request(const json& body);
DetokenizeRequest parse_detokenize_request(const json& body);

// Limits on sizes a request may declare (the body size limit bounds the rest).
inline constexpr int64_t kMaxTokensLimit = 1 << 30;
inline constexpr size_t kMaxStopStrings = 16;
inline constexpr size_t kMaxStopBytes = 1024;
inline constexpr int64_t kMaxTopLogprobs = 20;
inline constexpr int32_t kPriorityLimit = 1000;  // priority within [-limit, limit]

// Parses an X-Priority header value ("" → nullopt); 400 naming the header when malformed.
std::optional<int32_t> parse_priority_header(std::string_view value);

}  // namespace edgeinfer::server
