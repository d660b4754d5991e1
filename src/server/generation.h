#pragma once
// One accepted generation: submitted to the engine with a sink that copies each event into a
// queue and returns at once (the engine thread never waits on a client), read by the HTTP
// handler thread. When the engine reports the end, the sink records the request's metrics and
// gives its admission ticket back, even if the client has already gone.
//
// Dropping the last handle of a generation that has not finished cancels it: the engine frees
// its KV blocks within one step.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/request.h"
#include "server/admission.h"
#include "server/generation_result.h"

namespace edgeinfer::server {

struct ServerContext;

class Generation {
 public:
  using Clock = std::chrono::steady_clock;

  // Submits `req` (its sink is replaced). Throws ApiError: 503 when the server is shutting down,
  // 400 with the engine's message when it refuses the request.
  static std::unique_ptr<Generation> start(ServerContext& ctx, GenerationRequest req, AdmissionControl::Ticket ticket,
                                           Clock::time_point t_arrival);
  ~Generation();
  Generation(const Generation&) = delete;
  Generation& operator=(const Generation&) = delete;

  // Moves queued events into `out`, waiting up to `timeout` for the first. False when none came.
  bool wait(std::vector<TokenEvent>& out, std::chrono::milliseconds timeout);
  // Asks the engine to stop the request (idempotent); its final event follows.
  void cancel();
  bool finished() const;
  uint64_t id() const { return id_; }

  struct Shared;

 private:
  Generation(ServerContext& ctx, std::shared_ptr<Shared> shared, uint64_t id) : ctx_(ctx), shared_(std::move(shared)), id_(id) {}

  ServerContext& ctx_;
  std::shared_ptr<Shared> shared_;
  uint64_t id_;
  bool cancel_sent_ = false;
};

// Reads events until the end. With t_max_predict_ms > 0, cancels the request once that long has
// passed since its first token (result.time_limited); the text so far is the answer.
GenerationResult run_to_end(Generation& g, int64_t t_max_predict_ms);

}  // namespace edgeinfer::server
