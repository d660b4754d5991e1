// Lifecycle: a client that disconnects mid-stream cancels its request and its KV blocks are
// freed at once (visible in /metrics); SIGTERM / SIGINT on the real `edgeinfer serve` drain
// in-flight requests within the grace period, refuse new ones, and exit 0; a burst of
// connections is not dropped at the listen backlog.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

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

// A burst of clients connecting at once (agents fanning out, a load test's clients starting
// together) all get their connection at once: the listen backlog holds them until the server
// accepts. With cpp-httplib's default backlog of 5, the kernel dropped the handshakes past it
// and those clients waited for the SYN retransmission (1 s) or failed. Connection completion is
// the kernel's doing alone (loopback), so the bound below does not depend on the server's speed.
TEST(Lifecycle, BurstOfConnectionsIsNotDropped) {
  TestServer srv(test_options());
  constexpr int kConnections = 200;
  std::vector<int> fds;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(srv.port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const auto t0 = Clock::now();
  for (int i = 0; i < kConnections; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    ASSERT_GE(fd, 0);
    fds.push_back(fd);
    const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
    ASSERT_TRUE(rc == 0 || errno == EINPROGRESS) << std::strerror(errno);
  }
  int connected = 0;
  std::vector<bool> done(kConnections, false);
  while (connected < kConnections && Clock::now() - t0 < 3s) {
    std::vector<pollfd> pf;
    for (int i = 0; i < kConnections; ++i) {
      if (!done[static_cast<size_t>(i)]) pf.push_back({fds[static_cast<size_t>(i)], POLLOUT, 0});
    }
    ::poll(pf.data(), pf.size(), 50);
    for (const pollfd& p : pf) {
      if (!(p.revents & (POLLOUT | POLLERR | POLLHUP))) continue;
      int err = 0;
      socklen_t len = sizeof err;
      ::getsockopt(p.fd, SOL_SOCKET, SO_ERROR, &err, &len);
      EXPECT_EQ(err, 0) << std::strerror(err);
      const size_t i = static_cast<size_t>(std::find(fds.begin(), fds.end(), p.fd) - fds.begin());
      done[i] = true;
      ++connected;
    }
  }
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
  for (int fd : fds) ::close(fd);
  EXPECT_EQ(connected, kConnections);
  EXPECT_LT(took, 700ms) << "handshakes were dropped and retransmitted: " << connected << " connected";
  // The server goes on serving.
  EXPECT_EQ(get(srv.port(), "/health").status, 200);
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
