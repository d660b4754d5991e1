// Protection paths: API keys (401), per-key rate limit (429 + Retry-After), bounded queue (503),
// SLO shedding of low-priority requests (503), body size limit (413), slow clients dropped.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "server_test_util.h"

namespace edgeinfer::server::test {
namespace {

using namespace std::chrono_literals;

const json kTiny = json{{"prompt", "Once upon a time"}, {"max_tokens", 2}, {"temperature", 0}};

void expect_error(const Reply& r, int status, const char* code) {
  EXPECT_EQ(r.status, status) << r.body;
  ASSERT_TRUE(r.j.is_object() && r.j.contains("error")) << r.body;
  EXPECT_EQ(r.j["error"]["code"], code);
  EXPECT_TRUE(r.j["error"]["message"].is_string());
  EXPECT_TRUE(r.j["error"]["type"].is_string());
  EXPECT_TRUE(r.j["error"].contains("param"));
}

TEST(Protection, ApiKeys) {
  ServerOptions o = test_options();
  o.api_keys = {"sk-first", "sk-second"};
  TestServer srv(o);
  const int p = srv.port();
  const Reply none = post(p, "/v1/completions", kTiny);
  expect_error(none, 401, "invalid_api_key");
  EXPECT_EQ(none.j["error"]["type"], "invalid_request_error");
  EXPECT_EQ(none.header("WWW-Authenticate"), "Bearer");
  expect_error(post(p, "/v1/completions", kTiny, {{"Authorization", "Bearer sk-wrong"}}), 401, "invalid_api_key");
  expect_error(post(p, "/v1/completions", kTiny, {{"Authorization", "Bearer sk-firs"}}), 401, "invalid_api_key");
  expect_error(post(p, "/v1/completions", kTiny, {{"Authorization", "Basic sk-first"}}), 401, "invalid_api_key");
  expect_error(get(p, "/v1/models"), 401, "invalid_api_key");
  expect_error(get(p, "/metrics"), 401, "invalid_api_key");
  EXPECT_EQ(post(p, "/v1/completions", kTiny, {{"Authorization", "Bearer sk-first"}}).status, 200);
  EXPECT_EQ(post(p, "/v1/completions", kTiny, {{"Authorization", "bearer sk-second"}}).status, 200);
  EXPECT_EQ(post(p, "/v1/completions", kTiny, {{"X-Api-Key", "sk-second"}}).status, 200);
  EXPECT_EQ(get(p, "/health").status, 200);  // health checks need no key
  const Reply m = get(p, "/metrics", {{"Authorization", "Bearer sk-first"}});
  EXPECT_EQ(metric(m.body, "edgeinfer:requests_rejected_total", "reason=\"unauthorized\""), 6.0);
  EXPECT_EQ(metric(m.body, "edgeinfer:http_requests_total", "status=\"401\""), 6.0);
}

TEST(Protection, RateLimitPerKey) {
  ServerOptions o = test_options();
  o.api_keys = {"sk-a", "sk-b"};
  o.rate_limit = 3;
  o.rate_window_s = 60;
  TestServer srv(o);
  const httplib::Headers a = {{"Authorization", "Bearer sk-a"}}, b = {{"Authorization", "Bearer sk-b"}};
  for (int i = 0; i < 3; ++i) {
    const Reply r = post(srv.port(), "/v1/completions", kTiny, a);
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.header("X-RateLimit-Remaining-Requests"), std::to_string(2 - i));
  }
  const Reply limited = post(srv.port(), "/v1/completions", kTiny, a);
  expect_error(limited, 429, "rate_limit_exceeded");
  const int retry = std::stoi(limited.header("Retry-After"));
  EXPECT_GE(retry, 59);
  EXPECT_LE(retry, 60);
  EXPECT_EQ(post(srv.port(), "/v1/completions", kTiny, b).status, 200);  // another key has its own window
  EXPECT_EQ(get(srv.port(), "/health").status, 200);                     // health is not limited
}

TEST(Protection, RateLimitWindowSlides) {
  ServerOptions o = test_options();
  o.rate_limit = 2;
  o.rate_window_s = 1.0;
  TestServer srv(o);
  EXPECT_EQ(get(srv.port(), "/v1/models").status, 200);
  EXPECT_EQ(get(srv.port(), "/v1/models").status, 200);
  const Reply r = get(srv.port(), "/v1/models");  // keyed by client address when keys are off
  expect_error(r, 429, "rate_limit_exceeded");
  EXPECT_EQ(r.header("Retry-After"), "1");
  std::this_thread::sleep_for(1100ms);
  EXPECT_EQ(get(srv.port(), "/v1/models").status, 200);
}

TEST(Protection, BoundedQueueAnswers503) {
  ServerOptions o = test_options();
  o.engine.max_running = 1;
  o.max_queue = 0;  // one request in flight at most
  TestServer srv(o);
  constexpr int kClients = 8;
  std::vector<Reply> replies(kClients);
  std::vector<std::thread> threads;
  std::atomic<int> ready{0};
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      ready++;
      while (ready.load() < kClients) std::this_thread::yield();
      replies[i] = post(srv.port(), "/v1/completions",
                        json{{"prompt", "Once upon a time"}, {"max_tokens", 400}, {"ignore_eos", true}, {"temperature", 0}});
    });
  }
  for (auto& t : threads) t.join();
  int n200 = 0, n503 = 0;
  for (const Reply& r : replies) {
    if (r.status == 200) {
      ++n200;
      EXPECT_EQ(r.j["usage"]["completion_tokens"], 400);
    } else {
      ++n503;
      expect_error(r, 503, "queue_full");
      EXPECT_EQ(r.header("Retry-After"), "1");
    }
  }
  EXPECT_GE(n200, 1);
  EXPECT_GE(n503, 1);
  EXPECT_EQ(n200 + n503, kClients);
  const Reply m = get(srv.port(), "/metrics");
  EXPECT_EQ(metric(m.body, "edgeinfer:requests_rejected_total", "reason=\"queue_full\""), n503);
  EXPECT_EQ(metric(m.body, "edgeinfer:requests_in_flight"), 0.0);
}

TEST(Protection, SloShedsLowPriority) {
  ServerOptions o = test_options();
  o.slo_ttft_ms = 0.001;  // any real request misses it
  o.slo_min_priority = 1;
  TestServer srv(o);
  // Below five measurements nothing is shed; high-priority requests are never shed.
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(post(srv.port(), "/v1/completions", kTiny, {{"X-Priority", "5"}}).status, 200);
  }
  const Reply shed = post(srv.port(), "/v1/completions", kTiny);
  expect_error(shed, 503, "slo_shed");
  EXPECT_EQ(shed.header("Retry-After"), "1");
  json low = kTiny;
  low["priority"] = 0;
  expect_error(post(srv.port(), "/v1/completions", low), 503, "slo_shed");
  json high = kTiny;
  high["priority"] = 1;
  EXPECT_EQ(post(srv.port(), "/v1/completions", high).status, 200);
  const Reply m = get(srv.port(), "/metrics");
  EXPECT_EQ(metric(m.body, "edgeinfer:requests_rejected_total", "reason=\"slo_shed\""), 2.0);
  EXPECT_GT(metric(m.body, "edgeinfer:slo_ttft_p99_seconds"), 0.0);
}

TEST(Protection, BodyTooLarge) {
  ServerOptions o = test_options();
  o.max_body_bytes = 4096;
  TestServer srv(o);
  const std::string big = json{{"prompt", std::string(5000, 'a')}}.dump();
  const Reply r = post(srv.port(), "/v1/completions", big);
  expect_error(r, 413, "payload_too_large");
  EXPECT_EQ(post(srv.port(), "/v1/completions", kTiny).status, 200);
  // Sent with chunked transfer encoding (no length announced): refused once past the limit.
  httplib::Client c("127.0.0.1", srv.port());
  auto chunked = c.Post(
      "/v1/completions",
      [](size_t offset, httplib::DataSink& sink) {
        const std::string piece(1024, ' ');
        if (offset < 64 * 1024) {
          sink.write(piece.data(), piece.size());
        } else {
          sink.done();
        }
        return true;
      },
      "application/json");
  ASSERT_TRUE(chunked);
  EXPECT_EQ(chunked->status, 413);
  EXPECT_EQ(post(srv.port(), "/v1/completions", kTiny).status, 200);
}

TEST(Protection, SlowClientsAreDropped) {
  ServerOptions o = test_options();
  o.read_timeout_s = 1;
  o.keep_alive_timeout_s = 1;
  TestServer srv(o);
  // Half a request, then silence: answered 400 once the read times out, then disconnected.
  RawSocket slow(srv.port());
  ASSERT_TRUE(slow.ok());
  slow.send_all("POST /v1/completions HTTP/1.1\r\nHost: x\r\n");
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(slow.wait_closed(8000ms));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  // A body that never completes.
  RawSocket body(srv.port());
  body.send_all("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"prompt\":");
  EXPECT_TRUE(body.wait_closed(8000ms));
  // An idle keep-alive connection is closed too.
  RawSocket idle(srv.port());
  idle.send_all("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(idle.wait_closed(8000ms));
  EXPECT_NE(idle.received().find(" 200 OK"), std::string::npos);
  EXPECT_EQ(post(srv.port(), "/v1/completions", kTiny).status, 200);
}

}  // namespace
}  // namespace edgeinfer::server::test
