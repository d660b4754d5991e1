#include "server/sse_stream.h"

#include "server/server_context.h"
#include "server/sse.h"

namespace edgeinfer::server {

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kPoll = std::chrono::milliseconds(50);
constexpr auto kHeartbeat = std::chrono::seconds(1);

struct StreamState {
  ServerContext* ctx = nullptr;
  std::unique_ptr<Generation> gen;
  std::unique_ptr<StreamFormat> fmt;
  GenerationResult result;
  int64_t t_max_predict_ms = 0;
  bool began = false;
  bool finished = false;  // the final bytes were written
  bool have_first = false;
  Clock::time_point t_first{}, t_last_write{};
};

}  // namespace

void stream_generation(ServerContext& ctx, httplib::Response& res, std::unique_ptr<Generation> gen,
                       std::unique_ptr<StreamFormat> fmt, int64_t t_max_predict_ms) {
  auto st = std::make_shared<StreamState>();
  st->ctx = &ctx;
  st->gen = std::move(gen);
  st->fmt = std::move(fmt);
  st->t_max_predict_ms = t_max_predict_ms;
  st->t_last_write = Clock::now();
  res.status = 200;
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  res.set_chunked_content_provider(
      "text/event-stream",
      [st](size_t, httplib::DataSink& sink) -> bool {
        std::string out;
        if (!st->began) {
          out += st->fmt->begin();
          st->began = true;
        }
        std::vector<TokenEvent> evs;
        st->gen->wait(evs, kPoll);
        for (const TokenEvent& ev : evs) {
          if (!st->have_first && !ev.tokens.empty()) {
            st->have_first = true;
            st->t_first = Clock::now();
          }
          st->result.add(ev);
          out += st->fmt->delta(ev);
          if (ev.done) out += st->fmt->end(st->result);
        }
        const auto now = Clock::now();
        if (!st->result.done && st->t_max_predict_ms > 0 && st->have_first &&
            now - st->t_first > std::chrono::milliseconds(st->t_max_predict_ms)) {
          st->result.time_limited = true;
          st->gen->cancel();
        }
        if (out.empty() && now - st->t_last_write >= kHeartbeat) out = sse_comment("keep-alive");
        if (!out.empty()) {
          if (!sink.write(out.data(), out.size())) {
            st->gen->cancel();  // the client went away; the releaser counts it
            return false;
          }
          st->t_last_write = now;
        }
        if (st->result.done) {
          st->finished = true;
          sink.done();
        }
        return true;
      },
      [st](bool) {
        if (!st->gen) return;
        // Runs when the response is over, written or not: a stream that did not reach its end
        // lost its client (or the server is stopping); free the engine's work now.
        if (!st->finished) {
          st->gen->cancel();
          st->ctx->metrics.record_disconnect();
        }
        st->gen.reset();
      });
}

}  // namespace edgeinfer::server
