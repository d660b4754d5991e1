#pragma once
// Helpers for the server tests: an in-process server on a free loopback port, HTTP calls with
// httplib, a raw socket for what a well-behaved client never does (disconnect mid-stream, send
// half a request), SSE parsing, a subprocess running the real `edgeinfer serve`, and a test
// model with fill-in-the-middle tokens.
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "server/http_server.h"
#include "server/server_options.h"

namespace edgeinfer::server::test {

using json = nlohmann::ordered_json;

std::string model_path(const char* name);  // $EDGEINFER_DATA/models/<name>

// stories260K, 1 compute thread, port 0, small queue: fast and deterministic.
ServerOptions test_options(const char* model = "stories260K.gguf");

// Starts and loads; the destructor shuts down.
class TestServer {
 public:
  explicit TestServer(ServerOptions o, bool load = true);
  ~TestServer();
  int port() const { return port_; }
  HttpServer& server() { return *srv_; }
  httplib::Client client() const;

 private:
  std::unique_ptr<HttpServer> srv_;
  int port_ = 0;
};

struct Reply {
  int status = 0;  // -1: no response
  std::string body;
  httplib::Headers headers;
  json j;          // parsed body (null when not JSON)
  std::string header(const std::string& k) const;
};

Reply get(int port, const std::string& path, const httplib::Headers& h = {});
Reply post(int port, const std::string& path, const std::string& body, const httplib::Headers& h = {});
Reply post(int port, const std::string& path, const json& body, const httplib::Headers& h = {});

// A streamed response: the "data:" payloads in order ("[DONE]" kept as text), comments dropped.
struct Stream {
  int status = 0;
  std::vector<std::string> data;
  std::string raw;
  std::vector<json> events() const;  // the JSON payloads (without [DONE])
  bool done() const { return !data.empty() && data.back() == "[DONE]"; }
};
Stream post_stream(int port, const std::string& path, const json& body, const httplib::Headers& h = {});
// Splits an SSE byte stream into its data payloads.
std::vector<std::string> sse_payloads(const std::string& raw);

// Prometheus text: the value of a sample, e.g. metric("edgeinfer:kv_blocks_used"), or with
// a label fragment: metric(text, "edgeinfer:request_success_total", "finished_reason=\"cancelled\"").
double metric(const std::string& text, const std::string& name, const std::string& label = {});

// A plain TCP connection to 127.0.0.1:port.
class RawSocket {
 public:
  explicit RawSocket(int port);
  ~RawSocket();
  bool ok() const { return fd_ >= 0; }
  bool send_all(const std::string& bytes);
  // Receives what arrives within `timeout` (at least one read); "" on timeout or close.
  std::string recv_some(std::chrono::milliseconds timeout);
  // Reads until `needle` appears in what was received so far, or the timeout; returns all.
  std::string recv_until(const std::string& needle, std::chrono::milliseconds timeout);
  // Waits for the peer to close (recv returns 0 or an error).
  bool wait_closed(std::chrono::milliseconds timeout);
  void close();
  const std::string& received() const { return got_; }

 private:
  int fd_ = -1;
  std::string got_;
};

// "POST path HTTP/1.1" with a JSON body and Content-Length.
std::string http_post_text(const std::string& path, const std::string& body, const std::string& extra_headers = {});

// A fresh folder under /tmp (throws when none can be made), removed with its contents when the
// object goes: the tests leave nothing behind.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// `edgeinfer serve ARGS...` as a child process; stdout/stderr go to files in a temp folder.
class ServeProcess {
 public:
  explicit ServeProcess(const std::vector<std::string>& args);
  ~ServeProcess();  // SIGKILL if still running
  // Waits for the "listening on http://host:PORT" line and then for /health to answer 200.
  int wait_ready(std::chrono::milliseconds timeout);
  int pid() const { return pid_; }
  int port() const { return port_; }
  void signal(int sig);
  // Exit status (WEXITSTATUS, or 128 + signal); -1 when still running at the timeout.
  int wait_exit(std::chrono::milliseconds timeout);
  std::string stdout_text() const;
  std::string stderr_text() const;
  // Resident set size in KiB from /proc (0 when gone).
  long rss_kib() const;

 private:
  int pid_ = -1;
  int port_ = 0;
  int status_ = -1;
  TempDir dir_;
};

const char* cli_path();  // the edgeinfer binary built with this test

// A copy of stories260K whose vocabulary declares fill-in-the-middle tokens (byte tokens
// <0x01> <0x02> <0x03> as prefix / suffix / middle), written under `dir`; returns its path.
std::string write_fim_model(const std::string& dir);

}  // namespace edgeinfer::server::test
