#include "server/request_parsing.h"

#include <limits>

#include "server/api_error.h"

namespace edgeinfer::server {

namespace {

constexpr int kMaxJsonDepth = 64;
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// Nesting depth outside strings; nlohmann's parser would accept any depth, and a body of a
// million '[' would cost a deep recursion later (dump, destruction, templates).
void check_depth(std::string_view s) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : s) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        throw ApiError(400, "the request body nests arrays/objects deeper than " + std::to_string(kMaxJsonDepth) + " levels",
                       "invalid_request_error", "", "invalid_json");
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

[[noreturn]] void missing(const std::string& param) {
  throw invalid_param(param, "'" + param + "' is required", "missing_required_parameter");
}

[[noreturn]] void unsupported(const std::string& param, const std::string& what) {
  throw invalid_param(param, what, "unsupported_parameter");
}

std::vector<std::string> parse_stop(const json& body) {
  std::vector<std::string> out;
  const json* v = find_field(body, "stop");
  if (!v) return out;
  auto add = [&](const json& s, const std::string& param) {
    const std::string& str = as_string(s, param);
    if (str.empty()) throw invalid_param(param, "'" + param + "' must not be an empty string");
    if (str.size() > kMaxStopBytes) {
      throw invalid_param(param, "'" + param + "' is longer than " + std::to_string(kMaxStopBytes) + " bytes");
    }
    out.push_back(str);
  };
  if (v->is_string()) {
    add(*v, "stop");
  } else if (v->is_array()) {
    if (v->size() > kMaxStopStrings) {
      throw invalid_param("stop", "'stop' has " + std::to_string(v->size()) + " strings; at most " +
                                      std::to_string(kMaxStopStrings) + " are allowed");
    }
    for (size_t i = 0; i < v->size(); ++i) add((*v)[i], "stop[" + std::to_string(i) + "]");
  } else {
    throw invalid_param("stop", std::string("'stop' must be a string or an array of strings, got ") + json_type_name(*v),
                        "invalid_type");
  }
  return out;
}

// Sampling fields and the other options every generating endpoint shares.
void parse_common(const json& body, GenerationOptions& g) {
  SamplingParams& s = g.sampling;
  if (auto v = opt_number(body, "temperature", 0.0, 2.0)) s.temperature = static_cast<float>(*v);
  if (auto v = opt_number(body, "top_p", 0.0, 1.0)) {
    if (*v <= 0.0) throw invalid_param("top_p", "'top_p' must be greater than 0 (use temperature 0 for greedy decoding)");
    s.top_p = static_cast<float>(*v);
  }
  if (auto v = opt_int(body, "top_k", 0, 1 << 24)) s.top_k = static_cast<int32_t>(*v);
  if (auto v = opt_number(body, "min_p", 0.0, 1.0)) s.min_p = static_cast<float>(*v);
  if (auto v = opt_number(body, "presence_penalty", -2.0, 2.0)) s.presence_penalty = static_cast<float>(*v);
  if (auto v = opt_number(body, "frequency_penalty", -2.0, 2.0)) s.frequency_penalty = static_cast<float>(*v);
  if (auto v = opt_number(body, "repeat_penalty", 0.0, 10.0)) {
    if (*v <= 0.0) throw invalid_param("repeat_penalty", "'repeat_penalty' must be greater than 0");
    s.repeat_penalty = static_cast<float>(*v);
  }
  if (auto v = opt_int(body, "repeat_last_n", -1, 1 << 24)) s.repeat_last_n = static_cast<int32_t>(*v);
  if (auto v = opt_int(body, "seed", -1, kInt64Max)) {
    s.seed = *v < 0 ? SamplingParams::kRandomSeed : static_cast<uint64_t>(*v);
  }
  g.stop = parse_stop(body);
  if (auto v = opt_bool(body, "stream")) g.stream = *v;
  if (const json* so = find_field(body, "stream_options")) {
    if (!so->is_object()) {
      throw invalid_param("stream_options", std::string("'stream_options' must be an object, got ") + json_type_name(*so),
                          "invalid_type");
    }
    if (auto v = opt_bool(*so, "include_usage")) g.include_usage = *v;
  }
  if (auto v = opt_bool(body, "ignore_eos")) g.ignore_eos = *v;
  if (auto v = opt_int(body, "priority", -kPriorityLimit, kPriorityLimit)) g.priority = static_cast<int32_t>(*v);
  if (auto v = opt_int(body, "t_max_predict_ms", 0, 1'000'000'000)) g.t_max_predict_ms = *v;
  opt_bool(body, "cache_prompt");  // accepted for llama.cpp clients; the prefix cache is always on
  opt_string(body, "user", 4096);  // accepted, unused

  if (auto n = opt_int(body, "n", 1, 128); n && *n != 1) {
    unsupported("n", "'n' must be 1: one choice per request is supported");
  }
  if (auto n = opt_int(body, "best_of", 1, 128); n && *n != 1) {
    unsupported("best_of", "'best_of' must be 1");
  }
  if (const json* lb = find_field(body, "logit_bias")) {
    if (!lb->is_object()) throw invalid_param("logit_bias", "'logit_bias' must be an object", "invalid_type");
    if (!lb->empty()) unsupported("logit_bias", "'logit_bias' is not supported");
  }
  if (const json* rf = find_field(body, "response_format")) {
    if (!rf->is_object()) {
      throw invalid_param("response_format", std::string("'response_format' must be an object, got ") + json_type_name(*rf),
                          "invalid_type");
    }
    const json* type = find_field(*rf, "type");
    if (!type) missing("response_format.type");
    const std::string& t = as_string(*type, "response_format.type");
    if (t == "json_object" || t == "json_schema") {
      unsupported("response_format", "response_format type '" + t +
                                          "' is not supported yet (it needs grammar-constrained decoding); use 'text'");
    }
    if (t != "text") {
      throw invalid_param("response_format.type", "'response_format.type' must be 'text', 'json_object' or 'json_schema'");
    }
  }
}

// max_completion_tokens (newer OpenAI name) wins over max_tokens; n_predict is llama.cpp's,
// where -1 means "no limit".
void parse_max_tokens(const json& body, GenerationOptions& g, bool allow_n_predict) {
  for (const char* name : {"max_completion_tokens", "max_tokens"}) {
    if (auto v = opt_int(body, name, 1, kMaxTokensLimit)) {
      g.max_tokens = static_cast<int32_t>(*v);
      g.max_tokens_param = name;
      return;
    }
  }
  if (allow_n_predict) {
    if (auto v = opt_int(body, "n_predict", -1, kMaxTokensLimit)) {
      g.max_tokens_param = "n_predict";
      if (*v >= 0) g.max_tokens = static_cast<int32_t>(*v);
    }
  }
}

std::string parse_model(const json& body) { return opt_string(body, "model", 1024).value_or(""); }

// Content: a string, an array of text parts (flattened, joined by newlines), or null.
json flatten_content(const json& content, const std::string& param) {
  if (content.is_null() || content.is_string()) return content;
  if (!content.is_array()) {
    throw invalid_param(param, "'" + param + "' must be a string or an array of content parts, got " +
                                   json_type_name(content), "invalid_type");
  }
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const std::string p = param + "[" + std::to_string(i) + "]";
    const json& part = content[i];
    if (!part.is_object()) throw invalid_param(p, "'" + p + "' must be an object", "invalid_type");
    const json* type = find_field(part, "type");
    if (!type) missing(p + ".type");
    const std::string& t = as_string(*type, p + ".type");
    if (t != "text") {
      throw invalid_param(p + ".type", "content part type '" + t + "' is not supported (only 'text')",
                          "unsupported_content_type");
    }
    const json* tx = find_field(part, "text");
    if (!tx) missing(p + ".text");
    if (i > 0) text += '\n';
    text += as_string(*tx, p + ".text");
  }
  return text;
}

json parse_messages(const json& body) {
  const json* m = find_field(body, "messages");
  if (!m) missing("messages");
  if (!m->is_array()) {
    throw invalid_param("messages", std::string("'messages' must be an array, got ") + json_type_name(*m), "invalid_type");
  }
  if (m->empty()) throw invalid_param("messages", "'messages' must contain at least one message", "empty_array");
  json out = json::array();
  for (size_t i = 0; i < m->size(); ++i) {
    const std::string p = "messages[" + std::to_string(i) + "]";
    const json& msg = (*m)[i];
    if (!msg.is_object()) {
      throw invalid_param(p, "'" + p + "' must be an object, got " + json_type_name(msg), "invalid_type");
    }
    const json* role = find_field(msg, "role");
    if (!role) missing(p + ".role");
    std::string r = as_string(*role, p + ".role");
    if (r == "developer") r = "system";  // newer OpenAI name; templates know "system"
    if (r != "system" && r != "user" && r != "assistant" && r != "tool" && r != "function") {
      throw invalid_param(p + ".role", "'" + p + ".role' must be one of system, developer, user, assistant, tool; got '" +
                                           r + "'");
    }
    json norm = msg;
    norm["role"] = r;
    auto it = msg.find("content");
    json content = it == msg.end() ? json(nullptr) : flatten_content(*it, p + ".content");
    if (content.is_null() && !(r == "assistant" && find_field(msg, "tool_calls"))) {
      missing(p + ".content");
    }
    norm["content"] = std::move(content);
    out.push_back(std::move(norm));
  }
  return out;
}

std::vector<int32_t> parse_token_array(const json& arr, const std::string& param) {
  std::vector<int32_t> ids;
  ids.reserve(arr.size());
  for (size_t i = 0; i < arr.size(); ++i) {
    ids.push_back(static_cast<int32_t>(as_int(arr[i], param + "[" + std::to_string(i) + "]", 0, kInt32Max)));
  }
  return ids;
}

}  // namespace

json parse_body(std::string_view body) {
  if (body.empty()) {
    throw ApiError(400, "the request body is empty; a JSON object is expected", "invalid_request_error", "", "invalid_json");
  }
  check_depth(body);
  try {
    return require_object(json::parse(body.begin(), body.end()));
  } catch (const json::parse_error& e) {
    throw ApiError(400, std::string("the request body is not valid JSON: ") + e.what(), "invalid_request_error", "",
                   "invalid_json");
  }
}

ChatRequest parse_chat_request(const json& body) {
  require_object(body);
  ChatRequest r;
  r.model = parse_model(body);
  r.messages = parse_messages(body);
  parse_common(body, r.gen);
  parse_max_tokens(body, r.gen, /*allow_n_predict=*/true);
  const bool logprobs = opt_bool(body, "logprobs").value_or(false);
  const auto top = opt_int(body, "top_logprobs", 0, kMaxTopLogprobs);
  if (top && !logprobs) throw invalid_param("top_logprobs", "'top_logprobs' requires 'logprobs': true");
  if (logprobs) r.gen.n_logprobs = static_cast<int32_t>(top.value_or(0));
  if (const json* t = find_field(body, "tools")) {
    if (!t->is_array()) throw invalid_param("tools", std::string("'tools' must be an array, got ") + json_type_name(*t), "invalid_type");
    for (size_t i = 0; i < t->size(); ++i) {
      if (!(*t)[i].is_object()) {
        throw invalid_param("tools[" + std::to_string(i) + "]", "'tools[" + std::to_string(i) + "]' must be an object",
                            "invalid_type");
      }
    }
    if (!t->empty()) r.tools = *t;
  }
  return r;
}

CompletionRequest parse_completion_request(const json& body) {
  require_object(body);
  CompletionRequest r;
  r.model = parse_model(body);
  const json* p = find_field(body, "prompt");
  if (!p) missing("prompt");
  if (p->is_string()) {
    r.prompt_text = p->get<std::string>();
  } else if (p->is_array()) {
    if (p->empty()) throw invalid_param("prompt", "'prompt' must not be an empty array", "empty_array");
    const json& first = (*p)[0];
    if (first.is_number()) {
      r.prompt_tokens = parse_token_array(*p, "prompt");
    } else if (p->size() > 1) {
      unsupported("prompt", "'prompt' has " + std::to_string(p->size()) + " prompts; one prompt per request is supported");
    } else if (first.is_string()) {
      r.prompt_text = first.get<std::string>();
    } else if (first.is_array()) {
      if (first.empty()) throw invalid_param("prompt[0]", "'prompt[0]' must not be an empty array", "empty_array");
      r.prompt_tokens = parse_token_array(first, "prompt[0]");
    } else {
      throw invalid_param("prompt[0]", std::string("'prompt[0]' must be a string, a token id or an array of token ids, got ") +
                                           json_type_name(first), "invalid_type");
    }
  } else {
    throw invalid_param("prompt", std::string("'prompt' must be a string, an array of token ids or an array of one string, got ") +
                                      json_type_name(*p), "invalid_type");
  }
  if (auto s = opt_string(body, "suffix")) r.suffix = *s;
  if (opt_bool(body, "echo").value_or(false)) unsupported("echo", "'echo' is not supported");
  parse_common(body, r.gen);
  parse_max_tokens(body, r.gen, /*allow_n_predict=*/true);
  if (auto lp = opt_int(body, "logprobs", 0, kMaxTopLogprobs)) r.gen.n_logprobs = static_cast<int32_t>(*lp);
  return r;
}

InfillRequest parse_infill_request(const json& body) {
  require_object(body);
  InfillRequest r;
  r.input_prefix = opt_string(body, "input_prefix").value_or("");
  r.input_suffix = opt_string(body, "input_suffix").value_or("");
  if (const json* p = find_field(body, "prompt")) r.prompt = as_string(*p, "prompt");
  if (const json* ex = find_field(body, "input_extra")) {
    if (!ex->is_array()) {
      throw invalid_param("input_extra", std::string("'input_extra' must be an array, got ") + json_type_name(*ex),
                          "invalid_type");
    }
    for (size_t i = 0; i < ex->size(); ++i) {
      const std::string p = "input_extra[" + std::to_string(i) + "]";
      const json& c = (*ex)[i];
      if (!c.is_object()) throw invalid_param(p, "'" + p + "' must be an object with filename and text", "invalid_type");
      FimChunk chunk;
      if (const json* f = find_field(c, "filename")) chunk.filename = as_string(*f, p + ".filename");
      const json* t = find_field(c, "text");
      if (!t) missing(p + ".text");
      chunk.text = as_string(*t, p + ".text");
      r.input_extra.push_back(std::move(chunk));
    }
  }
  parse_common(body, r.gen);
  parse_max_tokens(body, r.gen, /*allow_n_predict=*/true);
  return r;
}

TokenizeRequest parse_tokenize_request(const json& body) {
  require_object(body);
  TokenizeRequest r;
  const json* c = find_field(body, "content");
  if (!c) missing("content");
  r.content = as_string(*c, "content");
  r.add_special = opt_bool(body, "add_special").value_or(false);
  r.parse_special = opt_bool(body, "parse_special").value_or(true);
  r.with_pieces = opt_bool(body, "with_pieces").value_or(false);
  return r;
}

DetokenizeRequest parse_detokenize_request(const json& body) {
  require_object(body);
  DetokenizeRequest r;
  const json* t = find_field(body, "tokens");
  if (!t) missing("tokens");
  if (!t->is_array()) {
    throw invalid_param("tokens", std::string("'tokens' must be an array of token ids, got ") + json_type_name(*t),
                        "invalid_type");
  }
  r.tokens = parse_token_array(*t, "tokens");
  return r;
}

std::optional<int32_t> parse_priority_header(std::string_view value) {
  if (value.empty()) return std::nullopt;
  int64_t v = 0;
  size_t i = 0;
  bool neg = false;
  if (value[0] == '-' || value[0] == '+') {
    neg = value[0] == '-';
    i = 1;
  }
  if (i == value.size() || value.size() - i > 6) {
    throw invalid_param("X-Priority", "the X-Priority header must be an integer within [-1000, 1000]");
  }
  for (; i < value.size(); ++i) {
    if (value[i] < '0' || value[i] > '9') {
      throw invalid_param("X-Priority", "the X-Priority header must be an integer within [-1000, 1000]");
    }
    v = v * 10 + (value[i] - '0');
  }
  if (neg) v = -v;
  if (v < -kPriorityLimit || v > kPriorityLimit) {
    throw invalid_param("X-Priority", "the X-Priority header must be an integer within [-1000, 1000]");
  }
  return static_cast<int32_t>(v);
}

}  // namespace edgeinfer::server
