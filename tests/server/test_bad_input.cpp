// The bad-input table: each malformed or abusive request is answered 4xx with an OpenAI-style
// {"error": {"message", "type", "param", "code"}} body naming the field at fault, and the server
// keeps serving normally afterwards.
#include <gtest/gtest.h>

#include "server_test_util.h"

namespace edgeinfer::server::test {
namespace {

struct BadCase {
  const char* name;
  std::string method;   // "POST" or "GET"
  std::string path;
  std::string body;     // sent as is
  int status;
  const char* param;    // expected error.param; nullptr = must be null; "*" = anything
  const char* code;     // expected error.code; "*" = anything
  httplib::Headers headers = {};
};

std::string chat(const std::string& extra, const std::string& messages = R"([{"role":"user","content":"hi"}])") {
  return R"({"model":"stories260K","messages":)" + messages + (extra.empty() ? "" : "," + extra) + "}";
}

std::string completion(const std::string& extra) { return R"({"prompt":"Once upon a time")" + (extra.empty() ? "" : "," + extra) + "}"; }

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

std::string token_array(size_t n) {
  std::string s = "[1";
  for (size_t i = 1; i < n; ++i) s += ",300";
  return s + "]";
}

std::vector<BadCase> cases() {
  const std::string C = "/v1/chat/completions", P = "/v1/completions";
  return {
      {"malformed JSON", "POST", C, R"({"messages": [)", 400, nullptr, "invalid_json"},
      {"trailing garbage", "POST", C, chat("") + "x", 400, nullptr, "invalid_json"},
      {"empty body", "POST", C, "", 400, nullptr, "invalid_json"},
      {"body is an array", "POST", C, "[1,2,3]", 400, nullptr, "invalid_body"},
      {"body is a string", "POST", C, "\"hello\"", 400, nullptr, "invalid_body"},
      {"invalid UTF-8", "POST", C, chat("", "[{\"role\":\"user\",\"content\":\"\xC3\x28 bad\"}]"), 400, nullptr, "invalid_json"},
      {"overlong UTF-8", "POST", C, chat("", "[{\"role\":\"user\",\"content\":\"\xC0\xAF\"}]"), 400, nullptr, "invalid_json"},
      {"lone surrogate escape", "POST", C, chat("", R"([{"role":"user","content":"\udc00"}])"), 400, nullptr, "invalid_json"},
      {"nesting too deep", "POST", C, std::string(5000, '[') + std::string(5000, ']'), 400, nullptr, "invalid_json"},
      {"missing messages", "POST", C, R"({"model":"stories260K"})", 400, "messages", "missing_required_parameter"},
      {"messages not an array", "POST", C, chat("", R"("hi")"), 400, "messages", "invalid_type"},
      {"empty messages", "POST", C, chat("", "[]"), 400, "messages", "empty_array"},
      {"message not an object", "POST", C, chat("", R"(["hi"])"), 400, "messages[0]", "invalid_type"},
      {"missing role", "POST", C, chat("", R"([{"content":"hi"}])"), 400, "messages[0].role", "missing_required_parameter"},
      {"unknown role", "POST", C, chat("", R"([{"role":"wizard","content":"hi"}])"), 400, "messages[0].role", "invalid_value"},
      {"content of wrong type", "POST", C, chat("", R"([{"role":"user","content":42}])"), 400, "messages[0].content", "invalid_type"},
      {"missing content", "POST", C, chat("", R"([{"role":"user"}])"), 400, "messages[0].content", "missing_required_parameter"},
      {"image content part", "POST", C, chat("", R"([{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}])"), 400, "messages[0].content[0].type", "unsupported_content_type"},
      {"unknown model", "POST", C, R"({"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]})", 404, "model", "model_not_found"},
      {"model of wrong type", "POST", C, R"({"model":7,"messages":[{"role":"user","content":"hi"}]})", 400, "model", "invalid_type"},
      {"temperature as string", "POST", C, chat(R"("temperature":"hot")"), 400, "temperature", "invalid_type"},
      {"negative temperature", "POST", C, chat(R"("temperature":-1)"), 400, "temperature", "invalid_value"},
      {"absurd temperature", "POST", C, chat(R"("temperature":1e300)"), 400, "temperature", "invalid_value"},
      {"top_p zero", "POST", C, chat(R"("top_p":0)"), 400, "top_p", "invalid_value"},
      {"top_p above one", "POST", C, chat(R"("top_p":1.5)"), 400, "top_p", "invalid_value"},
      {"negative max_tokens", "POST", C, chat(R"("max_tokens":-5)"), 400, "max_tokens", "invalid_value"},
      {"zero max_tokens", "POST", C, chat(R"("max_tokens":0)"), 400, "max_tokens", "invalid_value"},
      {"absurd max_tokens", "POST", C, chat(R"("max_tokens":1e15)"), 400, "max_tokens", "invalid_value"},
      {"huge integer max_tokens", "POST", C, chat(R"("max_tokens":18446744073709551615)"), 400, "max_tokens", "invalid_value"},
      {"max_tokens beyond the context", "POST", C, chat(R"("max_tokens":5000)"), 400, "max_tokens", "context_length_exceeded"},
      {"max_completion_tokens beyond the context", "POST", C, chat(R"("max_completion_tokens":2049)"), 400, "max_completion_tokens", "context_length_exceeded"},
      {"prompt longer than the context", "POST", P, R"({"prompt":)" + token_array(2100) + "}", 400, "prompt", "context_length_exceeded"},
      {"prompt + max_tokens beyond the context", "POST", P, R"({"prompt":)" + token_array(2000) + R"(,"max_tokens":100})", 400, "max_tokens", "context_length_exceeded"},
      {"chat prompt longer than the context", "POST", C, chat("", R"([{"role":"user","content":")" + repeat("Once upon a time ", 700) + R"("}])"), 400, "messages", "context_length_exceeded"},
      {"n = 2", "POST", C, chat(R"("n":2)"), 400, "n", "unsupported_parameter"},
      {"stream not a boolean", "POST", C, chat(R"("stream":"yes")"), 400, "stream", "invalid_type"},
      {"stream_options not an object", "POST", C, chat(R"("stream":true,"stream_options":5)"), 400, "stream_options", "invalid_type"},
      {"too many stop strings", "POST", C, chat(R"("stop":["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q"])"), 400, "stop", "invalid_value"},
      {"empty stop string", "POST", C, chat(R"("stop":"")"), 400, "stop", "invalid_value"},
      {"stop of wrong type", "POST", C, chat(R"("stop":{"a":1})"), 400, "stop", "invalid_type"},
      {"response_format json_object", "POST", C, chat(R"("response_format":{"type":"json_object"})"), 400, "response_format", "unsupported_parameter"},
      {"response_format unknown type", "POST", C, chat(R"("response_format":{"type":"xml"})"), 400, "response_format.type", "invalid_value"},
      {"top_logprobs too large", "POST", C, chat(R"("logprobs":true,"top_logprobs":50)"), 400, "top_logprobs", "invalid_value"},
      {"top_logprobs without logprobs", "POST", C, chat(R"("top_logprobs":2)"), 400, "top_logprobs", "invalid_value"},
      {"seed not an integer", "POST", C, chat(R"("seed":1.5)"), 400, "seed", "invalid_type"},
      {"presence_penalty out of range", "POST", C, chat(R"("presence_penalty":5)"), 400, "presence_penalty", "invalid_value"},
      {"priority out of range", "POST", C, chat(R"("priority":1000000)"), 400, "priority", "invalid_value"},
      {"X-Priority not a number", "POST", C, chat(""), 400, "X-Priority", "invalid_value", {{"X-Priority", "high"}}},
      {"logit_bias", "POST", C, chat(R"("logit_bias":{"50":100})"), 400, "logit_bias", "unsupported_parameter"},
      {"tools not an array", "POST", C, chat(R"("tools":{"type":"function"})"), 400, "tools", "invalid_type"},
      {"completions without prompt", "POST", P, R"({"max_tokens":5})", 400, "prompt", "missing_required_parameter"},
      {"prompt token outside the vocabulary", "POST", P, R"({"prompt":[1,99999]})", 400, "prompt[1]", "invalid_value"},
      {"negative prompt token", "POST", P, R"({"prompt":[1,-1]})", 400, "prompt[1]", "invalid_value"},
      {"several prompts", "POST", P, R"({"prompt":["a","b"]})", 400, "prompt", "unsupported_parameter"},
      {"prompt of wrong type", "POST", P, R"({"prompt":{"text":"a"}})", 400, "prompt", "invalid_type"},
      {"empty prompt array", "POST", P, R"({"prompt":[]})", 400, "prompt", "empty_array"},
      {"suffix without FIM tokens", "POST", P, completion(R"("suffix":"end")"), 400, "suffix", "fim_not_supported"},
      {"echo", "POST", P, completion(R"("echo":true)"), 400, "echo", "unsupported_parameter"},
      {"infill without FIM tokens", "POST", "/infill", R"({"input_prefix":"a","input_suffix":"b"})", 400, nullptr, "fim_not_supported"},
      {"infill input_extra not an array", "POST", "/infill", R"({"input_prefix":"a","input_extra":"x"})", 400, "input_extra", "invalid_type"},
      {"infill n_predict absurd", "POST", "/infill", R"({"input_prefix":"a","n_predict":-7})", 400, "n_predict", "invalid_value"},
      {"tokenize without content", "POST", "/tokenize", R"({"text":"a"})", 400, "content", "missing_required_parameter"},
      {"detokenize tokens not an array", "POST", "/detokenize", R"({"tokens":"1 2"})", 400, "tokens", "invalid_type"},
      {"detokenize token outside the vocabulary", "POST", "/detokenize", R"({"tokens":[1,512]})", 400, "tokens[1]", "invalid_value"},
      {"unknown endpoint", "POST", "/v1/embeddings", R"({"input":"a"})", 404, nullptr, "not_found"},
      {"GET on a POST endpoint", "GET", C, "", 404, nullptr, "not_found"},
  };
}

TEST(BadInput, TableOfFourHundreds) {
  TestServer srv(test_options());
  const auto table = cases();
  ASSERT_GE(table.size(), 30u);
  for (const BadCase& c : table) {
    SCOPED_TRACE(c.name);
    const Reply r = c.method == "GET" ? get(srv.port(), c.path, c.headers) : post(srv.port(), c.path, c.body, c.headers);
    EXPECT_EQ(r.status, c.status) << r.body;
    EXPECT_GE(r.status, 400);
    EXPECT_LT(r.status, 500);
    ASSERT_TRUE(r.j.is_object() && r.j.contains("error")) << r.body;
    const json& e = r.j["error"];
    ASSERT_TRUE(e.is_object());
    EXPECT_TRUE(e.contains("message") && e["message"].is_string() && !e["message"].get<std::string>().empty());
    EXPECT_TRUE(e.contains("type") && e["type"].is_string());
    ASSERT_TRUE(e.contains("param"));
    ASSERT_TRUE(e.contains("code"));
    if (c.param == nullptr) {
      EXPECT_TRUE(e["param"].is_null()) << e.dump();
    } else if (std::string(c.param) != "*") {
      EXPECT_EQ(e["param"], c.param);
    }
    if (std::string(c.code) != "*") {
      EXPECT_EQ(e["code"], c.code);
    }
  }
  // The server is unaffected: it still answers health and generates.
  EXPECT_EQ(get(srv.port(), "/health").status, 200);
  const Reply ok = post(srv.port(), "/v1/chat/completions", chat(R"("max_tokens":4)"));
  EXPECT_EQ(ok.status, 200) << ok.body;
  const Reply m = get(srv.port(), "/metrics");
  EXPECT_EQ(metric(m.body, "edgeinfer:http_requests_total", "status=\"500\""), -1.0);  // no 500 ever
  EXPECT_GE(metric(m.body, "edgeinfer:http_requests_total", "status=\"400\""), 50.0);
}

}  // namespace
}  // namespace edgeinfer::server::test
