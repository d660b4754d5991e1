#include "server/admission.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace edgeinfer::server {

AdmissionControl::Ticket& AdmissionControl::Ticket::operator=(Ticket&& o) noexcept {
  if (this != &o) {
    release();
    owner_ = o.owner_;
    o.owner_ = nullptr;
  }
  return *this;
}

void AdmissionControl::Ticket::release() {
  if (owner_) {
    owner_->give_back();
    owner_ = nullptr;
  }
}

void AdmissionControl::give_back() {
  std::lock_guard<std::mutex> lk(mu_);
  --in_flight_;
}

double AdmissionControl::p99_locked(Clock::time_point now, size_t* n_samples) {
  const auto horizon = now - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opt_.slo_window_s));
  while (!ttft_.empty() && ttft_.front().first < horizon) ttft_.pop_front();
  *n_samples = ttft_.size();
  if (ttft_.empty()) return 0;
  std::vector<double> v;
  v.reserve(ttft_.size());
  for (const auto& s : ttft_) v.push_back(s.second);
  // Nearest rank: the smallest sample with at least 99% of samples at or below it.
  const size_t rank = static_cast<size_t>(std::ceil(0.99 * static_cast<double>(v.size())));
  const size_t k = std::max<size_t>(rank, 1) - 1;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

AdmissionControl::Result AdmissionControl::admit(int32_t priority, Clock::time_point now) {
  std::lock_guard<std::mutex> lk(mu_);
  Result r;
  if (in_flight_ >= opt_.max_in_flight) {
    ++n_queue_full_;
    r.verdict = Verdict::QueueFull;
    return r;
  }
  if (opt_.slo_ttft_ms > 0 && priority < opt_.slo_min_priority) {
    size_t n = 0;
    const double p99 = p99_locked(now, &n);
    if (n >= static_cast<size_t>(std::max(1, opt_.slo_min_samples)) && p99 > opt_.slo_ttft_ms) {
      ++n_shed_;
      r.verdict = Verdict::SloShed;
      r.p99_ttft_ms = p99;
      return r;
    }
  }
  ++in_flight_;
  r.ticket = Ticket(this);
  return r;
}

void AdmissionControl::record_ttft(double ms, Clock::time_point now) {
  std::lock_guard<std::mutex> lk(mu_);
  ttft_.emplace_back(now, ms);
  while (ttft_.size() > opt_.max_samples) ttft_.pop_front();
}

double AdmissionControl::p99_ttft_ms(Clock::time_point now) {
  std::lock_guard<std::mutex> lk(mu_);
  size_t n = 0;
  return p99_locked(now, &n);
}

int32_t AdmissionControl::in_flight() const {
  std::lock_guard<std::mutex> lk(mu_);
  return in_flight_;
}

uint64_t AdmissionControl::n_shed() const {
  std::lock_guard<std::mutex> lk(mu_);
  return n_shed_;
}

uint64_t AdmissionControl::n_queue_full() const {
  std::lock_guard<std::mutex> lk(mu_);
  return n_queue_full_;
}

}  // namespace edgeinfer::server
