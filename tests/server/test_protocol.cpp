// Every endpoint against a live server on a loopback port (stories260K): response shapes, greedy
// output equal to llama.cpp's reference continuation, streaming equal to non-streaming, usage
// and timings, logprobs, stop strings, seeds, tokenize/detokenize, metrics, infill with a FIM
// vocabulary, chat templates, CORS, and /health while the model loads.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "server_test_util.h"
#include "util/data_path.h"

namespace edgeinfer::server::test {
namespace {

class Protocol : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { srv_ = new TestServer(test_options()); }
  static void TearDownTestSuite() {
    delete srv_;
    srv_ = nullptr;
  }
  static int port() { return srv_->port(); }
  static TestServer* srv_;
};
TestServer* Protocol::srv_ = nullptr;

json chat_body(const std::string& content, int max_tokens = 24) {
  return json{{"model", "stories260K"},
              {"messages", json::array({json{{"role", "user"}, {"content", content}}})},
              {"temperature", 0},
              {"max_tokens", max_tokens}};
}

void expect_usage_and_timings(const json& j) {
  ASSERT_TRUE(j.contains("usage")) << j.dump();
  const json& u = j["usage"];
  EXPECT_GT(u["prompt_tokens"].get<int>(), 0);
  EXPECT_EQ(u["total_tokens"].get<int>(), u["prompt_tokens"].get<int>() + u["completion_tokens"].get<int>());
  EXPECT_GE(u["prompt_tokens_details"]["cached_tokens"].get<int>(), 0);
  ASSERT_TRUE(j.contains("timings")) << j.dump();
  for (const char* k : {"queue_ms", "prompt_ms", "predicted_ms", "ttft_ms"}) {
    EXPECT_GE(j["timings"][k].get<double>(), 0.0) << k;
  }
  EXPECT_EQ(j["timings"]["prompt_n"], u["prompt_tokens"]);
  EXPECT_EQ(j["timings"]["predicted_n"], u["completion_tokens"]);
  EXPECT_EQ(j["timings"]["cache_n"], u["prompt_tokens_details"]["cached_tokens"]);
}

TEST_F(Protocol, HealthAndModels) {
  const Reply h = get(port(), "/health");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.j["status"], "ok");
  for (const char* path : {"/v1/models", "/models"}) {
    const Reply m = get(port(), path);
    ASSERT_EQ(m.status, 200);
    EXPECT_EQ(m.j["object"], "list");
    ASSERT_EQ(m.j["data"].size(), 1u);
    EXPECT_EQ(m.j["data"][0]["id"], "stories260K");
    EXPECT_EQ(m.j["data"][0]["object"], "model");
    EXPECT_EQ(m.j["data"][0]["meta"]["n_vocab"], 512);
    EXPECT_EQ(m.j["data"][0]["meta"]["n_ctx"], 2048);
  }
}

TEST_F(Protocol, GreedyCompletionsMatchReferenceContinuations) {
  // ref/stories260K.json greedy48: llama.cpp's argmax continuations.
  const std::ifstream f(data_dir() + "/ref/stories260K.json");
  ASSERT_TRUE(f.good()) << "reference data missing: " << data_dir();
  const json ref = json::parse(std::ifstream(data_dir() + "/ref/stories260K.json"));
  ASSERT_EQ(ref["greedy48"].size(), 3u);
  for (const json& g : ref["greedy48"]) {
    SCOPED_TRACE(g["prompt"].get<std::string>());
    const Reply r = post(port(), "/v1/completions",
                         json{{"model", "stories260K"}, {"prompt", g["prompt"]}, {"max_tokens", 48},
                              {"temperature", 0}, {"ignore_eos", true}});
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.j["object"], "text_completion");
    EXPECT_EQ(r.j["model"], "stories260K");
    EXPECT_EQ(r.j["id"].get<std::string>().rfind("cmpl-", 0), 0u);
    EXPECT_EQ(r.j["choices"][0]["text"], g["text"]);
    EXPECT_EQ(r.j["choices"][0]["finish_reason"], "length");
    EXPECT_EQ(r.j["usage"]["prompt_tokens"], g["prompt_tokens"].size());
    EXPECT_EQ(r.j["usage"]["completion_tokens"], 48);
    expect_usage_and_timings(r.j);
    // The same prompt as token ids gives the same text.
    const Reply t = post(port(), "/v1/completions",
                         json{{"prompt", g["prompt_tokens"]}, {"max_tokens", 48}, {"temperature", 0}, {"ignore_eos", true}});
    ASSERT_EQ(t.status, 200) << t.body;
    EXPECT_EQ(t.j["choices"][0]["text"], g["text"]);
  }
}

TEST_F(Protocol, ChatUsesTheTemplateAndMatchesCompletions) {
  const json body = chat_body("Once upon a time");
  const Reply tmpl = post(port(), "/apply-template", body);
  ASSERT_EQ(tmpl.status, 200) << tmpl.body;
  const std::string prompt = tmpl.j["prompt"];
  EXPECT_EQ(prompt, "<|im_start|>user\nOnce upon a time<|im_end|>\n<|im_start|>assistant\n");  // ChatML-style fallback
  const Reply ids = post(port(), "/tokenize", json{{"content", prompt}, {"add_special", true}});
  ASSERT_EQ(ids.status, 200);

  const Reply r = post(port(), "/v1/chat/completions", body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.j["object"], "chat.completion");
  EXPECT_EQ(r.j["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(r.j["choices"][0]["index"], 0);
  EXPECT_EQ(r.j["choices"][0]["message"]["role"], "assistant");
  const std::string content = r.j["choices"][0]["message"]["content"];
  EXPECT_FALSE(content.empty());
  EXPECT_EQ(r.j["usage"]["prompt_tokens"], ids.j["tokens"].size());
  expect_usage_and_timings(r.j);

  const Reply c = post(port(), "/v1/completions", json{{"prompt", prompt}, {"max_tokens", 24}, {"temperature", 0}});
  ASSERT_EQ(c.status, 200);
  EXPECT_EQ(c.j["choices"][0]["text"], content);
  EXPECT_EQ(c.j["choices"][0]["finish_reason"], r.j["choices"][0]["finish_reason"]);
}

TEST_F(Protocol, ChatStreamEqualsNonStream) {
  json body = chat_body("The little dog", 40);
  const Reply whole = post(port(), "/v1/chat/completions", body);
  ASSERT_EQ(whole.status, 200);
  body["stream"] = true;
  body["stream_options"] = json{{"include_usage", true}};
  const Stream s = post_stream(port(), "/v1/chat/completions", body);
  ASSERT_EQ(s.status, 200);
  ASSERT_TRUE(s.done()) << s.raw;
  const std::vector<json> ev = s.events();
  ASSERT_GE(ev.size(), 3u);
  EXPECT_EQ(ev[0]["object"], "chat.completion.chunk");
  EXPECT_EQ(ev[0]["choices"][0]["delta"]["role"], "assistant");
  std::string text;
  const std::string id = ev[0]["id"];
  size_t finish_at = 0;
  for (size_t i = 0; i < ev.size(); ++i) {
    EXPECT_EQ(ev[i]["id"], id);
    if (ev[i]["choices"].empty()) continue;
    const json& ch = ev[i]["choices"][0];
    if (ch["delta"].contains("content")) text += ch["delta"]["content"].get<std::string>();
    if (!ch["finish_reason"].is_null()) finish_at = i;
  }
  EXPECT_EQ(text, whole.j["choices"][0]["message"]["content"]);
  EXPECT_EQ(ev[finish_at]["choices"][0]["finish_reason"], whole.j["choices"][0]["finish_reason"]);
  expect_usage_and_timings(ev[finish_at]);
  // include_usage: one more chunk with no choices and the usage.
  const json& last = ev.back();
  EXPECT_TRUE(last["choices"].empty());
  EXPECT_EQ(last["usage"]["completion_tokens"], whole.j["usage"]["completion_tokens"]);
  EXPECT_EQ(last["usage"]["prompt_tokens"], whole.j["usage"]["prompt_tokens"]);
  EXPECT_EQ(finish_at + 1, ev.size() - 1);
}

TEST_F(Protocol, CompletionStream) {
  const json body = json{{"prompt", "Lily wanted to"}, {"max_tokens", 48}, {"temperature", 0}, {"ignore_eos", true},
                         {"stream", true}};
  const Stream s = post_stream(port(), "/v1/completions", body);
  ASSERT_EQ(s.status, 200);
  ASSERT_TRUE(s.done());
  std::string text;
  json finish;
  for (const json& e : s.events()) {
    EXPECT_EQ(e["object"], "text_completion");
    text += e["choices"][0]["text"].get<std::string>();
    if (!e["choices"][0]["finish_reason"].is_null()) finish = e;
  }
  EXPECT_EQ(text, " go on a walk. She saw a big box with a big box. She wanted to see what was inside. She wanted to see what");
  ASSERT_FALSE(finish.is_null());
  EXPECT_EQ(finish["choices"][0]["finish_reason"], "length");
  expect_usage_and_timings(finish);
  EXPECT_EQ(finish["usage"]["completion_tokens"], 48);
}

TEST_F(Protocol, Logprobs) {
  json body = chat_body("Once upon a time", 8);
  body["logprobs"] = true;
  body["top_logprobs"] = 3;
  const Reply r = post(port(), "/v1/chat/completions", body);
  ASSERT_EQ(r.status, 200) << r.body;
  const json& content = r.j["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.size(), r.j["usage"]["completion_tokens"].get<size_t>());
  for (const json& t : content) {
    EXPECT_LE(t["logprob"].get<double>(), 0.0);
    ASSERT_EQ(t["top_logprobs"].size(), 3u);
    // Greedy: the chosen token is the most likely one.
    EXPECT_EQ(t["top_logprobs"][0]["token"], t["token"]);
    EXPECT_NEAR(t["top_logprobs"][0]["logprob"].get<double>(), t["logprob"].get<double>(), 1e-5);
    EXPECT_GE(t["top_logprobs"][0]["logprob"].get<double>(), t["top_logprobs"][1]["logprob"].get<double>());
    EXPECT_EQ(t["bytes"].size(), t["token"].get<std::string>().size());
  }
  const Reply c = post(port(), "/v1/completions",
                       json{{"prompt", "Once upon a time"}, {"max_tokens", 6}, {"temperature", 0}, {"logprobs", 2}});
  ASSERT_EQ(c.status, 200) << c.body;
  const json& lp = c.j["choices"][0]["logprobs"];
  ASSERT_EQ(lp["tokens"].size(), 6u);
  ASSERT_EQ(lp["token_logprobs"].size(), 6u);
  ASSERT_EQ(lp["top_logprobs"][0].size(), 2u);
  EXPECT_EQ(lp["text_offset"][0], 0);
  std::string joined;
  for (const json& t : lp["tokens"]) joined += t.get<std::string>();
  EXPECT_EQ(joined, c.j["choices"][0]["text"]);
}

TEST_F(Protocol, StopStringsAndLength) {
  const Reply r = post(port(), "/v1/completions",
                       json{{"prompt", "Once upon a time"}, {"max_tokens", 48}, {"temperature", 0}, {"stop", "Lily"}});
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.j["choices"][0]["text"], ", there was a little girl named ");
  EXPECT_EQ(r.j["choices"][0]["finish_reason"], "stop");
  const Reply l = post(port(), "/v1/completions",
                       json{{"prompt", "Once upon a time"}, {"max_tokens", 3}, {"temperature", 0}});
  EXPECT_EQ(l.j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(l.j["usage"]["completion_tokens"], 3);
}

TEST_F(Protocol, SeedMakesSamplingRepeatable) {
  const json body = json{{"prompt", "Once upon a time"}, {"max_tokens", 32}, {"temperature", 1.0}, {"seed", 1234}};
  const Reply a = post(port(), "/v1/completions", body);
  const Reply b = post(port(), "/v1/completions", body);
  ASSERT_EQ(a.status, 200);
  EXPECT_EQ(a.j["choices"][0]["text"], b.j["choices"][0]["text"]);
}

TEST_F(Protocol, TokenizeDetokenize) {
  const Reply t = post(port(), "/tokenize", json{{"content", "Once upon a time"}, {"add_special", true}});
  ASSERT_EQ(t.status, 200);
  EXPECT_EQ(t.j["tokens"], json::parse("[1, 403, 407, 261, 378]"));
  const Reply p = post(port(), "/tokenize", json{{"content", "Once upon"}, {"with_pieces", true}});
  ASSERT_EQ(p.j["tokens"].size(), 2u);
  EXPECT_EQ(p.j["tokens"][0]["id"], 403);
  EXPECT_EQ(p.j["tokens"][0]["piece"], " Once");
  const Reply d = post(port(), "/detokenize", json{{"tokens", json::parse("[403, 407, 261, 378]")}});
  ASSERT_EQ(d.status, 200);
  EXPECT_EQ(d.j["content"], "Once upon a time");
}

TEST_F(Protocol, MetricsAndStats) {
  ASSERT_EQ(post(port(), "/v1/completions", json{{"prompt", "Once"}, {"max_tokens", 4}, {"temperature", 0}}).status, 200);
  // Engine counters are updated before the final event goes out; the HTTP status is counted by
  // the server's logger just after the response is written, so give that a moment.
  Reply m = get(port(), "/metrics");
  for (int i = 0; i < 100 && metric(m.body, "edgeinfer:http_requests_total", "status=\"200\"") < 1.0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    m = get(port(), "/metrics");
  }
  ASSERT_EQ(m.status, 200);
  EXPECT_NE(m.header("Content-Type").find("text/plain"), std::string::npos);
  for (const char* name :
       {"edgeinfer:time_to_first_token_seconds_count", "edgeinfer:time_per_output_token_seconds_count",
        "edgeinfer:e2e_request_latency_seconds_count", "edgeinfer:request_queue_time_seconds_count",
        "edgeinfer:prompt_tokens_total", "edgeinfer:generation_tokens_total", "edgeinfer:prefix_cache_queries_total",
        "edgeinfer:prefix_cache_hits_total", "edgeinfer:num_preemptions_total", "edgeinfer:num_requests_running",
        "edgeinfer:num_requests_waiting", "edgeinfer:kv_blocks_used", "edgeinfer:kv_blocks_total",
        "edgeinfer:kv_cache_usage_perc"}) {
    EXPECT_GE(metric(m.body, name), 0.0) << name;
  }
  EXPECT_GE(metric(m.body, "edgeinfer:time_to_first_token_seconds_count"), 1.0);
  EXPECT_GE(metric(m.body, "edgeinfer:generation_tokens_total"), 4.0);
  EXPECT_GT(metric(m.body, "edgeinfer:kv_blocks_total"), 0.0);
  EXPECT_GE(metric(m.body, "edgeinfer:request_success_total", "finished_reason=\"length\""), 1.0);
  EXPECT_GE(metric(m.body, "edgeinfer:http_requests_total", "status=\"200\""), 1.0);
  EXPECT_GE(metric(m.body, "edgeinfer:time_to_first_token_seconds_bucket", "le=\"+Inf\""), 1.0);
  EXPECT_NE(m.body.find("# TYPE edgeinfer:time_to_first_token_seconds histogram"), std::string::npos);

  const Reply s = get(port(), "/v1/stats");
  ASSERT_EQ(s.status, 200);
  for (const char* h : {"ttft", "tpot", "e2e", "queue"}) {
    const json& l = s.j["latency_ms"][h];
    EXPECT_GE(l["count"].get<int>(), 1) << h;
    EXPECT_LE(l["p50"].get<double>(), l["p90"].get<double>()) << h;
    EXPECT_LE(l["p90"].get<double>(), l["p99"].get<double>()) << h;
    EXPECT_LE(l["p99"].get<double>(), l["p999"].get<double>()) << h;
    EXPECT_LE(l["p999"].get<double>(), l["max"].get<double>() * 1.0000001) << h;
  }
  EXPECT_GT(s.j["latency_ms"]["ttft"]["p50"].get<double>(), 0.0);
  EXPECT_EQ(s.j["model"], "stories260K");
}

TEST_F(Protocol, PriorityAndModelNames) {
  json body = json{{"prompt", "Once"}, {"max_tokens", 2}};
  EXPECT_EQ(post(port(), "/v1/completions", body, {{"X-Priority", "5"}}).status, 200);
  body["priority"] = -3;
  EXPECT_EQ(post(port(), "/v1/completions", body).status, 200);
  for (const char* name : {"stories260K", "stories260K.gguf"}) {
    body["model"] = name;
    EXPECT_EQ(post(port(), "/v1/completions", body).status, 200) << name;
  }
}

TEST_F(Protocol, CorsOffByDefault) {
  const Reply r = get(port(), "/v1/models", {{"Origin", "http://example.test"}});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("Access-Control-Allow-Origin"), "");
  httplib::Client c("127.0.0.1", port());
  auto pre = c.Options("/v1/chat/completions", {{"Origin", "http://example.test"}});
  ASSERT_TRUE(pre);
  EXPECT_NE(pre->status, 204);
  EXPECT_FALSE(pre->has_header("Access-Control-Allow-Origin"));
}

TEST(ProtocolOptions, CorsWhenEnabled) {
  ServerOptions o = test_options();
  o.cors_origin = "http://editor.test";
  TestServer srv(o);
  const Reply r = get(srv.port(), "/v1/models", {{"Origin", "http://editor.test"}});
  EXPECT_EQ(r.header("Access-Control-Allow-Origin"), "http://editor.test");
  const Reply other = get(srv.port(), "/v1/models", {{"Origin", "http://evil.test"}});
  EXPECT_EQ(other.header("Access-Control-Allow-Origin"), "");
  httplib::Client c("127.0.0.1", srv.port());
  auto pre = c.Options("/v1/chat/completions", {{"Origin", "http://editor.test"}});
  ASSERT_TRUE(pre);
  EXPECT_EQ(pre->status, 204);
  EXPECT_EQ(pre->get_header_value("Access-Control-Allow-Origin"), "http://editor.test");
  EXPECT_NE(pre->get_header_value("Access-Control-Allow-Headers").find("Authorization"), std::string::npos);
}

TEST(ProtocolOptions, HealthIs503WhileLoading) {
  TestServer srv(test_options(), /*load=*/false);
  const Reply h = get(srv.port(), "/health");
  EXPECT_EQ(h.status, 503);
  EXPECT_EQ(h.j["status"], "loading");
  const Reply c = post(srv.port(), "/v1/chat/completions", json{{"messages", json::array()}});
  EXPECT_EQ(c.status, 503);
  EXPECT_EQ(c.j["error"]["code"], "model_loading");
  EXPECT_EQ(c.header("Retry-After"), "1");
  srv.server().load_model();
  EXPECT_EQ(get(srv.port(), "/health").status, 200);
}

TEST(ProtocolOptions, DraftModelSpeculation) {
  // --draft: stories260K drafting for itself (prompt lookup off, so every draft is the draft
  // model's): the greedy text is llama.cpp's reference continuation, and the drafts show in timings.
  ServerOptions o = test_options();
  o.draft_model_path = model_path("stories260K.gguf");
  o.engine.lookup.min_ngram = o.engine.lookup.max_ngram = 100000;
  o.engine.draft_cost_gate = false;  // every draft verified, whatever the timings
  TestServer srv(o);
  const json ref = json::parse(std::ifstream(data_dir() + "/ref/stories260K.json"));
  const json& g = ref["greedy48"][0];
  const Reply r = post(srv.port(), "/v1/completions",
                       json{{"prompt", g["prompt"]}, {"max_tokens", 48}, {"temperature", 0}, {"ignore_eos", true}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.j["choices"][0]["text"], g["text"]);
  EXPECT_GT(r.j["timings"]["draft_n"].get<int>(), 0) << r.body;
  EXPECT_EQ(r.j["timings"]["draft_n_accepted"], r.j["timings"]["draft_n"]) << r.body;
}

TEST(ProtocolOptions, DraftModelMissingIsALoadError) {
  ServerOptions o = test_options();
  o.draft_model_path = data_dir() + "/models/no-such-draft.gguf";
  TestServer srv(o, /*load=*/false);
  try {
    srv.server().load_model();
    ADD_FAILURE() << "a missing draft model loaded";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-draft.gguf"), std::string::npos) << e.what();
  }
}

TEST(ProtocolOptions, ChatTemplateFile) {
  ServerOptions o = test_options();
  o.chat_template_file = data_dir() + "/templates/Qwen-Qwen2.5-7B-Instruct.jinja";
  TestServer srv(o);
  const json body = json{{"messages", json::array({json{{"role", "user"}, {"content", "Hi"}}})}, {"max_tokens", 4}};
  const Reply t = post(srv.port(), "/apply-template", body);
  ASSERT_EQ(t.status, 200) << t.body;
  EXPECT_EQ(t.j["prompt"],
            "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  const Reply r = post(srv.port(), "/v1/chat/completions", body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.j["usage"]["completion_tokens"].get<int>() <= 4, true);
}

TEST(ProtocolOptions, InfillAndSuffixWithFimVocabulary) {
  const TempDir tmp;
  const std::string& dir = tmp.path();
  ServerOptions o = test_options();
  o.model_path = write_fim_model(dir);
  TestServer srv(o);
  const Reply tok = post(srv.port(), "/tokenize", json{{"content", "Once upon"}});
  ASSERT_EQ(tok.status, 200);
  const size_t n_prefix = tok.j["tokens"].size();
  const Reply r = post(srv.port(), "/infill",
                       json{{"input_prefix", "Once upon"}, {"input_suffix", " happily ever after."}, {"n_predict", 8},
                            {"temperature", 0}, {"cache_prompt", true}, {"t_max_predict_ms", 5000},
                            {"input_extra", json::array({json{{"filename", "a.txt"}, {"text", "Lily"}}})}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(r.j["content"].is_string());
  EXPECT_TRUE(r.j["stop"].get<bool>());
  EXPECT_LE(r.j["tokens_predicted"].get<int>(), 8);
  // BOS, the snippet context, <PRE> prefix <SUF> suffix <MID>: more than the prefix alone.
  EXPECT_GT(r.j["tokens_evaluated"].get<size_t>(), n_prefix + 3);
  expect_usage_and_timings(r.j);
  const Stream s = post_stream(srv.port(), "/infill",
                               json{{"input_prefix", "Once upon"}, {"input_suffix", "."}, {"n_predict", 8},
                                    {"temperature", 0}, {"stream", true}});
  ASSERT_EQ(s.status, 200);
  const auto ev = s.events();
  ASSERT_FALSE(ev.empty());
  EXPECT_TRUE(ev.back()["stop"].get<bool>());
  const Reply c = post(srv.port(), "/v1/completions",
                       json{{"prompt", "Once upon"}, {"suffix", " the end."}, {"max_tokens", 8}, {"temperature", 0}});
  ASSERT_EQ(c.status, 200) << c.body;
  // <PRE> prefix <SUF> suffix <MID>, with BOS.
  const Reply sfx = post(srv.port(), "/tokenize", json{{"content", " the end."}});
  EXPECT_EQ(c.j["usage"]["prompt_tokens"].get<size_t>(), 1 + 3 + n_prefix + sfx.j["tokens"].size());
}

}  // namespace
}  // namespace edgeinfer::server::test
