#include "server/rate_limiter.h"

#include <algorithm>
#include <vector>

namespace edgeinfer::server {

RateLimiter::RateLimiter(int32_t max_requests, double window_s)
    : max_(max_requests),
      window_s_(window_s),
      window_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::max(window_s, 1e-3)))) {}

RateLimiter::Decision RateLimiter::acquire(const std::string& key, Clock::time_point now) {
  Decision d;
  if (max_ <= 0) return d;
  std::lock_guard<std::mutex> lk(mu_);
  // Forget idle clients now and then (every 1024 calls), so a scan of many addresses cannot grow
  // the table without bound.
  if ((++n_calls_ & 1023) == 0) sweep(now);
  auto& times = log_[key];
  while (!times.empty() && times.front() <= now - window_) times.pop_front();
  if (static_cast<int32_t>(times.size()) >= max_) {
    d.allowed = false;
    d.retry_after_s = std::chrono::duration<double>(times.front() + window_ - now).count();
    return d;
  }
  times.push_back(now);
  d.remaining = max_ - static_cast<int32_t>(times.size());
  return d;
}

void RateLimiter::sweep(Clock::time_point now) {
  for (auto it = log_.begin(); it != log_.end();) {
    if (it->second.empty() || it->second.back() <= now - window_) {
      it = log_.erase(it);
    } else {
      ++it;
    }
  }
}

size_t RateLimiter::n_keys() const {
  std::lock_guard<std::mutex> lk(mu_);
  return log_.size();
}

}  // namespace edgeinfer::server
