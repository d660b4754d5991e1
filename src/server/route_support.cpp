#include "server/route_support.h"

#include <cstdio>

#include "server/http_reply.h"
#include "server/server_context.h"
#include "server/stream_formats.h"

namespace edgeinfer::server {

namespace {

void run_guarded(ServerContext& ctx, const httplib::Request& req, httplib::Response& res,
                 const std::function<void()>& fn) {
  try {
    fn();
  } catch (const ApiError& e) {
    if (e.code() == "queue_full" || e.code() == "slo_shed") ctx.metrics.record_rejection(e.code());
    send_error(res, e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "edgeinfer serve: internal error on %s %s: %s\n", req.method.c_str(), req.path.c_str(), e.what());
    send_error(res, ApiError(500, std::string("internal error: ") + e.what(), "server_error", "", "internal_error"));
  }
}

}  // namespace

httplib::Server::Handler guarded(ServerContext& ctx, RouteFn fn) {
  return [&ctx, fn = std::move(fn)](const httplib::Request& req, httplib::Response& res) {
    run_guarded(ctx, req, res, [&] { fn(req, res); });
  };
}

httplib::Server::HandlerWithContentReader guarded_post(ServerContext& ctx, PostFn fn) {
  return [&ctx, fn = std::move(fn)](const httplib::Request& req, httplib::Response& res,
                                    const httplib::ContentReader& reader) {
    const size_t limit = ctx.opt.max_body_bytes;
    // A body past the limit is still read, and dropped, for up to kDrainBytes more: a client
    // that sends its whole body before reading the answer (most do) would otherwise get a
    // connection reset instead of the 413, since closing a socket with unread input resets it.
    constexpr size_t kDrainBytes = size_t{1} << 20;
    std::string body;
    bool too_large = false;
    size_t seen = 0;
    const bool ok = reader([&](const char* data, size_t n) {
      seen += n;
      if (!too_large && body.size() + n > limit) {
        too_large = true;
        std::string().swap(body);
      }
      if (too_large) return seen - limit <= kDrainBytes;
      body.append(data, n);
      return true;
    });
    if (too_large || res.status == 413) {
      send_error(res, ApiError(413, "the request body is larger than the limit of " + std::to_string(limit) + " bytes",
                               "invalid_request_error", "", "payload_too_large"));
      return;
    }
    if (!ok) {
      send_error(res, ApiError(400, "the request body could not be read", "invalid_request_error", "", "bad_request"));
      return;
    }
    run_guarded(ctx, req, res, [&] { fn(req, body, res); });
  };
}

void check_model(const ServerContext& ctx, const std::string& model) {
  if (!ctx.model_matches(model)) {
    throw ApiError(404, "The model '" + model + "' does not exist; this server serves '" + ctx.model_id + "'",
                   "invalid_request_error", "model", "model_not_found");
  }
}

int32_t request_priority(const GenerationOptions& g, const httplib::Request& req) {
  if (g.priority) return *g.priority;
  if (req.has_header("X-Priority")) return parse_priority_header(req.get_header_value("X-Priority")).value_or(0);
  return 0;
}

std::unique_ptr<Generation> admit_and_start(ServerContext& ctx, const httplib::Request& http, std::vector<int32_t> prompt,
                                            const GenerationOptions& g, const std::string& prompt_param,
                                            std::chrono::steady_clock::time_point t_arrival) {
  const int32_t max_tokens = ctx.prompts->check_fits(prompt.size(), g, prompt_param);
  const int32_t priority = request_priority(g, http);
  AdmissionControl::Result a = ctx.admission.admit(priority);
  if (a.verdict == AdmissionControl::Verdict::QueueFull) {
    throw ApiError(503, "the server is at capacity (" + std::to_string(ctx.admission.options().max_in_flight) +
                            " requests in flight); retry shortly",
                   "unavailable_error", "", "queue_full")
        .with_retry_after(1);
  }
  if (a.verdict == AdmissionControl::Verdict::SloShed) {
    char buf[160];
    std::snprintf(buf, sizeof(buf),
                  "the server is overloaded: P99 time to first token is %.0f ms, above the %.0f ms objective; "
                  "requests below priority %d are refused",
                  a.p99_ttft_ms, ctx.admission.options().slo_ttft_ms, ctx.admission.options().slo_min_priority);
    throw ApiError(503, buf, "unavailable_error", "", "slo_shed").with_retry_after(1);
  }
  GenerationRequest req;
  req.prompt = std::move(prompt);
  req.sampling = g.sampling;
  req.max_tokens = max_tokens;
  req.stop = g.stop;
  req.ignore_eos = g.ignore_eos;
  req.priority = priority;
  req.n_logprobs = g.n_logprobs;
  return Generation::start(ctx, std::move(req), std::move(a.ticket), t_arrival);
}

void throw_if_failed(const GenerationResult& r) {
  if (!r.failed()) return;
  const json e = stream_error_json(r)["error"];
  throw ApiError(r.finish == FinishReason::Error ? 500 : 503, e["message"].get<std::string>(), e["type"].get<std::string>(),
                 "", e["code"].get<std::string>());
}

}  // namespace edgeinfer::server
