#pragma once
// Helpers shared by the route handlers: the error-catching wrapper, the model-name check, the
// request's priority, and admission + submission of a generation.
#include <httplib.h>

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "server/generation.h"
#include "server/request_parsing.h"

namespace edgeinfer::server {

struct ServerContext;

using RouteFn = std::function<void(const httplib::Request&, httplib::Response&)>;
using PostFn = std::function<void(const httplib::Request&, const std::string& body, httplib::Response&)>;

// Runs `fn`; an ApiError becomes its JSON error response, any other exception a 500 (logged),
// so no input can take the server down.
httplib::Server::Handler guarded(ServerContext& ctx, RouteFn fn);
// Same for POST: reads the body itself, at most --max-body bytes however it is sent (httplib
// 0.11 bounds only bodies with a Content-Length; a chunked body is cut off here), 413 beyond.
httplib::Server::HandlerWithContentReader guarded_post(ServerContext& ctx, PostFn fn);

// 404 model_not_found unless `model` is empty or names the served model.
void check_model(const ServerContext& ctx, const std::string& model);

// The body's "priority", else the X-Priority header, else 0.
int32_t request_priority(const GenerationOptions& g, const httplib::Request& req);

// Checks the prompt against the context, admits the request (503 queue_full / slo_shed) and
// submits it to the engine.
std::unique_ptr<Generation> admit_and_start(ServerContext& ctx, const httplib::Request& http, std::vector<int32_t> prompt,
                                            const GenerationOptions& g, const std::string& prompt_param,
                                            std::chrono::steady_clock::time_point t_arrival);

// The non-streamed outcome: a failed generation becomes an ApiError (500 engine error, 503
// cancelled by shutdown).
void throw_if_failed(const GenerationResult& r);

}  // namespace edgeinfer::server
