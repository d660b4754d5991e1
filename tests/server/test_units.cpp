// Unit tests of the server's parts that need no socket: request parsing and validation, the
// rate limiter, histograms, API keys, admission control, SSE framing, response shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <fstream>
#include <random>

#include "server/admission.h"
#include "server/api_error.h"
#include "server/auth.h"
#include "server/histogram.h"
#include "server/rate_limiter.h"
#include "server/request_parsing.h"
#include "server/response_format.h"
#include "server/sse.h"
#include "server_test_util.h"
#include "util/error.h"

namespace edgeinfer::server {
namespace {

using test::json;
using Clock = std::chrono::steady_clock;

// The error a parse raises, for checking its field and code.
ApiError parse_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const ApiError& e) {
    return e;
  }
  ADD_FAILURE() << "no ApiError thrown";
  return ApiError(0, "", "");
}

TEST(RequestParsing, ChatFieldsAndDefaults) {
  const json body = json::parse(R"({
    "model": "m", "messages": [{"role": "developer", "content": "be brief"},
                               {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}],
    "temperature": 0, "top_p": 0.5, "max_completion_tokens": 7, "max_tokens": 99, "stop": "x", "seed": 5,
    "stream": true, "stream_options": {"include_usage": true}, "logprobs": true, "top_logprobs": 3,
    "presence_penalty": 0.5, "frequency_penalty": -0.5, "priority": 9, "n": 1, "response_format": {"type": "text"}})");
  const ChatRequest r = parse_chat_request(body);
  EXPECT_EQ(r.model, "m");
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[0]["role"], "system");  // developer → system for templates
  EXPECT_EQ(r.messages[1]["content"], "a\nb");
  EXPECT_EQ(r.gen.sampling.temperature, 0.0f);
  EXPECT_FLOAT_EQ(r.gen.sampling.top_p, 0.5f);
  EXPECT_EQ(r.gen.max_tokens, 7);  // max_completion_tokens wins
  EXPECT_EQ(r.gen.max_tokens_param, "max_completion_tokens");
  EXPECT_EQ(r.gen.stop, std::vector<std::string>{"x"});
  EXPECT_EQ(r.gen.sampling.seed, 5u);
  EXPECT_TRUE(r.gen.stream);
  EXPECT_TRUE(r.gen.include_usage);
  EXPECT_EQ(r.gen.n_logprobs, 3);
  EXPECT_FLOAT_EQ(r.gen.sampling.presence_penalty, 0.5f);
  EXPECT_EQ(r.gen.priority, 9);

  const ChatRequest d = parse_chat_request(json::parse(R"({"messages": [{"role": "user", "content": "hi"}]})"));
  EXPECT_FALSE(d.gen.max_tokens.has_value());
  EXPECT_FALSE(d.gen.stream);
  EXPECT_EQ(d.gen.n_logprobs, -1);
  EXPECT_EQ(d.gen.sampling.seed, SamplingParams::kRandomSeed);
  EXPECT_TRUE(d.tools.is_null());
}

TEST(RequestParsing, ChatErrorsNameTheField) {
  struct Case {
    const char* body;
    const char* param;
  } cases[] = {
      {R"({})", "messages"},
      {R"({"messages": []})", "messages"},
      {R"({"messages": [{"content": "x"}]})", "messages[0].role"},
      {R"({"messages": [{"role": "user", "content": "x"}, {"role": "user"}]})", "messages[1].content"},
      {R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})", "messages[0].content[0].type"},
      {R"({"messages": [{"role": "user", "content": "x"}], "temperature": "hot"})", "temperature"},
      {R"({"messages": [{"role": "user", "content": "x"}], "max_tokens": 0})", "max_tokens"},
      {R"({"messages": [{"role": "user", "content": "x"}], "max_tokens": 2.5})", "max_tokens"},
      {R"({"messages": [{"role": "user", "content": "x"}], "seed": -7})", "seed"},
      {R"({"messages": [{"role": "user", "content": "x"}], "top_logprobs": 2})", "top_logprobs"},
      {R"({"messages": [{"role": "user", "content": "x"}], "stop": ["a", ""]})", "stop[1]"},
      {R"({"messages": [{"role": "user", "content": "x"}], "n": 3})", "n"},
      {R"({"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "json_object"}})", "response_format"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    const ApiError e = parse_error([&] { parse_chat_request(json::parse(c.body)); });
    EXPECT_EQ(e.status(), 400);
    EXPECT_EQ(e.param(), c.param);
    EXPECT_EQ(e.type(), "invalid_request_error");
  }
}

TEST(RequestParsing, CompletionPromptForms) {
  EXPECT_EQ(*parse_completion_request(json::parse(R"({"prompt": "abc"})")).prompt_text, "abc");
  EXPECT_EQ(*parse_completion_request(json::parse(R"({"prompt": ["abc"]})")).prompt_text, "abc");
  EXPECT_EQ(parse_completion_request(json::parse(R"({"prompt": [1, 2, 3]})")).prompt_tokens,
            (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(parse_completion_request(json::parse(R"({"prompt": [[1, 5]]})")).prompt_tokens,
            (std::vector<int32_t>{1, 5}));
  const CompletionRequest s = parse_completion_request(json::parse(R"({"prompt": "a", "suffix": "b", "logprobs": 2})"));
  EXPECT_EQ(*s.suffix, "b");
  EXPECT_EQ(s.gen.n_logprobs, 2);
  EXPECT_EQ(parse_error([] { parse_completion_request(json::parse(R"({"prompt": ["a", "b"]})")); }).param(), "prompt");
  EXPECT_EQ(parse_error([] { parse_completion_request(json::parse(R"({"prompt": [1, -2]})")); }).param(), "prompt[1]");
  EXPECT_EQ(parse_error([] { parse_completion_request(json::parse(R"({"prompt": {}})")); }).param(), "prompt");
  EXPECT_EQ(parse_error([] { parse_completion_request(json::parse(R"({"prompt": "a", "echo": true})")); }).param(), "echo");
}

TEST(RequestParsing, InfillTokenizeDetokenize) {
  const InfillRequest r = parse_infill_request(json::parse(
      R"({"input_prefix": "def f(", "input_suffix": "):", "input_extra": [{"filename": "a.py", "text": "x = 1"}],
          "n_predict": -1, "t_max_predict_ms": 500, "cache_prompt": true})"));
  EXPECT_EQ(r.input_prefix, "def f(");
  EXPECT_EQ(r.input_suffix, "):");
  ASSERT_EQ(r.input_extra.size(), 1u);
  EXPECT_EQ(r.input_extra[0].filename, "a.py");
  EXPECT_FALSE(r.gen.max_tokens.has_value());  // -1: no limit
  EXPECT_EQ(r.gen.t_max_predict_ms, 500);
  EXPECT_EQ(parse_infill_request(json::parse(R"({"n_predict": 12})")).gen.max_tokens, 12);
  EXPECT_EQ(parse_error([] { parse_infill_request(json::parse(R"({"input_extra": [{"filename": "a"}]})")); }).param(),
            "input_extra[0].text");

  const TokenizeRequest t = parse_tokenize_request(json::parse(R"({"content": "x", "with_pieces": true})"));
  EXPECT_EQ(t.content, "x");
  EXPECT_TRUE(t.with_pieces);
  EXPECT_TRUE(t.parse_special);
  EXPECT_EQ(parse_detokenize_request(json::parse(R"({"tokens": [1, 2]})")).tokens, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(parse_error([] { parse_detokenize_request(json::parse(R"({"tokens": [1, "a"]})")); }).param(), "tokens[1]");
}

TEST(RequestParsing, BodyErrors) {
  EXPECT_EQ(parse_error([] { parse_body(""); }).code(), "invalid_json");
  EXPECT_EQ(parse_error([] { parse_body("{\"a\": "); }).code(), "invalid_json");
  EXPECT_EQ(parse_error([] { parse_body("[1]"); }).code(), "invalid_body");
  EXPECT_EQ(parse_error([] { parse_body("{\"a\": \"\xff\xfe\"}"); }).code(), "invalid_json");      // invalid UTF-8
  EXPECT_EQ(parse_error([] { parse_body(R"({"a": "\ud800"})"); }).code(), "invalid_json");        // lone surrogate
  EXPECT_EQ(parse_error([] { parse_body(std::string(100, '[') + std::string(100, ']')); }).code(), "invalid_json");
  // Brackets inside strings do not count as nesting.
  EXPECT_NO_THROW(parse_body("{\"a\": \"" + std::string(1000, '[') + "\"}"));
  EXPECT_EQ(parse_body(R"({"a": "é"})")["a"], "é");
}

TEST(RequestParsing, PriorityHeader) {
  EXPECT_FALSE(parse_priority_header("").has_value());
  EXPECT_EQ(parse_priority_header("7"), 7);
  EXPECT_EQ(parse_priority_header("-1000"), -1000);
  EXPECT_EQ(parse_error([] { parse_priority_header("high"); }).param(), "X-Priority");
  EXPECT_EQ(parse_error([] { parse_priority_header("1001"); }).param(), "X-Priority");
  EXPECT_EQ(parse_error([] { parse_priority_header("-"); }).param(), "X-Priority");
}

TEST(ApiErrorShape, HasAllFourFields) {
  const json j = invalid_param("max_tokens", "too big").to_json();
  ASSERT_TRUE(j.contains("error"));
  EXPECT_EQ(j["error"]["message"], "too big");
  EXPECT_EQ(j["error"]["type"], "invalid_request_error");
  EXPECT_EQ(j["error"]["param"], "max_tokens");
  EXPECT_EQ(j["error"]["code"], "invalid_value");
  const json k = error_json(503, "busy", "");
  EXPECT_EQ(k["error"]["type"], "unavailable_error");
  EXPECT_TRUE(k["error"]["param"].is_null());
  EXPECT_TRUE(k["error"]["code"].is_null());
}

TEST(RateLimiter, SlidingWindowPerKey) {
  RateLimiter rl(3, 10.0);
  const auto t0 = Clock::now();
  using std::chrono::milliseconds;
  EXPECT_TRUE(rl.acquire("a", t0).allowed);
  EXPECT_TRUE(rl.acquire("a", t0 + milliseconds(1000)).allowed);
  const auto third = rl.acquire("a", t0 + milliseconds(2000));
  EXPECT_TRUE(third.allowed);
  EXPECT_EQ(third.remaining, 0);
  const auto refused = rl.acquire("a", t0 + milliseconds(4000));
  EXPECT_FALSE(refused.allowed);
  EXPECT_NEAR(refused.retry_after_s, 6.0, 1e-6);  // the first request leaves the window at t0 + 10 s
  EXPECT_TRUE(rl.acquire("b", t0 + milliseconds(4000)).allowed);  // other keys are independent
  EXPECT_FALSE(rl.acquire("a", t0 + milliseconds(9999)).allowed);
  EXPECT_TRUE(rl.acquire("a", t0 + milliseconds(10001)).allowed);   // one slot freed
  EXPECT_FALSE(rl.acquire("a", t0 + milliseconds(10002)).allowed);
  EXPECT_TRUE(rl.acquire("a", t0 + milliseconds(11001)).allowed);   // the second left too
  RateLimiter off(0, 1.0);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(off.acquire("x").allowed);
}

TEST(RateLimiter, ForgetsIdleKeys) {
  RateLimiter rl(1, 1.0);
  const auto t0 = Clock::now();
  for (int i = 0; i < 5000; ++i) {
    std::string key = "k";
    key += std::to_string(i);
    rl.acquire(key, t0);
  }
  EXPECT_GT(rl.n_keys(), 1000u);
  for (int i = 0; i < 2048; ++i) rl.acquire("late", t0 + std::chrono::seconds(5));
  EXPECT_LE(rl.n_keys(), 2u);
}

TEST(Histogram, QuantilesWithinOnePercent) {
  Histogram h(latency_buckets_s());
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(-3.0, 1.0);
  std::vector<double> v;
  for (int i = 0; i < 100000; ++i) {
    v.push_back(dist(rng));
    h.observe(v.back());
  }
  std::sort(v.begin(), v.end());
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    const double exact = v[static_cast<size_t>(std::ceil(q * v.size())) - 1];
    EXPECT_NEAR(h.quantile(q) / exact, 1.0, 0.011) << "q=" << q;
  }
  EXPECT_EQ(h.count(), 100000u);
  EXPECT_DOUBLE_EQ(h.max(), v.back());
  EXPECT_EQ(h.quantile(1.0), v.back());
}

TEST(Histogram, PrometheusBucketsAreExactAndCumulative) {
  Histogram h({0.1, 1.0, 10.0});
  for (double x : {0.05, 0.1, 0.5, 1.0, 1.5, 20.0, -3.0}) h.observe(x);
  EXPECT_EQ(h.cumulative(0), 3u);  // 0.05, 0.1 (le is inclusive), -3 counted as 0
  EXPECT_EQ(h.cumulative(1), 5u);
  EXPECT_EQ(h.cumulative(2), 6u);
  EXPECT_EQ(h.cumulative(3), 7u);  // +Inf
  EXPECT_NEAR(h.sum(), 0.05 + 0.1 + 0.5 + 1.0 + 1.5 + 20.0, 1e-12);
  Histogram empty({1.0});
  EXPECT_EQ(empty.quantile(0.99), 0.0);
}

TEST(Auth, ConstantTimeCompareAndKeys) {
  EXPECT_TRUE(constant_time_equal("sk-abc", "sk-abc"));
  EXPECT_FALSE(constant_time_equal("sk-abc", "sk-abd"));
  EXPECT_FALSE(constant_time_equal("sk-abc", "sk-ab"));
  EXPECT_FALSE(constant_time_equal("sk-abc", "sk-abcd"));
  EXPECT_FALSE(constant_time_equal("sk-abc", ""));
  EXPECT_FALSE(constant_time_equal("sk-abc", "sk-abcsk-abc"));  // a repetition must not match
  ApiKeyAuth off;
  EXPECT_FALSE(off.enabled());
  ApiKeyAuth a({"one", "", "two"});
  EXPECT_TRUE(a.enabled());
  EXPECT_TRUE(a.accepts("one"));
  EXPECT_TRUE(a.accepts("two"));
  EXPECT_FALSE(a.accepts("three"));
  EXPECT_FALSE(a.accepts(""));
  EXPECT_EQ(bearer_token("Bearer sk-1"), "sk-1");
  EXPECT_EQ(bearer_token("bearer   sk-1  "), "sk-1");
  EXPECT_FALSE(bearer_token("Basic abc").has_value());
  EXPECT_FALSE(bearer_token("Bearer ").has_value());
  EXPECT_FALSE(bearer_token("Bearersk").has_value());
}

TEST(Auth, KeyFile) {
  const test::TempDir tmp;
  const std::string& dir = tmp.path();
  {
    std::ofstream f(dir + "/keys");
    f << "# comment\n\n  sk-one  \nsk-two\r\n";
  }
  EXPECT_EQ(read_api_key_file(dir + "/keys"), (std::vector<std::string>{"sk-one", "sk-two"}));
  {
    std::ofstream f(dir + "/empty");
    f << "# nothing\n";
  }
  EXPECT_THROW(read_api_key_file(dir + "/empty"), Error);
  EXPECT_THROW(read_api_key_file(dir + "/missing"), Error);
}

TEST(Admission, BoundedQueue) {
  AdmissionOptions o;
  o.max_in_flight = 2;
  AdmissionControl ac(o);
  auto a = ac.admit(0);
  auto b = ac.admit(0);
  EXPECT_EQ(a.verdict, AdmissionControl::Verdict::Admitted);
  EXPECT_EQ(b.verdict, AdmissionControl::Verdict::Admitted);
  EXPECT_EQ(ac.in_flight(), 2);
  EXPECT_EQ(ac.admit(100).verdict, AdmissionControl::Verdict::QueueFull);  // capacity is for everyone
  a.ticket.release();
  EXPECT_EQ(ac.in_flight(), 1);
  {
    auto c = ac.admit(0);
    EXPECT_TRUE(static_cast<bool>(c.ticket));
    EXPECT_EQ(ac.in_flight(), 2);
  }  // the ticket goes back when dropped
  EXPECT_EQ(ac.in_flight(), 1);
  EXPECT_EQ(ac.n_queue_full(), 1u);
}

TEST(Admission, SloShedsLowPriorityOnly) {
  AdmissionOptions o;
  o.max_in_flight = 100;
  o.slo_ttft_ms = 100;
  o.slo_min_priority = 1;
  o.slo_window_s = 10;
  o.slo_min_samples = 5;
  AdmissionControl ac(o);
  const auto t0 = Clock::now();
  for (int i = 0; i < 4; ++i) ac.record_ttft(500, t0);
  EXPECT_EQ(ac.admit(0, t0).verdict, AdmissionControl::Verdict::Admitted);  // too few samples to judge
  ac.record_ttft(500, t0);
  const auto shed = ac.admit(0, t0);
  EXPECT_EQ(shed.verdict, AdmissionControl::Verdict::SloShed);
  EXPECT_DOUBLE_EQ(shed.p99_ttft_ms, 500);
  EXPECT_EQ(ac.admit(1, t0).verdict, AdmissionControl::Verdict::Admitted);  // high priority passes
  // The slow samples age out of the window: admission resumes.
  EXPECT_EQ(ac.admit(0, t0 + std::chrono::seconds(11)).verdict, AdmissionControl::Verdict::Admitted);
  // 99 fast + 1 slow sample: P99 (nearest rank) is fast.
  const auto t1 = t0 + std::chrono::seconds(20);
  for (int i = 0; i < 99; ++i) ac.record_ttft(10, t1);
  ac.record_ttft(1000, t1);
  EXPECT_DOUBLE_EQ(ac.p99_ttft_ms(t1), 10);
  EXPECT_EQ(ac.admit(0, t1).verdict, AdmissionControl::Verdict::Admitted);
  ac.record_ttft(1000, t1);
  EXPECT_DOUBLE_EQ(ac.p99_ttft_ms(t1), 1000);
  EXPECT_EQ(ac.n_shed(), 1u);
}

TEST(Sse, Framing) {
  EXPECT_EQ(sse_data(json{{"a", "x\ny"}}), "data: {\"a\":\"x\\ny\"}\n\n");
  EXPECT_EQ(sse_done(), "data: [DONE]\n\n");
  EXPECT_EQ(sse_comment("a\nb"), ": a b\n\n");
  EXPECT_EQ(test::sse_payloads(sse_data(json{{"k", 1}}) + sse_comment("x") + sse_done()),
            (std::vector<std::string>{"{\"k\":1}", "[DONE]"}));
  // Invalid UTF-8 in generated text is replaced, not fatal.
  EXPECT_NE(dump_json(json{{"t", std::string("a\xff")}}).find("\xEF\xBF\xBD"), std::string::npos);
}

TEST(ResponseFormat, UsageAndTimings) {
  RequestTimings t;
  t.n_prompt = 10;
  t.n_cached = 4;
  t.n_generated = 5;
  t.queue_ms = 1;
  t.prefill_ms = 2;
  t.decode_ms = 8;
  t.ttft_ms = 3;
  const json u = usage_json(t);
  EXPECT_EQ(u["prompt_tokens"], 10);
  EXPECT_EQ(u["completion_tokens"], 5);
  EXPECT_EQ(u["total_tokens"], 15);
  EXPECT_EQ(u["prompt_tokens_details"]["cached_tokens"], 4);
  const json j = timings_json(t);
  EXPECT_EQ(j["queue_ms"], 1.0);
  EXPECT_EQ(j["prompt_ms"], 2.0);
  EXPECT_EQ(j["predicted_ms"], 8.0);
  EXPECT_EQ(j["cache_n"], 4);
  EXPECT_DOUBLE_EQ(j["predicted_per_token_ms"].get<double>(), 2.0);  // 8 ms over the 4 tokens after the first
}

}  // namespace
}  // namespace edgeinfer::server
