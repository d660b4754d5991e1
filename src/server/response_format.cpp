#include "server/response_format.h"

namespace edgeinfer::server {

namespace {

json bytes_json(const std::string& s) {
  json b = json::array();
  for (unsigned char c : s) b.push_back(static_cast<int>(c));
  return b;
}

double per_second(int32_t n, double ms) { return ms > 0 ? 1e3 * n / ms : 0.0; }

}  // namespace

json usage_json(const RequestTimings& t) {
  json u;
  u["prompt_tokens"] = t.n_prompt;
  u["completion_tokens"] = t.n_generated;
  u["total_tokens"] = t.n_prompt + t.n_generated;
  u["prompt_tokens_details"] = json{{"cached_tokens", t.n_cached}};
  return u;
}

json timings_json(const RequestTimings& t) {
  json j;
  j["queue_ms"] = t.queue_ms;
  j["prompt_n"] = t.n_prompt;
  j["cache_n"] = t.n_cached;
  j["prompt_ms"] = t.prefill_ms;
  j["prompt_per_second"] = per_second(t.n_prompt - t.n_cached, t.prefill_ms);
  j["predicted_n"] = t.n_generated;
  j["predicted_ms"] = t.decode_ms;
  j["predicted_per_token_ms"] = t.n_generated > 1 ? t.decode_ms / (t.n_generated - 1) : 0.0;
  j["predicted_per_second"] = per_second(t.n_generated > 1 ? t.n_generated - 1 : 0, t.decode_ms);
  j["ttft_ms"] = t.ttft_ms;
  j["draft_n"] = t.n_drafted;
  j["draft_n_accepted"] = t.n_accepted;
  j["preemptions"] = t.n_preempted;
  return j;
}

json chat_logprobs_json(const Tokenizer& tok, const std::vector<TokenLogprobs>& lps) {
  json content = json::array();
  for (const TokenLogprobs& lp : lps) {
    const std::string piece = tok.token_to_piece(lp.id);
    json item;
    item["token"] = piece;
    item["logprob"] = lp.logprob;
    item["bytes"] = bytes_json(piece);
    json top = json::array();
    for (const auto& [id, l] : lp.top) {
      const std::string p = tok.token_to_piece(id);
      top.push_back(json{{"token", p}, {"logprob", l}, {"bytes", bytes_json(p)}});
    }
    item["top_logprobs"] = std::move(top);
    content.push_back(std::move(item));
  }
  return json{{"content", std::move(content)}};
}

json completion_logprobs_json(const Tokenizer& tok, const std::vector<TokenLogprobs>& lps, size_t text_offset) {
  json tokens = json::array(), token_lps = json::array(), tops = json::array(), offsets = json::array();
  for (const TokenLogprobs& lp : lps) {
    const std::string piece = tok.token_to_piece(lp.id);
    tokens.push_back(piece);
    token_lps.push_back(lp.logprob);
    json top = json::object();
    for (const auto& [id, l] : lp.top) top[tok.token_to_piece(id)] = l;
    tops.push_back(std::move(top));
    offsets.push_back(text_offset);
    text_offset += piece.size();
  }
  json j;
  j["tokens"] = std::move(tokens);
  j["token_logprobs"] = std::move(token_lps);
  j["top_logprobs"] = std::move(tops);
  j["text_offset"] = std::move(offsets);
  return j;
}

namespace {

// The fields every OpenAI completion object and chunk shares, around its one choice.
json envelope(const ResponseMeta& m, const char* object, json choice) {
  json j;
  j["id"] = m.id;
  j["object"] = object;
  j["created"] = m.created;
  j["model"] = m.model;
  j["system_fingerprint"] = "edgeinfer";
  j["choices"] = json::array({std::move(choice)});
  return j;
}

}  // namespace

json chat_completion_json(const ResponseMeta& m, const GenerationResult& r, const Tokenizer& tok, bool logprobs) {
  json choice;
  choice["index"] = 0;
  choice["message"] = json{{"role", "assistant"}, {"content", r.text}};
  choice["logprobs"] = logprobs ? chat_logprobs_json(tok, r.logprobs) : json(nullptr);
  choice["finish_reason"] = r.client_finish_reason();
  json j = envelope(m, "chat.completion", std::move(choice));
  j["usage"] = usage_json(r.timings);
  j["timings"] = timings_json(r.timings);
  return j;
}

json chat_chunk_json(const ResponseMeta& m, json delta, json finish_reason, json logprobs) {
  json choice;
  choice["index"] = 0;
  choice["delta"] = std::move(delta);
  choice["logprobs"] = std::move(logprobs);
  choice["finish_reason"] = std::move(finish_reason);
  json j = envelope(m, "chat.completion.chunk", std::move(choice));
  return j;
}

json completion_json(const ResponseMeta& m, const GenerationResult& r, const Tokenizer& tok, bool logprobs) {
  json choice;
  choice["text"] = r.text;
  choice["index"] = 0;
  choice["logprobs"] = logprobs ? completion_logprobs_json(tok, r.logprobs, 0) : json(nullptr);
  choice["finish_reason"] = r.client_finish_reason();
  json j = envelope(m, "text_completion", std::move(choice));
  j["usage"] = usage_json(r.timings);
  j["timings"] = timings_json(r.timings);
  return j;
}

json completion_chunk_json(const ResponseMeta& m, const std::string& text, json finish_reason, json logprobs) {
  json choice;
  choice["text"] = text;
  choice["index"] = 0;
  choice["logprobs"] = std::move(logprobs);
  choice["finish_reason"] = std::move(finish_reason);
  json j = envelope(m, "text_completion", std::move(choice));
  return j;
}

json infill_json(const std::string& model, const GenerationResult& r) {
  json j;
  j["content"] = r.text;
  j["tokens"] = r.tokens;
  j["stop"] = true;
  j["model"] = model;
  j["tokens_predicted"] = r.timings.n_generated;
  j["tokens_evaluated"] = r.timings.n_prompt;
  j["tokens_cached"] = r.timings.n_cached;
  const bool word = r.finish == FinishReason::Stop && !r.stop_match.empty();
  j["stop_type"] = r.finish == FinishReason::Stop ? (word ? "word" : "eos") : "limit";
  j["stopping_word"] = r.stop_match;
  j["truncated"] = false;
  j["timings"] = timings_json(r.timings);
  j["usage"] = usage_json(r.timings);
  return j;
}

json infill_chunk_json(const std::string& content, const std::vector<int32_t>& tokens) {
  json j;
  j["content"] = content;
  j["tokens"] = tokens;
  j["stop"] = false;
  return j;
}

}  // namespace edgeinfer::server
