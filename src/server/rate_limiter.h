#pragma once
// Sliding-window rate limit per client key (the API key, or the client address when keys are
// off): at most `max_requests` requests in any window of `window_s` seconds. Each key keeps the
// times of its last `max_requests` accepted requests; a request is refused when the oldest of
// them is still inside the window, and the client is told how long until it leaves it
// (Retry-After). Keys idle for a whole window are forgotten, so memory stays bounded by the
// number of recently active clients. Thread-safe.
#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>

namespace edgeinfer::server {

class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  // max_requests <= 0 disables the limit.
  RateLimiter(int32_t max_requests, double window_s);

  struct Decision {
    bool allowed = true;
    double retry_after_s = 0;  // when refused: seconds until a request would be accepted
    int32_t remaining = 0;     // requests left in the current window after this one
  };
  Decision acquire(const std::string& key, Clock::time_point now = Clock::now());

  bool enabled() const { return max_ > 0; }
  int32_t max_requests() const { return max_; }
  double window_s() const { return window_s_; }
  size_t n_keys() const;

 private:
  void sweep(Clock::time_point now);

  int32_t max_;
  double window_s_;
  Clock::duration window_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::deque<Clock::time_point>> log_;
  uint64_t n_calls_ = 0;
};

}  // namespace edgeinfer::server
