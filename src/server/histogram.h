#pragma once
// A histogram of non-negative values (seconds, token counts) with two views:
//  - Prometheus buckets: exact counts per configured upper bound `le` (plus +Inf), for /metrics;
//  - fine log-spaced buckets (each 2% wider than the last, from 1e-6 up), for quantiles such as
//    P50/P90/P99/P999 with a relative error under 1%, for /v1/stats.
// Not synchronized: the owner (ServerMetrics) serializes access.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace edgeinfer::server {

class Histogram {
 public:
  // `bounds`: ascending Prometheus upper bounds.
  explicit Histogram(std::vector<double> bounds);

  void observe(double v);  // negative or NaN values count as 0

  uint64_t count() const { return count_; }
  double sum() const { return sum_; }
  double min() const { return count_ ? min_ : 0; }
  double max() const { return count_ ? max_ : 0; }
  const std::vector<double>& bounds() const { return bounds_; }
  // Cumulative count of observations <= bounds()[i]; i == bounds().size() gives count().
  uint64_t cumulative(size_t i) const;
  // Nearest-rank quantile estimate (q in [0, 1]): the value below which a fraction q of the
  // observations fall, within 1% (clamped to the observed min and max); 0 when empty.
  double quantile(double q) const;

 private:
  static size_t fine_index(double v);
  static double fine_mid(size_t i);

  std::vector<double> bounds_;
  std::vector<uint64_t> le_counts_;    // per bound, non-cumulative; last = above every bound
  std::vector<uint64_t> fine_;         // [0] = values below 1e-6
  uint64_t count_ = 0;
  double sum_ = 0, min_ = 0, max_ = 0;
};

// Bucket bounds used by the server's metrics.
std::vector<double> latency_buckets_s();        // TTFT, queue, prefill: 0.5 ms .. 640 s
std::vector<double> token_latency_buckets_s();  // time per output token: 0.5 ms .. 80 s
std::vector<double> request_latency_buckets_s();  // end to end, decode: 5 ms .. 1920 s
std::vector<double> token_count_buckets();      // 1, 2, 5, 10, ... 1e6

}  // namespace edgeinfer::server
