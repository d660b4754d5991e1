// Bounded load test of the real `edgeinfer serve` (stories260K) on 127.0.0.1: 64 concurrent
// clients for 60 s (15 s in sanitizer builds; EDGEINFER_LOAD_SECONDS overrides), mixing chat and
// completions, streamed and not, some clients vanishing mid-stream. The in-flight bound (parallel
// 8 + queue 32 = 40) is below the client count, so some 503 queue_full answers are intended.
// Checks: no crash, no status other than 200 and the intended 503s, every answer well formed,
// KV blocks all free once idle, RSS flat after warm-up (unsanitized builds: under ASan the
// allocator's quarantine grows RSS by design), a clean SIGTERM exit, and in sanitizer builds no
// ASan/LSan/UBSan report from the server. Prints request counts, status counts, latency
// percentiles and RSS before/after.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "server_test_util.h"

namespace edgeinfer::server::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

constexpr int kClients = 64;

enum Kind { ChatStream, ChatPlain, CompletionPlain, CompletionStream, StreamDisconnect, kNumKinds };
const char* kKindNames[] = {"chat_stream", "chat", "completion", "completion_stream", "stream_disconnect"};

struct Sample {
  Kind kind;
  int status;        // -2: disconnected on purpose
  double latency_ms;
  double ttft_ms;    // streams: first content chunk; else -1
  bool well_formed;
  std::string problem;
  int retries = 0;   // sent again on a new connection after a transport error (see run_one)
};

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::max<size_t>(rank, 1) - 1];
}

// Whether `key` (e.g. "content":") is followed by at least one character of text somewhere.
bool has_text(const std::string& raw, const std::string& key) {
  for (size_t pos = raw.find(key); pos != std::string::npos; pos = raw.find(key, pos + 1)) {
    const size_t at = pos + key.size();
    if (at < raw.size() && raw[at] != '"') return true;
  }
  return false;
}

int load_seconds() {
  if (const char* s = std::getenv("EDGEINFER_LOAD_SECONDS")) return std::max(1, std::atoi(s));
  return kSanitized ? 15 : 60;
}

json make_body(Kind k, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> ntok(8, 64);
  static const char* kPrompts[] = {"Once upon a time", "The little dog", "Lily wanted to", "One day, a big cat",
                                   "Tom and Sue went to the park"};
  const std::string prompt = kPrompts[rng() % 5];
  json b;
  if (k == ChatStream || k == ChatPlain) {
    b["model"] = "stories260K";
    b["messages"] = json::array({json{{"role", "system"}, {"content", "You tell short stories."}},
                                 json{{"role", "user"}, {"content", prompt}}});
  } else {
    b["prompt"] = prompt;
  }
  b["max_tokens"] = ntok(rng);
  b["temperature"] = 0.8;
  b["seed"] = static_cast<int64_t>(rng() % 100000);
  if (rng() % 4 == 0) b["priority"] = static_cast<int>(rng() % 3);
  if (k == ChatStream || k == CompletionStream || k == StreamDisconnect) {
    b["stream"] = true;
    if (rng() % 2) b["stream_options"] = json{{"include_usage", true}};
  }
  return b;
}

Sample run_one(int port, Kind k, std::mt19937_64& rng, httplib::Client& cli) {
  const json body = make_body(k, rng);
  const std::string path = (k == ChatStream || k == ChatPlain) ? "/v1/chat/completions" : "/v1/completions";
  const auto t0 = Clock::now();
  auto ms_since = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); };
  Sample s{k, 0, 0, -1, true, {}};
  if (k == StreamDisconnect) {
    RawSocket sock(port);
    sock.send_all(http_post_text(path, body.dump()));
    const std::string got = sock.recv_until("\"text\":\"", 5000ms);
    s.ttft_ms = ms_since();
    s.status = got.find(" 503 ") != std::string::npos ? 503 : -2;
    if (got.find(" 200 OK") == std::string::npos && s.status != 503) {
      s.well_formed = false;
      s.problem = "no 200 before disconnecting: " + got.substr(0, 200);
    }
    sock.close();  // gone mid-stream
    s.latency_ms = ms_since();
    return s;
  }
  if (k == ChatPlain || k == CompletionPlain) {
    auto res = cli.Post(path.c_str(), body.dump(), "application/json");
    if (!res && (res.error() == httplib::Error::Read || res.error() == httplib::Error::Write)) {
      // The reused keep-alive connection was closed under the request (rare: about 1 in 10^4
      // here): retry once on a new connection, as HTTP clients do (the openai client retries
      // connection errors twice). Retries are counted and bounded by the test.
      std::fprintf(stderr, "load: %s request: transport error %d after %.0f ms, retried\n", kKindNames[k],
                   static_cast<int>(res.error()), ms_since());
      cli.stop();
      ++s.retries;
      res = cli.Post(path.c_str(), body.dump(), "application/json");
    }
    s.latency_ms = ms_since();
    s.status = res ? res->status : -1;
    if (s.status == 200) {
      const json j = json::parse(res->body, nullptr, false);
      const int n = j.is_discarded() ? -1 : j["usage"]["completion_tokens"].get<int>();
      if (n < 1 || n > body["max_tokens"].get<int>() || !j.contains("timings")) {
        s.well_formed = false;
        s.problem = "bad body: " + res->body.substr(0, 200);
      }
    } else if (s.status == 503) {
      const json j = json::parse(res->body, nullptr, false);
      if (j.is_discarded() || j["error"]["code"] != "queue_full") {
        s.well_formed = false;
        s.problem = "unexpected 503: " + res->body;
      }
    }
    return s;
  }
  std::string raw;
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  req.content_receiver = [&](const char* d, size_t n, uint64_t, uint64_t) {
    raw.append(d, n);
    if (s.ttft_ms < 0 && (has_text(raw, "\"content\":\"") || has_text(raw, "\"text\":\""))) s.ttft_ms = ms_since();
    return true;
  };
  auto res = cli.send(req);
  if (!res && raw.empty() && (res.error() == httplib::Error::Read || res.error() == httplib::Error::Write)) {
    std::fprintf(stderr, "load: %s request: transport error %d after %.0f ms before any byte, retried\n",
                 kKindNames[k], static_cast<int>(res.error()), ms_since());
    cli.stop();
    ++s.retries;
    res = cli.send(req);
  }
  s.latency_ms = ms_since();
  s.status = res ? res->status : -1;
  if (s.status == 200) {
    const auto payloads = sse_payloads(raw);
    const bool done = !payloads.empty() && payloads.back() == "[DONE]";
    const bool finish = raw.find("\"finish_reason\":\"stop\"") != std::string::npos ||
                        raw.find("\"finish_reason\":\"length\"") != std::string::npos;
    if (!done || !finish) {
      s.well_formed = false;
      s.problem = "stream without finish/[DONE]: " + raw.substr(raw.size() > 300 ? raw.size() - 300 : 0);
    }
  } else if (s.status == 503 && raw.find("queue_full") == std::string::npos) {
    s.well_formed = false;
    s.problem = "unexpected 503: " + raw;  // the body went to the content receiver
  }
  return s;
}

TEST(Load, SixtyFourClientsOnLoopback) {
  const int seconds = load_seconds();
  ServeProcess p({"-m", model_path("stories260K.gguf"), "--port", "0", "-t", "2", "--parallel", "8", "--max-queue",
                  "32", "--shutdown-grace-ms", "10000"});
  const int port = p.wait_ready(60000ms);
  ASSERT_GT(port, 0) << p.stderr_text();
  const long rss_start = p.rss_kib();

  std::vector<std::vector<Sample>> per_thread(kClients);
  std::vector<long> rss_samples;  // every 500 ms
  std::atomic<bool> stop_sampling{false};
  const auto t_start = Clock::now();
  const auto deadline = t_start + std::chrono::seconds(seconds);
  std::thread sampler([&] {
    while (!stop_sampling.load()) {
      rss_samples.push_back(p.rss_kib());
      std::this_thread::sleep_for(500ms);
    }
  });
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      std::mt19937_64 rng(1000 + c);
      httplib::Client cli("127.0.0.1", port);
      cli.set_read_timeout(120, 0);
      cli.set_keep_alive(true);
      auto last_use = Clock::now();
      // Bounded in count as well as time.
      for (int i = 0; i < 100000 && Clock::now() < deadline; ++i) {
        const unsigned r = static_cast<unsigned>(rng() % 100);
        const Kind k = r < 35 ? ChatStream : r < 60 ? ChatPlain : r < 80 ? CompletionPlain : r < 90 ? CompletionStream
                                                                                                     : StreamDisconnect;
        // The server closes keep-alive connections idle for 5 s (it says so in its Keep-Alive
        // header); like any client that honours that, do not reuse one idle for longer (a
        // StreamDisconnect uses its own socket and may wait up to 5 s in the queue).
        if (k != StreamDisconnect && Clock::now() - last_use > 4s) cli.stop();
        Sample s = run_one(port, k, rng, cli);
        if (k != StreamDisconnect) last_use = Clock::now();
        // A refused client honours Retry-After (1 s), with jitter.
        if (s.status == 503) std::this_thread::sleep_for(std::chrono::milliseconds(800 + rng() % 400));
        per_thread[c].push_back(std::move(s));
      }
    });
  }
  for (auto& t : clients) t.join();
  const double elapsed_s = std::chrono::duration<double>(Clock::now() - t_start).count();
  stop_sampling = true;
  sampler.join();

  // Idle: every KV block back, nothing running.
  std::string m;
  for (int i = 0; i < 500; ++i) {
    m = get(port, "/metrics").body;
    if (metric(m, "edgeinfer:kv_blocks_used") == 0.0 && metric(m, "edgeinfer:num_requests_running") == 0.0 &&
        metric(m, "edgeinfer:requests_in_flight") == 0.0) {
      break;
    }
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(metric(m, "edgeinfer:kv_blocks_used"), 0.0);
  EXPECT_EQ(metric(m, "edgeinfer:num_requests_running"), 0.0);
  EXPECT_EQ(metric(m, "edgeinfer:requests_in_flight"), 0.0);
  EXPECT_EQ(metric(m, "edgeinfer:http_requests_total", "status=\"500\""), -1.0);
  const Reply stats = get(port, "/v1/stats");
  const long rss_end = p.rss_kib();

  p.signal(SIGTERM);
  const int exit_code = p.wait_exit(60000ms);
  const std::string err = p.stderr_text();

  // Tally.
  std::map<int, int> status_count;
  std::map<std::string, int> kind_count;
  std::vector<double> plain_ms, stream_ms, ttft_ms;
  int bad = 0, retries = 0;
  std::string first_problem;
  for (const auto& v : per_thread) {
    for (const Sample& s : v) {
      retries += s.retries;
      status_count[s.status]++;
      kind_count[kKindNames[s.kind]]++;
      if (!s.well_formed) {
        ++bad;
        if (first_problem.empty()) first_problem = s.problem;
      }
      if (s.status != 200) continue;
      if (s.kind == ChatPlain || s.kind == CompletionPlain) plain_ms.push_back(s.latency_ms);
      if (s.kind == ChatStream || s.kind == CompletionStream) {
        stream_ms.push_back(s.latency_ms);
        if (s.ttft_ms >= 0) ttft_ms.push_back(s.ttft_ms);
      }
    }
  }
  int total = 0;
  for (const auto& [st, n] : status_count) total += n;
  // Warm-up: the first 30% of the run; its level is the highest RSS seen in it (a single sample
  // there reads low when the machine is loaded and the server has not yet served its mix).
  const size_t warm = rss_samples.size() * 3 / 10;
  const long rss_warm = rss_samples.empty()
                            ? rss_start
                            : *std::max_element(rss_samples.begin(), rss_samples.begin() + static_cast<std::ptrdiff_t>(
                                                                                                std::min(warm, rss_samples.size() - 1) + 1));
  const long rss_peak = rss_samples.empty() ? 0 : *std::max_element(rss_samples.begin(), rss_samples.end());

  std::printf("load test: %d clients, %.1f s, %d requests (%.1f/s)%s\n", kClients, elapsed_s, total, total / elapsed_s,
              kSanitized ? " [sanitizer build]" : "");
  std::printf("  by kind:");
  for (const auto& [k, n] : kind_count) std::printf(" %s=%d", k.c_str(), n);
  std::printf("\n  by status:");
  for (const auto& [st, n] : status_count) {
    std::printf(" %s=%d", st == -2 ? "disconnected" : st == -1 ? "no-response" : std::to_string(st).c_str(), n);
  }
  std::printf("\n");
  auto pr = [](const char* name, const std::vector<double>& v) {
    std::printf("  %-22s n=%-6zu p50=%8.1f p90=%8.1f p99=%8.1f p999=%8.1f max=%8.1f ms\n", name, v.size(),
                percentile(v, 0.5), percentile(v, 0.9), percentile(v, 0.99), percentile(v, 0.999), percentile(v, 1.0));
  };
  pr("client non-stream e2e", plain_ms);
  pr("client stream e2e", stream_ms);
  pr("client stream TTFT", ttft_ms);
  if (stats.status == 200) {
    for (const char* h : {"ttft", "tpot", "e2e", "queue"}) {
      const json& l = stats.j["latency_ms"][h];
      std::printf("  server %-15s n=%-6d p50=%8.2f p90=%8.2f p99=%8.2f p999=%8.2f ms\n", h, l["count"].get<int>(),
                  l["p50"].get<double>(), l["p90"].get<double>(), l["p99"].get<double>(), l["p999"].get<double>());
    }
    std::printf("  server finished: %s, disconnects %s, tokens generated %s\n",
                stats.j["requests"]["finished"].dump().c_str(), stats.j["requests"]["client_disconnects"].dump().c_str(),
                stats.j["tokens"]["generated_total"].dump().c_str());
  }
  std::printf("  RSS: start %ld KiB, after warm-up %ld KiB, end %ld KiB, peak %ld KiB\n", rss_start, rss_warm, rss_end,
              rss_peak);
  std::printf("  server exit code after SIGTERM: %d\n", exit_code);

  EXPECT_GT(total, kClients);
  EXPECT_EQ(bad, 0) << first_problem;
  std::printf("  transport retries: %d\n", retries);
  EXPECT_LE(retries, std::max(2, total / 1000)) << "too many requests lost their connection";
  for (const auto& [st, n] : status_count) {
    EXPECT_TRUE(st == 200 || st == 503 || st == -2) << n << " requests ended with status " << st;
  }
  EXPECT_GE(status_count[200], kClients);  // real work got done, not only refusals
  EXPECT_GT(status_count[-2], 0);  // some clients did vanish mid-stream
  EXPECT_EQ(exit_code, 0) << err.substr(0, 4000);
  EXPECT_EQ(err.find("AddressSanitizer"), std::string::npos) << err.substr(0, 4000);
  EXPECT_EQ(err.find("LeakSanitizer"), std::string::npos) << err.substr(0, 4000);
  EXPECT_EQ(err.find("runtime error:"), std::string::npos) << err.substr(0, 4000);
  if (!kSanitized) {
    // Flat after warm-up: at most 10% + 8 MiB above the warm-up level.
    EXPECT_LE(rss_end, rss_warm + rss_warm / 10 + 8 * 1024) << "RSS grew from " << rss_warm << " to " << rss_end << " KiB";
    EXPECT_LE(rss_peak, rss_warm + rss_warm / 10 + 8 * 1024);
  }
}

}  // namespace
}  // namespace edgeinfer::server::test
