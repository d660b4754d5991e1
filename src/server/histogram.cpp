#include "server/histogram.h"

#include <algorithm>
#include <cmath>

namespace edgeinfer::server {

namespace {

constexpr double kFineMin = 1e-6;
constexpr double kFineRatio = 1.02;
// 1e-6 * 1.02^2600 ≈ 2e16: room for token counts and seconds alike.
constexpr size_t kFineBuckets = 2600;

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), le_counts_(bounds_.size() + 1, 0), fine_(kFineBuckets + 1, 0) {}

size_t Histogram::fine_index(double v) {
  if (!(v >= kFineMin)) return 0;
  const double i = std::floor(std::log(v / kFineMin) / std::log(kFineRatio));
  return 1 + static_cast<size_t>(std::min<double>(i, kFineBuckets - 1));
}

double Histogram::fine_mid(size_t i) {
  if (i == 0) return 0;
  // Geometric middle of [min * r^(i-1), min * r^i).
  return kFineMin * std::pow(kFineRatio, static_cast<double>(i - 1) + 0.5);
}

void Histogram::observe(double v) {
  if (!(v >= 0)) v = 0;
  const size_t b = static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());
  le_counts_[b]++;
  fine_[fine_index(v)]++;
  if (count_ == 0) {
    min_ = max_ = v;
  } else {
    min_ = std::min(min_, v);
    max_ = std::max(max_, v);
  }
  count_++;
  sum_ += v;
}

uint64_t Histogram::cumulative(size_t i) const {
  uint64_t c = 0;
  for (size_t k = 0; k <= std::min(i, bounds_.size()); ++k) c += le_counts_[k];
  return c;
}

double Histogram::quantile(double q) const {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_))));
  uint64_t c = 0;
  for (size_t i = 0; i < fine_.size(); ++i) {
    c += fine_[i];
    if (c >= rank) return std::clamp(fine_mid(i), min_, max_);
  }
  return max_;
}

std::vector<double> latency_buckets_s() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,
          0.75,   1.0,   2.5,    5.0,   7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0};
}

std::vector<double> token_latency_buckets_s() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,
          0.3,    0.4,   0.5,    0.75,  1.0,  2.5,   5.0,  7.5,   10.0, 20.0, 40.0, 80.0};
}

std::vector<double> request_latency_buckets_s() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0,
          15.0,  20.0, 30.0,  40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0};
}

std::vector<double> token_count_buckets() {
  std::vector<double> b;
  for (double decade = 1; decade <= 1e6; decade *= 10) {
    for (double m : {1.0, 2.0, 5.0}) {
      if (m * decade <= 1e6) b.push_back(m * decade);
    }
  }
  return b;
}

}  // namespace edgeinfer::server
