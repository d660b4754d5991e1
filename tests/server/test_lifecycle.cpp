// Lifecycle: a client that disconnects mid-stream cancels its request and its KV blocks are
// freed at once (visible in /metrics); SIGTERM / SIGINT on the real `edgeinfer serve` drain
// in-flight requests within the grace period, refuse new ones, and exit 0.
#include <gtest/gtest.h>

#include <signal.h>

#include <thread>

#include "server_test_util.h"

namespace edgeinfer::server::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::string stream_request(int max_tokens) {
  return http_post_text("/v1/completions", json{{"prompt", "Once upon a time"}, {"max_tokens", max_tokens},
                                                {"ignore_eos", true}, {"temperature", 0}, {"stream", true}}
                                               .dump());
}

TEST(Lifecycle, DisconnectMidStreamCancelsAndFreesKv) {
  TestServer srv(test_options());
  RawSocket s(srv.port());
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s.send_all(stream_request(2000)));
  // Wait for generated text, then vanish without reading the rest.
  const std::string got = s.recv_until("\"text\":\"", 10000ms);
  ASSERT_NE(got.find(" 200 OK"), std::string::npos) << got;
  s.close();
  const auto t0 = Clock::now();
  std::string m;
  for (;;) {
    m = get(srv.port(), "/metrics").body;
    // The engine frees the sequence first; the handler thread releases its admission ticket (and
    // counts the disconnect) a moment later, when it sees the final event. Wait for all of it.
    if (metric(m, "edgeinfer:request_success_total", "finished_reason=\"cancelled\"") == 1.0 &&
        metric(m, "edgeinfer:kv_blocks_used") == 0.0 && metric(m, "edgeinfer:num_requests_running") == 0.0 &&
        metric(m, "edgeinfer:requests_in_flight") == 0.0 && metric(m, "edgeinfer:client_disconnects_total") == 1.0) {
      break;
    }
    ASSERT_LT(Clock::now() - t0, 5s) << m;
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(metric(m, "edgeinfer:client_disconnects_total"), 1.0);
  EXPECT_EQ(metric(m, "edgeinfer:requests_in_flight"), 0.0);
  // Cancelled early: far fewer tokens than asked for were generated.
  EXPECT_LT(metric(m, "edgeinfer:generation_tokens_total"), 2000.0);
  // The server goes on serving.
  EXPECT_EQ(post(srv.port(), "/v1/completions", json{{"prompt", "Once"}, {"max_tokens", 3}}).status, 200);
}

TEST(Lifecycle, SigtermDrainsInFlightAndExitsZero) {
  ServeProcess p({"-m", model_path("stories260K.gguf"), "--port", "0", "-t", "1", "--shutdown-grace-ms", "20000"});
  const int port = p.wait_ready(30000ms);
  ASSERT_GT(port, 0) << p.stderr_text();
  RawSocket s(port);
  ASSERT_TRUE(s.send_all(stream_request(300)));
  ASSERT_NE(s.recv_until("\"text\":\"", 10000ms).find(" 200 OK"), std::string::npos);
  const auto t_signal = Clock::now();
  p.signal(SIGTERM);
  // New work is refused while the stream drains (503, or no connection once the listener closed).
  std::this_thread::sleep_for(100ms);
  const Reply late = post(port, "/v1/completions", json{{"prompt", "Once"}, {"max_tokens", 2}});
  EXPECT_TRUE(late.status == 503 || late.status == -1) << late.status << " " << late.body;
  if (late.status == 503) {
    EXPECT_EQ(late.j["error"]["code"], "shutting_down");
  }
  // The in-flight stream runs to its end.
  const std::string all = s.recv_until("data: [DONE]", 30000ms);
  ASSERT_NE(all.find("data: [DONE]"), std::string::npos) << all.substr(0, 500);
  EXPECT_NE(all.find("\"finish_reason\":\"length\""), std::string::npos);
  EXPECT_NE(all.find("\"completion_tokens\":300"), std::string::npos);
  EXPECT_EQ(p.wait_exit(30000ms), 0) << p.stderr_text();
  EXPECT_LT(Clock::now() - t_signal, 25s);
  EXPECT_NE(p.stderr_text().find("SIGTERM received; draining"), std::string::npos) << p.stderr_text();
}

TEST(Lifecycle, GraceExpiryCancelsAndStillExitsZero) {
  // A slower model and a short grace: the stream cannot finish in time, so it is cancelled and
  // ends with an error event and [DONE]; the process still exits 0, promptly.
  ServeProcess p({"-m", model_path("synth-llama-f32.gguf"), "--port", "0", "-t", "1", "--shutdown-grace-ms", "100",
                  "--no-speculative"});
  const int port = p.wait_ready(30000ms);
  ASSERT_GT(port, 0) << p.stderr_text();
  RawSocket s(port);
  ASSERT_TRUE(s.send_all(stream_request(1000)));
  ASSERT_NE(s.recv_until("\"text\":\"", 10000ms).find(" 200 OK"), std::string::npos);
  const auto t_signal = Clock::now();
  p.signal(SIGTERM);
  const std::string all = s.recv_until("data: [DONE]", 20000ms);
  ASSERT_NE(all.find("data: [DONE]"), std::string::npos) << all.substr(0, 500);
  const bool cancelled = all.find("\"code\":\"cancelled\"") != std::string::npos;
  const bool finished = all.find("\"finish_reason\":\"length\"") != std::string::npos;
  EXPECT_TRUE(cancelled || finished);
  EXPECT_EQ(p.wait_exit(20000ms), 0) << p.stderr_text();
  EXPECT_LT(Clock::now() - t_signal, 10s);
  std::printf("grace expiry: stream %s\n", cancelled ? "cancelled" : "finished within the grace period");
}

TEST(Lifecycle, SigintIdleExitsZero) {
  ServeProcess p({"-m", model_path("stories260K.gguf"), "--port", "0", "-t", "1"});
  ASSERT_GT(p.wait_ready(30000ms), 0) << p.stderr_text();
  p.signal(SIGINT);
  EXPECT_EQ(p.wait_exit(10000ms), 0) << p.stderr_text();
  EXPECT_NE(p.stderr_text().find("SIGINT received"), std::string::npos);
}

TEST(Lifecycle, MissingModelExitsNonZeroWithAMessage) {
  ServeProcess p({"-m", "/nonexistent/model.gguf", "--port", "0"});
  EXPECT_EQ(p.wait_exit(20000ms), 1);
  EXPECT_NE(p.stderr_text().find("model file not found"), std::string::npos) << p.stderr_text();
}

}  // namespace
}  // namespace edgeinfer::server::test
