#pragma once
// Load shedding at the door, before a request reaches the engine:
//  - bounded queue: at most `max_in_flight` generations (running + waiting) are accepted at once;
//    the next one is refused (503 queue_full) instead of waiting without bound;
//  - SLO shedding: when the measured P99 time to first token over the last `slo_window_s` exceeds
//    `slo_ttft_ms`, new requests with priority below `slo_min_priority` are refused (503
//    slo_shed) instead of queueing and making every waiting request later. Higher-priority
//    requests are still admitted, so the measurement keeps moving and old samples age out.
// Thread-safe.
#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>

namespace edgeinfer::server {

struct AdmissionOptions {
  int32_t max_in_flight = 72;
  double slo_ttft_ms = 0;        // 0: no SLO shedding
  int32_t slo_min_priority = 1;  // priorities below this are "low"
  double slo_window_s = 30;
  int32_t slo_min_samples = 5;   // no shedding on fewer measurements than this
  size_t max_samples = 8192;     // newest TTFT samples kept
};

class AdmissionControl {
 public:
  using Clock = std::chrono::steady_clock;

  // An accepted request's place; gives it back when destroyed or released.
  class Ticket {
   public:
    Ticket() = default;
    explicit Ticket(AdmissionControl* owner) : owner_(owner) {}
    Ticket(Ticket&& o) noexcept : owner_(o.owner_) { o.owner_ = nullptr; }
    Ticket& operator=(Ticket&& o) noexcept;
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    ~Ticket() { release(); }
    void release();
    explicit operator bool() const { return owner_ != nullptr; }

   private:
    AdmissionControl* owner_ = nullptr;
  };

  enum class Verdict { Admitted, QueueFull, SloShed };
  struct Result {
    Verdict verdict = Verdict::Admitted;
    Ticket ticket;        // set when admitted
    double p99_ttft_ms = 0;  // the measurement behind an SloShed verdict
  };

  explicit AdmissionControl(const AdmissionOptions& opt) : opt_(opt) {}

  Result admit(int32_t priority, Clock::time_point now = Clock::now());
  // A finished request's time to first token.
  void record_ttft(double ms, Clock::time_point now = Clock::now());
  // P99 of the samples in the window (0 when there are none).
  double p99_ttft_ms(Clock::time_point now = Clock::now());
  int32_t in_flight() const;
  uint64_t n_shed() const;
  uint64_t n_queue_full() const;
  const AdmissionOptions& options() const { return opt_; }

 private:
  void give_back();
  double p99_locked(Clock::time_point now, size_t* n_samples);

  AdmissionOptions opt_;
  mutable std::mutex mu_;
  int32_t in_flight_ = 0;
  uint64_t n_shed_ = 0, n_queue_full_ = 0;
  std::deque<std::pair<Clock::time_point, double>> ttft_;  // oldest first
};

}  // namespace edgeinfer::server
