#pragma once
// What every request passes before routing, in order: CORS headers; API key (401); rate limit
// per key (429 + Retry-After); then the server must be ready (503 while the model loads) and not
// shutting down (503). GET /health and CORS preflights pass freely: health checks need no key.
#include <httplib.h>

namespace edgeinfer::server {

struct ServerContext;

// Handled: the request was answered here (an error); Unhandled: route it.
httplib::Server::HandlerResponse gate_request(ServerContext& ctx, const httplib::Request& req, httplib::Response& res);

}  // namespace edgeinfer::server
