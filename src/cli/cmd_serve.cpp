// `edgeinfer serve`: the OpenAI-compatible HTTP server (src/server) in front of the engine.
// SIGTERM / SIGINT drain: new requests are refused, in-flight ones finish within the grace
// period (then are cancelled), and the process exits 0.
#ifdef EDGEINFER_HAVE_SERVER

#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/common.h"
#include "server/auth.h"
#include "server/http_server.h"
#include "server/server_context.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace edgeinfer::cli {

namespace {

struct ServeCli {
  server::ServerOptions o;
  std::vector<std::string> api_keys;
  std::string api_key_file;
  std::string kv_mem;
  std::string kv_type = "f16";
  std::string max_body = "8M";
  int parallel = 8;
  int threads = 0;
  int ctx = 0;
  int batch_tokens = 512;
  double cache_save_interval_s = 60;
  bool no_speculative = false;
  double step_slack = 0.2;
};

int serve(ServeCli& c) {
  server::ServerOptions& o = c.o;
  o.api_keys = c.api_keys;
  if (!c.api_key_file.empty()) {
    for (auto& k : server::read_api_key_file(c.api_key_file)) o.api_keys.push_back(std::move(k));
  }
  o.engine.max_running = c.parallel;
  o.engine.n_threads = c.threads > 0 ? c.threads : default_threads();
  o.engine.n_ctx = c.ctx;
  o.engine.max_batch_tokens = c.batch_tokens;
  o.engine.kv_type = parse_kv_type(c.kv_type);
  o.engine.speculative = !c.no_speculative;
  o.engine.step_slack = c.step_slack;
  o.engine.persist_interval_ms = static_cast<int64_t>(c.cache_save_interval_s * 1000.0);
  if (!c.kv_mem.empty()) o.engine.kv_mem_bytes = static_cast<int64_t>(parse_byte_size(c.kv_mem, "--kv-mem"));
  o.max_body_bytes = parse_byte_size(c.max_body, "--max-body");

  // Block the stop signals before any thread exists, so every thread inherits the mask and
  // this one alone takes them with sigwait(); no handler runs in a random thread.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  server::HttpServer srv(o);
  const int port = srv.start();
  std::printf("edgeinfer serve: listening on http://%s:%d\n", o.host.c_str(), port);
  std::fflush(stdout);
  std::fprintf(stderr, "edgeinfer serve: loading %s\n", o.model_path.c_str());
  try {
    srv.load_model();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    srv.shutdown(0);
    return 1;
  }
  const server::ServerContext& ctx = srv.context();
  const EngineStats es = ctx.engine->stats();
  std::fprintf(stderr,
               "edgeinfer serve: ready: model '%s', context %d tokens, KV %d blocks x %d tokens, %d parallel, "
               "queue %d, chat template: %s%s\n",
               ctx.model_id.c_str(), ctx.engine->n_ctx(), es.kv_blocks_total, es.kv_block_size, c.parallel,
               o.max_queue, ctx.prompts->template_is_fallback() ? "fallback (ChatML-style)" : "the model's",
               o.api_keys.empty() ? "" : ", API keys required");
  std::fflush(stderr);

  int sig = 0;
  while (sigwait(&stop_signals, &sig) != 0) {
  }
  std::fprintf(stderr, "edgeinfer serve: %s received; draining (grace %lld ms)\n", sig == SIGINT ? "SIGINT" : "SIGTERM",
               static_cast<long long>(o.shutdown_grace_ms));
  std::fflush(stderr);
  srv.shutdown(o.shutdown_grace_ms);
  std::fprintf(stderr, "edgeinfer serve: stopped\n");
  return 0;
}

}  // namespace

void add_serve_command(CLI::App& app, Registry& r) {
  auto c = std::make_shared<ServeCli>();
  server::ServerOptions& o = c->o;
  CLI::App* sub = app.add_subcommand("serve", "OpenAI-compatible HTTP server (chat, completions, infill, metrics)");
  sub->add_option("-m,--model", o.model_path, "GGUF model file")->required();
  sub->add_option("--alias", o.model_alias, "Model id shown to clients (default: the file name without .gguf)");
  sub->add_option("--host", o.host, "Address to listen on (loopback unless you mean otherwise)")->capture_default_str();
  sub->add_option("--port", o.port, "TCP port (0: any free port)")->capture_default_str()->check(CLI::Range(0, 65535));
  sub->add_option("--api-key", c->api_keys, "Require this API key (repeatable)");
  sub->add_option("--api-key-file", c->api_key_file, "Require one of the keys in this file (one per line)");
  sub->add_option("--parallel", c->parallel, "Requests decoded at once")->capture_default_str()->check(CLI::Range(1, 1024));
  sub->add_option("--kv-mem", c->kv_mem, "KV cache budget, e.g. 512M or 2G (default: max(8192 tokens, context))");
  sub->add_option("--kv-type", c->kv_type, "KV cache type: f16, f32, q8_0")->capture_default_str()->check(CLI::IsMember({"f16", "f32", "q8_0"}));
  sub->add_option("-c,--ctx-size", c->ctx, "Context per request in tokens (0: model's, at most 4096)")->capture_default_str()->check(non_negative());
  sub->add_option("-t,--threads", c->threads, "Compute threads (0: all hardware threads)")->capture_default_str()->check(non_negative());
  sub->add_option("--batch-tokens", c->batch_tokens, "Tokens per engine step")->capture_default_str()->check(CLI::Range(1, 65536));
  sub->add_flag("--no-speculative", c->no_speculative, "Disable prompt-lookup speculative decoding");
  sub->add_option("--step-slack", c->step_slack,
                  "While requests decode, new prompts' tokens and drafts may make a step at most this much slower "
                  "(0.2: 20%): lower keeps token rates steadier, higher gives new requests their first token sooner")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 10.0));
  sub->add_option("--cache-dir", o.engine.cache_dir, "Persist hot prefix-cache blocks in this folder across restarts");
  sub->add_option("--cache-save-interval", c->cache_save_interval_s,
                  "With --cache-dir: also save while idle, at most once per this many seconds, when new prefixes were "
                  "cached (0: only at shutdown)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0));
  sub->add_option("--draft", o.draft_model_path, "Draft model for speculative decoding (same vocabulary; drafts where prompt lookup has none)");
  sub->add_option("--chat-template-file", o.chat_template_file, "Jinja chat template to use instead of the model's");
  sub->add_option("--max-queue", o.max_queue, "Requests that may wait beyond --parallel; more get 503")->capture_default_str()->check(CLI::Range(0, 100000));
  sub->add_option("--slo-ttft-ms", o.slo_ttft_ms, "Shed low-priority requests (503) while P99 time to first token exceeds this (0: off)")->capture_default_str()->check(non_negative());
  sub->add_option("--slo-min-priority", o.slo_min_priority, "Requests below this priority are shed under --slo-ttft-ms")->capture_default_str();
  sub->add_option("--slo-window-s", o.slo_window_s, "Window of the P99 TTFT measurement")->capture_default_str()->check(positive());
  sub->add_option("--rate-limit", o.rate_limit, "Requests per key (or client address) per window; 0: off")->capture_default_str()->check(non_negative());
  sub->add_option("--rate-window-s", o.rate_window_s, "Rate-limit window in seconds")->capture_default_str()->check(positive());
  sub->add_option("--max-body", c->max_body, "Largest request body (413 above), e.g. 8M")->capture_default_str();
  sub->add_option("--timeout-read", o.read_timeout_s, "Seconds a client may send nothing before it is dropped")->capture_default_str()->check(CLI::Range(1, 3600));
  sub->add_option("--timeout-write", o.write_timeout_s, "Seconds a client may read nothing before it is dropped")->capture_default_str()->check(CLI::Range(1, 3600));
  sub->add_option("--http-threads", o.http_threads, "Connection threads, one per open connection (0: max(128, 2 x (parallel + max-queue) + 16))")->capture_default_str()->check(non_negative());
  sub->add_option("--cors-origin", o.cors_origin, "Allow browser requests from this origin ('*' for any); off by default");
  sub->add_option("--shutdown-grace-ms", o.shutdown_grace_ms, "On SIGTERM/SIGINT, let in-flight requests finish this long")->capture_default_str()->check(non_negative());
  sub->add_flag("--log-requests", o.log_requests, "Log one line per request on stderr");
  r.add(sub, [c] { return serve(*c); });
}

}  // namespace edgeinfer::cli

#endif  // EDGEINFER_HAVE_SERVER
