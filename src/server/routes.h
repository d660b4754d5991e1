#pragma once
// The HTTP API, registered on an httplib server:
//   OpenAI:    POST /v1/chat/completions, POST /v1/completions, GET /v1/models
//              (also without the /v1 prefix)
//   llama.cpp: POST /infill, POST /tokenize, POST /detokenize, POST /apply-template
//   operation: GET /health, GET /metrics (Prometheus), GET /v1/stats (JSON percentiles)
#include <httplib.h>

namespace edgeinfer::server {

struct ServerContext;

void register_openai_routes(ServerContext& ctx, httplib::Server& http);
void register_native_routes(ServerContext& ctx, httplib::Server& http);
void register_admin_routes(ServerContext& ctx, httplib::Server& http);

}  // namespace edgeinfer::server
