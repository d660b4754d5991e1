#pragma once
// The state every route handler shares: options, lifecycle flags, protection (auth, rate limit,
// admission), metrics, and — once loaded — the model, tokenizer, prompt builder and engine.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/engine.h"
#include "model/model.h"
#include "server/admission.h"
#include "server/auth.h"
#include "server/metrics.h"
#include "server/prompt_builder.h"
#include "server/rate_limiter.h"
#include "server/server_options.h"
#include "tokenizer/tokenizer.h"

namespace edgeinfer::server {

struct ServerContext {
  explicit ServerContext(ServerOptions o);

  ServerOptions opt;
  std::atomic<bool> ready{false};     // model loaded: generation endpoints answer
  std::atomic<bool> draining{false};  // shutting down: new requests get 503
  std::atomic<int64_t> live_generations{0};  // generations whose state is still alive

  ApiKeyAuth auth;
  RateLimiter limiter;
  AdmissionControl admission;
  ServerMetrics metrics;
  int64_t created_unix = 0;  // "created" of the model and of responses' ids

  // Set once by HttpServer::load_model() before `ready`; read-only afterwards.
  std::unique_ptr<Model> model;
  std::unique_ptr<Model> draft_model;  // --draft (nullptr: none)
  std::unique_ptr<Tokenizer> tok;
  std::unique_ptr<PromptBuilder> prompts;
  std::string model_id;
  // Declared last so it is destroyed first: its thread calls sinks that touch the members above.
  std::unique_ptr<Engine> engine;

  // "chatcmpl-5f0c2a9e00000007": a per-process random tag and a counter.
  std::string new_id(const char* prefix);
  ServerGauges gauges();
  // Whether a request's "model" names the served model (its id, file name or path); "" does.
  bool model_matches(const std::string& name) const;

 private:
  uint32_t id_tag_ = 0;
  std::atomic<uint64_t> next_id_{1};
};

}  // namespace edgeinfer::server
