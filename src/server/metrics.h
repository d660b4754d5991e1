#pragma once
// Server metrics: latency histograms of finished requests, HTTP status and rejection counters,
// rendered with the engine's own counters and gauges as Prometheus text (GET /metrics, vLLM's
// metric names with the "edgeinfer:" prefix) or as JSON with P50/P90/P99/P999 (GET /v1/stats).
// Thread-safe: requests finish on the engine thread, statuses are counted on HTTP threads.
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "engine/engine.h"
#include "engine/request.h"
#include "server/histogram.h"
#include "server/json_fields.h"

namespace edgeinfer::server {

struct FinishedRequest {
  RequestTimings timings;
  FinishReason finish = FinishReason::None;
  double e2e_s = 0;  // arrival at the server → final event
};

// Server-side state shown next to the engine's.
struct ServerGauges {
  int32_t in_flight = 0;        // admitted generations not finished
  int32_t max_in_flight = 0;
  double slo_ttft_ms = 0;       // 0: off
  double p99_ttft_window_ms = 0;
  uint64_t n_shed = 0;
  uint64_t n_queue_full = 0;
};

class ServerMetrics {
 public:
  ServerMetrics();

  void record_finished(const FinishedRequest& r);
  void record_status(int status);
  void record_rejection(const std::string& reason);  // unauthorized, rate_limited, queue_full, slo_shed, ...
  void record_disconnect();

  std::string prometheus(const EngineStats& es, const ServerGauges& g, const std::string& model_name) const;
  json stats_json(const EngineStats& es, const ServerGauges& g, const std::string& model_name) const;

  uint64_t status_count(int status) const;
  uint64_t n_disconnects() const;

 private:
  mutable std::mutex mu_;
  std::chrono::steady_clock::time_point t_start_;
  Histogram ttft_, tpot_, e2e_, queue_, prefill_, decode_, prompt_tokens_, gen_tokens_;
  std::map<int, uint64_t> status_;
  std::map<std::string, uint64_t> rejected_;
  uint64_t disconnects_ = 0;
  uint64_t finished_ = 0;
};

}  // namespace edgeinfer::server
