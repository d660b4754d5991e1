#include "server_test_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "util/data_path.h"

extern char** environ;

namespace edgeinfer::server::test {

namespace {

using Clock = std::chrono::steady_clock;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Reply to_reply(const httplib::Result& r) {
  Reply out;
  if (!r) {
    out.status = -1;
    return out;
  }
  out.status = r->status;
  out.body = r->body;
  out.headers = r->headers;
  out.j = json::parse(out.body, nullptr, /*allow_exceptions=*/false);
  if (out.j.is_discarded()) out.j = nullptr;
  return out;
}

}  // namespace

std::string model_path(const char* name) { return data_dir() + "/models/" + name; }

ServerOptions test_options(const char* model) {
  ServerOptions o;
  o.model_path = model_path(model);
  o.port = 0;
  o.engine.n_threads = 1;
  o.engine.max_running = 4;
  o.max_queue = 16;
  o.read_timeout_s = 5;
  o.write_timeout_s = 5;
  o.shutdown_grace_ms = 2000;
  return o;
}

TestServer::TestServer(ServerOptions o, bool load) : srv_(std::make_unique<HttpServer>(std::move(o))) {
  port_ = srv_->start();
  if (load) srv_->load_model();
}

TestServer::~TestServer() { srv_->shutdown(0); }

httplib::Client TestServer::client() const {
  httplib::Client c("127.0.0.1", port_);
  c.set_read_timeout(60, 0);
  c.set_write_timeout(10, 0);
  return c;
}

std::string Reply::header(const std::string& k) const {
  auto it = headers.find(k);
  return it == headers.end() ? "" : it->second;
}

Reply get(int port, const std::string& path, const httplib::Headers& h) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(60, 0);
  return to_reply(c.Get(path.c_str(), h));
}

Reply post(int port, const std::string& path, const std::string& body, const httplib::Headers& h) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(60, 0);
  return to_reply(c.Post(path.c_str(), h, body, "application/json"));
}

Reply post(int port, const std::string& path, const json& body, const httplib::Headers& h) {
  return post(port, path, body.dump(), h);
}

std::vector<std::string> sse_payloads(const std::string& raw) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < raw.size()) {
    size_t end = raw.find("\n\n", pos);
    if (end == std::string::npos) break;
    std::string ev = raw.substr(pos, end - pos);
    pos = end + 2;
    std::istringstream lines(ev);
    std::string line, data;
    bool has_data = false;
    while (std::getline(lines, line)) {
      if (line.rfind("data: ", 0) == 0) {
        if (has_data) data += "\n";
        data += line.substr(6);
        has_data = true;
      }
    }
    if (has_data) out.push_back(data);
  }
  return out;
}

std::vector<json> Stream::events() const {
  std::vector<json> out;
  for (const auto& d : data) {
    if (d != "[DONE]") out.push_back(json::parse(d));
  }
  return out;
}

Stream post_stream(int port, const std::string& path, const json& body, const httplib::Headers& h) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(60, 0);
  Stream s;
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.headers = h;
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  req.content_receiver = [&](const char* d, size_t n, uint64_t, uint64_t) {
    s.raw.append(d, n);
    return true;
  };
  auto res = c.send(req);
  s.status = res ? res->status : -1;
  if (res && !res->body.empty()) s.raw += res->body;  // error replies arrive as a body
  s.data = sse_payloads(s.raw);
  return s;
}

double metric(const std::string& text, const std::string& name, const std::string& label) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.compare(0, name.size(), name) != 0) continue;
    const char next = line.size() > name.size() ? line[name.size()] : ' ';
    if (next != '{' && next != ' ') continue;
    if (!label.empty() && line.find(label) == std::string::npos) continue;
    return std::stod(line.substr(line.rfind(' ') + 1));
  }
  return -1;
}

RawSocket::RawSocket(int port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

RawSocket::~RawSocket() { close(); }

bool RawSocket::send_all(const std::string& bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

std::string RawSocket::recv_some(std::chrono::milliseconds timeout) {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return {};
  char buf[16384];
  const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
  if (n <= 0) return {};
  got_.append(buf, static_cast<size_t>(n));
  return std::string(buf, static_cast<size_t>(n));
}

std::string RawSocket::recv_until(const std::string& needle, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (got_.find(needle) == std::string::npos && Clock::now() < deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::max<int64_t>(1, left.count()))) <= 0) continue;
    char buf[16384];
    const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) break;
    got_.append(buf, static_cast<size_t>(n));
  }
  return got_;
}

bool RawSocket::wait_closed(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) return true;
    got_.append(buf, static_cast<size_t>(n));
  }
  return false;
}

void RawSocket::close() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

std::string http_post_text(const std::string& path, const std::string& body, const std::string& extra_headers) {
  return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + extra_headers +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/edgeinfer-server-test-XXXXXX";
  const char* d = ::mkdtemp(tmpl);
  if (!d) throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
  path_ = d;
}

TempDir::~TempDir() {
  std::error_code ec;  // best effort: a failed removal must not end the test run
  std::filesystem::remove_all(path_, ec);
}

const char* cli_path() { return EDGEINFER_CLI_PATH; }

ServeProcess::ServeProcess(const std::vector<std::string>& args) {
  std::vector<std::string> argv_s = {cli_path(), "serve"};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, (dir_.path() + "/stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, (dir_.path() + "/stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) == 0) pid_ = pid;
  posix_spawn_file_actions_destroy(&fa);
}

ServeProcess::~ServeProcess() {
  if (pid_ > 0 && status_ < 0) {
    ::kill(pid_, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
  }
}

int ServeProcess::wait_ready(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  const std::regex re("listening on http://[^:]+:([0-9]+)");
  while (port_ == 0 && Clock::now() < deadline) {
    std::smatch m;
    const std::string out = stdout_text();
    if (std::regex_search(out, m, re)) {
      port_ = std::stoi(m[1]);
      break;
    }
    if (wait_exit(std::chrono::milliseconds(0)) >= 0) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  while (port_ != 0 && Clock::now() < deadline) {
    if (get(port_, "/health").status == 200) return port_;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return 0;
}

void ServeProcess::signal(int sig) {
  if (pid_ > 0 && status_ < 0) ::kill(pid_, sig);
}

int ServeProcess::wait_exit(std::chrono::milliseconds timeout) {
  if (status_ >= 0) return status_;
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    int st = 0;
    const pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      return status_;
    }
    if (Clock::now() >= deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string ServeProcess::stdout_text() const { return read_file(dir_.path() + "/stdout"); }
std::string ServeProcess::stderr_text() const { return read_file(dir_.path() + "/stderr"); }

long ServeProcess::rss_kib() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

std::string write_fim_model(const std::string& dir) {
  const std::string out = dir + "/stories260K-fim.gguf";
  GgufFile src = GgufFile::open(model_path("stories260K.gguf"));
  GgufWriter w;
  for (const auto& [k, v] : src.metadata()) w.add(k, v);
  w.set("tokenizer.ggml.fim_pre_token_id", GgufValue::from_uint(GgufValueType::UINT32, 4));
  w.set("tokenizer.ggml.fim_suf_token_id", GgufValue::from_uint(GgufValueType::UINT32, 5));
  w.set("tokenizer.ggml.fim_mid_token_id", GgufValue::from_uint(GgufValueType::UINT32, 6));
  for (const auto& t : src.tensors()) w.add_tensor(t.name, t.type, t.ne, t.data, t.n_bytes);
  w.write(out);
  return out;
}

}  // namespace edgeinfer::server::test
