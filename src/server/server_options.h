#pragma once
// Everything `edgeinfer serve` can be told; defaults suit one user on a laptop.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace edgeinfer::server {

struct ServerOptions {
  std::string model_path;
  std::string model_alias;         // id in /v1/models and responses; "" = the file name without .gguf
  std::string chat_template_file;  // overrides the model's chat template
  std::string draft_model_path;    // --draft: speculative drafts from this model (same vocabulary)

  std::string host = "127.0.0.1";  // loopback unless told otherwise
  int port = 8080;                 // 0: any free port (tests)

  EngineOptions engine;

  // Protection.
  std::vector<std::string> api_keys;  // empty: no authentication
  int32_t rate_limit = 0;             // requests per key per window; 0: off
  double rate_window_s = 60;
  int32_t max_queue = 64;             // admitted requests beyond engine.max_running; more get 503
  double slo_ttft_ms = 0;             // 0: no SLO shedding
  int32_t slo_min_priority = 1;       // requests below this priority are shed when the SLO is missed
  double slo_window_s = 30;
  size_t max_body_bytes = 8u << 20;   // larger bodies get 413
  int read_timeout_s = 30;            // a client that sends nothing for this long is dropped
  int write_timeout_s = 30;           // a client that reads nothing for this long is dropped
  int keep_alive_timeout_s = 5;
  int http_threads = 0;               // 0: max(128, 2 * (max_running + max_queue) + 16)
  std::string cors_origin;            // "" = no CORS headers; "*" or an origin

  int64_t shutdown_grace_ms = 10000;  // SIGTERM: finish in-flight requests for this long, then cancel
  bool log_requests = false;          // one line per request on stderr
};

}  // namespace edgeinfer::server
