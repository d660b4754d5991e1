#pragma once
// The server's lifecycle:
//   start()      binds the socket and serves at once; /health answers 503 "loading" and every
//                other endpoint 503 until the model is loaded;
//   load_model() loads model, tokenizer, chat template and engine; then requests are served;
//   shutdown()   stops taking work (new requests get 503, /health too), lets in-flight requests
//                finish for up to the grace period, cancels what remains (their clients get a
//                final error event), waits for the responses to be written, closes the socket.
//
//   HttpServer s(opts);
//   int port = s.start();
//   s.load_model();
//   ...                      // e.g. wait for SIGTERM
//   s.shutdown(10000);
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "server/server_options.h"

namespace httplib {
class Server;
}

namespace edgeinfer::server {

struct ServerContext;

class HttpServer {
 public:
  explicit HttpServer(ServerOptions opt);
  ~HttpServer();  // shutdown(0) if still running
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds host:port (port 0: a free port) and starts the listener thread; returns the port.
  // Throws Error when the address cannot be bound.
  int start();
  // Throws Error naming the file on a missing or invalid model or template; the server then
  // keeps answering 503 until shut down.
  void load_model();
  // Idempotent; returns when the listener has stopped.
  void shutdown(int64_t grace_ms);

  int port() const { return port_; }
  ServerContext& context() { return *ctx_; }

 private:
  std::unique_ptr<ServerContext> ctx_;
  std::unique_ptr<httplib::Server> http_;
  std::thread listener_;
  int port_ = -1;
  std::mutex lifecycle_mu_;
  bool stopped_ = false;
};

}  // namespace edgeinfer::server
