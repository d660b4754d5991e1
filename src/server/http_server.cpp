#include "server/http_server.h"

#include <httplib.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "server/http_reply.h"
#include "server/routes.h"
#include "server/cors.h"
#include "server/request_gate.h"
#include "server/server_context.h"
#include "util/data_path.h"
#include "util/error.h"

namespace edgeinfer::server {

namespace {

using Clock = std::chrono::steady_clock;

std::string read_text_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot read the " + std::string(what));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string file_stem(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".gguf") == 0) name.resize(name.size() - 5);
  return name;
}

// Bodies for the errors httplib answers itself (unknown route, oversized body, bad request line).
void fill_error_body(const ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  if (!res.body.empty() || res.is_chunked_content_provider_) return;
  switch (res.status) {
    case 404:
      send_error(res, ApiError(404, "no endpoint " + req.method + " " + req.path, "not_found_error", "", "not_found"));
      break;
    case 413:
      send_error(res, ApiError(413, "the request body is larger than the limit of " + std::to_string(ctx.opt.max_body_bytes) +
                                        " bytes",
                               "invalid_request_error", "", "payload_too_large"));
      break;
    case 414:
      send_error(res, ApiError(414, "the request URI is too long", "invalid_request_error", "", "uri_too_long"));
      break;
    default:
      send_error(res, ApiError(res.status, "the request could not be processed (HTTP " + std::to_string(res.status) + ")",
                               "", "", "bad_request"));
  }
}

}  // namespace

HttpServer::HttpServer(ServerOptions opt) : ctx_(std::make_unique<ServerContext>(std::move(opt))) {}

HttpServer::~HttpServer() { shutdown(0); }

int HttpServer::start() {
  // Debian's cpp-httplib sends without MSG_NOSIGNAL: a client that disconnects mid-response
  // would otherwise raise SIGPIPE and kill the whole process. Failed writes are handled instead.
  std::signal(SIGPIPE, SIG_IGN);

  const ServerOptions& o = ctx_->opt;
  http_ = std::make_unique<httplib::Server>();
  // A keep-alive connection holds its thread between requests, so threads bound open
  // connections, not just requests: leave room beyond the admitted requests.
  const int threads = o.http_threads > 0 ? o.http_threads
                                         : std::max(128, 2 * (std::max(1, o.engine.max_running) + std::max(0, o.max_queue)) + 16);
  http_->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  http_->set_payload_max_length(o.max_body_bytes);
  http_->set_read_timeout(o.read_timeout_s, 0);
  http_->set_write_timeout(o.write_timeout_s, 0);
  http_->set_keep_alive_timeout(o.keep_alive_timeout_s);
  http_->set_keep_alive_max_count(100);

  ServerContext& ctx = *ctx_;
  http_->set_pre_routing_handler(
      [&ctx](const httplib::Request& req, httplib::Response& res) { return gate_request(ctx, req, res); });
  // Typed: a lambda would match both set_error_handler overloads.
  const httplib::Server::Handler on_error = [&ctx](const httplib::Request& req, httplib::Response& res) {
    fill_error_body(ctx, req, res);
  };
  http_->set_error_handler(on_error);
  http_->set_exception_handler([&ctx](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    std::fprintf(stderr, "edgeinfer serve: internal error on %s %s: %s\n", req.method.c_str(), req.path.c_str(), what.c_str());
    send_error(res, ApiError(500, "internal error: " + what, "server_error", "", "internal_error"));
    (void)ctx;
  });
  http_->set_logger([&ctx](const httplib::Request& req, const httplib::Response& res) {
    ctx.metrics.record_status(res.status);
    if (ctx.opt.log_requests) {
      std::fprintf(stderr, "%s %s %s -> %d\n", req.remote_addr.c_str(), req.method.c_str(), req.path.c_str(), res.status);
    }
  });
  if (!o.cors_origin.empty()) {
    http_->Options(".*", [&ctx](const httplib::Request& req, httplib::Response& res) {
      answer_preflight(ctx.opt.cors_origin, req, res);
    });
  }
  register_openai_routes(ctx, *http_);
  register_native_routes(ctx, *http_);
  register_admin_routes(ctx, *http_);

  // cpp-httplib listens with a backlog of 5 (the default compiled into Debian's library): a
  // burst of clients connecting at once (64 in the load test) overflowed the accept queue, the
  // kernel dropped their handshakes, and requests failed with read errors ~1.2 s later (after
  // the handshake's 1 s retransmission). The listening socket is noted when created and its backlog raised to the
  // system's maximum once bound (listen() on a listening socket updates the backlog).
  const auto listen_fd = std::make_shared<socket_t>(INVALID_SOCKET);
  http_->set_socket_options([listen_fd](socket_t sock) {
    httplib::default_socket_options(sock);
    *listen_fd = sock;
  });
  auto raise_backlog = [&] {
    if (*listen_fd != INVALID_SOCKET && ::listen(*listen_fd, SOMAXCONN) != 0) {
      std::fprintf(stderr, "edgeinfer serve: warning: cannot raise the listen backlog (%s); bursts of connections "
                           "may be refused\n", std::strerror(errno));
    }
  };
  if (o.port == 0) {
    port_ = http_->bind_to_any_port(o.host);
    if (port_ <= 0) throw Error("cannot bind a port on " + o.host);
  } else {
    if (!http_->bind_to_port(o.host, o.port)) {
      throw Error("cannot listen on " + o.host + ":" + std::to_string(o.port) + " (address in use or not available)");
    }
    port_ = o.port;
  }
  raise_backlog();
  listener_ = std::thread([this] { http_->listen_after_bind(); });
  // httplib's stop() does nothing until the listen loop runs: wait for it, so that a shutdown
  // right after start (a model that fails to load) cannot be lost.
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (!http_->is_running() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (!http_->is_running()) throw Error("the HTTP listener did not start on " + o.host + ":" + std::to_string(port_));
  return port_;
}

void HttpServer::load_model() {
  ServerContext& ctx = *ctx_;
  const ServerOptions& o = ctx.opt;
  struct stat st {};
  if (o.model_path.empty() || ::stat(o.model_path.c_str(), &st) != 0) {
    throw Error("model file not found: '" + o.model_path + "' (the reference models are in $EDGEINFER_DATA/models; "
                "EDGEINFER_DATA is now '" + data_dir() + "')");
  }
  ctx.model = Model::load(o.model_path);
  ctx.tok = std::make_unique<Tokenizer>(Tokenizer::from_gguf(ctx.model->gguf()));
  const std::string tmpl = o.chat_template_file.empty() ? "" : read_text_file(o.chat_template_file, "chat template file");
  ctx.model_id = o.model_alias.empty() ? file_stem(o.model_path) : o.model_alias;
  EngineOptions eo = o.engine;
  if (!o.draft_model_path.empty()) {
    if (::stat(o.draft_model_path.c_str(), &st) != 0) throw Error("draft model file not found: '" + o.draft_model_path + "'");
    ctx.draft_model = Model::load(o.draft_model_path);
    eo.draft_model = ctx.draft_model.get();  // the engine checks that the vocabularies match
  }
  ctx.engine = std::make_unique<Engine>(*ctx.model, *ctx.tok, eo);
  ctx.prompts = std::make_unique<PromptBuilder>(*ctx.tok, ctx.model->gguf(), tmpl, ctx.engine->n_ctx());
  ctx.ready.store(true);
}

void HttpServer::shutdown(int64_t grace_ms) {
  std::lock_guard<std::mutex> lk(lifecycle_mu_);
  if (stopped_) return;
  stopped_ = true;
  ServerContext& ctx = *ctx_;
  ctx.draining.store(true);
  if (ctx.engine) ctx.engine->stop(Engine::StopMode::Drain, grace_ms);
  // Every request now has its final event; give the handlers time to write their responses
  // (a client that stopped reading is bounded by the write timeout).
  const auto deadline = Clock::now() + std::chrono::seconds(ctx.opt.write_timeout_s + 1);
  while (ctx.live_generations.load() > 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (http_) http_->stop();
  if (listener_.joinable()) listener_.join();
}

}  // namespace edgeinfer::server
