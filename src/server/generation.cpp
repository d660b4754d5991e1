#include "server/generation.h"

#include "server/api_error.h"
#include "server/server_context.h"
#include "util/error.h"

namespace edgeinfer::server {

struct Generation::Shared {
  Shared(ServerContext& c, AdmissionControl::Ticket t, Clock::time_point arrival)
      : ctx(c), ticket(std::move(t)), t_arrival(arrival) {
    ctx.live_generations.fetch_add(1);
  }
  ~Shared() { ctx.live_generations.fetch_sub(1); }

  // Engine thread: record the end, copy, wake the reader. Nothing here blocks for long. The
  // metrics and the admission slot are settled before the reader can see the final event, so a
  // client that got its answer never sees its own request still counted.
  void on_event(const TokenEvent& ev) {
    if (ev.done) {
      // The slot goes back before the request is counted as finished, so whoever sees it in
      // the finished counters also sees it gone from requests_in_flight.
      if (ev.timings.n_generated > 0) ctx.admission.record_ttft(ev.timings.ttft_ms);
      ticket.release();  // only this thread touches the ticket once the request is submitted
      FinishedRequest f;
      f.timings = ev.timings;
      f.finish = ev.finish;
      f.e2e_s = std::chrono::duration<double>(Clock::now() - t_arrival).count();
      ctx.metrics.record_finished(f);
    }
    {
      std::lock_guard<std::mutex> lk(mu);
      events.push_back(ev);
      if (ev.done) done = true;
    }
    cv.notify_all();
  }

  ServerContext& ctx;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<TokenEvent> events;
  bool done = false;
  AdmissionControl::Ticket ticket;
  Clock::time_point t_arrival;
};

std::unique_ptr<Generation> Generation::start(ServerContext& ctx, GenerationRequest req, AdmissionControl::Ticket ticket,
                                              Clock::time_point t_arrival) {
  auto shared = std::make_shared<Shared>(ctx, std::move(ticket), t_arrival);
  req.sink = [shared](const TokenEvent& ev) { shared->on_event(ev); };
  uint64_t id = 0;
  try {
    id = ctx.engine->submit(std::move(req));
  } catch (const Error& e) {
    if (ctx.draining.load()) {
      throw ApiError(503, "the server is shutting down", "unavailable_error", "", "shutting_down");
    }
    throw ApiError(400, e.what(), "invalid_request_error", "", "invalid_request");
  }
  return std::unique_ptr<Generation>(new Generation(ctx, std::move(shared), id));
}

Generation::~Generation() {
  if (!finished()) cancel();
}

bool Generation::wait(std::vector<TokenEvent>& out, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lk(shared_->mu);
  if (shared_->events.empty()) {
    shared_->cv.wait_for(lk, timeout, [&] { return !shared_->events.empty(); });
  }
  if (shared_->events.empty()) return false;
  for (auto& ev : shared_->events) out.push_back(std::move(ev));
  shared_->events.clear();
  return true;
}

void Generation::cancel() {
  if (cancel_sent_) return;
  cancel_sent_ = true;
  ctx_.engine->cancel(id_);
}

bool Generation::finished() const {
  std::lock_guard<std::mutex> lk(shared_->mu);
  return shared_->done;
}

GenerationResult run_to_end(Generation& g, int64_t t_max_predict_ms) {
  using Clock = Generation::Clock;
  GenerationResult r;
  std::vector<TokenEvent> evs;
  Clock::time_point t_first{};
  bool have_first = false;
  while (!r.done) {
    evs.clear();
    g.wait(evs, std::chrono::milliseconds(t_max_predict_ms > 0 ? 20 : 1000));
    for (const TokenEvent& ev : evs) {
      if (!have_first && !ev.tokens.empty()) {
        have_first = true;
        t_first = Clock::now();
      }
      r.add(ev);
    }
    if (!r.done && t_max_predict_ms > 0 && have_first &&
        Clock::now() - t_first > std::chrono::milliseconds(t_max_predict_ms)) {
      r.time_limited = true;
      g.cancel();
    }
  }
  return r;
}

}  // namespace edgeinfer::server
