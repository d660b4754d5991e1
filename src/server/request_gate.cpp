#include "server/request_gate.h"

#include <cmath>

#include "server/cors.h"
#include "server/http_reply.h"
#include "server/server_context.h"

namespace edgeinfer::server {

namespace {

std::string presented_key(const httplib::Request& req) {
  if (req.has_header("Authorization")) {
    if (auto k = bearer_token(req.get_header_value("Authorization"))) return *k;
  }
  return req.get_header_value("X-Api-Key");
}

}  // namespace

httplib::Server::HandlerResponse gate_request(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  using HR = httplib::Server::HandlerResponse;
  add_cors_headers(ctx.opt.cors_origin, req, res);
  if (req.method == "OPTIONS" || req.path == "/health") return HR::Unhandled;

  const std::string key = presented_key(req);
  if (ctx.auth.enabled() && !ctx.auth.accepts(key)) {
    ctx.metrics.record_rejection("unauthorized");
    const std::string msg = key.empty()
        ? "You didn't provide an API key. Provide it as 'Authorization: Bearer YOUR_KEY' (or 'X-Api-Key: YOUR_KEY')."
        : "Incorrect API key provided.";
    send_error(res, ApiError(401, msg, "invalid_request_error", "", "invalid_api_key"));
    res.set_header("WWW-Authenticate", "Bearer");
    return HR::Handled;
  }

  if (ctx.limiter.enabled()) {
    // Per key when keys are on; per client address otherwise.
    const std::string who = ctx.auth.enabled() ? "key:" + key : "addr:" + req.remote_addr;
    const RateLimiter::Decision d = ctx.limiter.acquire(who);
    res.set_header("X-RateLimit-Limit-Requests", std::to_string(ctx.limiter.max_requests()));
    if (!d.allowed) {
      ctx.metrics.record_rejection("rate_limited");
      const int retry = std::max(1, static_cast<int>(std::ceil(d.retry_after_s)));
      res.set_header("X-RateLimit-Remaining-Requests", "0");
      send_error(res, ApiError(429, "Rate limit reached: " + std::to_string(ctx.limiter.max_requests()) +
                                        " requests per " + std::to_string(static_cast<int>(ctx.limiter.window_s())) +
                                        " s. Retry in " + std::to_string(retry) + " s.",
                               "rate_limit_error", "", "rate_limit_exceeded")
                          .with_retry_after(retry));
      return HR::Handled;
    }
    res.set_header("X-RateLimit-Remaining-Requests", std::to_string(d.remaining));
  }

  if (!ctx.ready.load()) {
    ctx.metrics.record_rejection("loading");
    send_error(res, ApiError(503, "the model is still loading", "unavailable_error", "", "model_loading").with_retry_after(1));
    return HR::Handled;
  }
  if (ctx.draining.load()) {
    ctx.metrics.record_rejection("shutting_down");
    send_error(res, ApiError(503, "the server is shutting down", "unavailable_error", "", "shutting_down"));
    res.set_header("Connection", "close");
    return HR::Handled;
  }
  return HR::Unhandled;
}

}  // namespace edgeinfer::server
