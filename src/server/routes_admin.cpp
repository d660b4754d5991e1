// GET /health, GET /metrics, GET /v1/stats.
#include "server/http_reply.h"
#include "server/route_support.h"
#include "server/routes.h"
#include "server/server_context.h"

namespace edgeinfer::server {

namespace {

void health(ServerContext& ctx, const httplib::Request&, httplib::Response& res) {
  if (ctx.draining.load()) {
    json j = error_json(503, "the server is shutting down", "unavailable_error", "", "shutting_down");
    j["status"] = "shutting_down";
    send_json(res, 503, j);
  } else if (!ctx.ready.load()) {
    json j = error_json(503, "the model is still loading", "unavailable_error", "", "model_loading");
    j["status"] = "loading";
    send_json(res, 503, j);
    res.set_header("Retry-After", "1");
  } else {
    send_json(res, 200, json{{"status", "ok"}});
  }
}

void metrics(ServerContext& ctx, const httplib::Request&, httplib::Response& res) {
  res.status = 200;
  res.set_content(ctx.metrics.prometheus(ctx.engine->stats(), ctx.gauges(), ctx.model_id),
                  "text/plain; version=0.0.4; charset=utf-8");
}

void stats(ServerContext& ctx, const httplib::Request&, httplib::Response& res) {
  send_json(res, 200, ctx.metrics.stats_json(ctx.engine->stats(), ctx.gauges(), ctx.model_id));
}

}  // namespace

void register_admin_routes(ServerContext& ctx, httplib::Server& http) {
  auto bind = [&ctx](void (*f)(ServerContext&, const httplib::Request&, httplib::Response&)) {
    return guarded(ctx, [&ctx, f](const httplib::Request& q, httplib::Response& s) { f(ctx, q, s); });
  };
  http.Get("/health", bind(health));
  http.Get("/metrics", bind(metrics));
  for (const char* p : {"/v1/stats", "/stats"}) http.Get(p, bind(stats));
}

}  // namespace edgeinfer::server
