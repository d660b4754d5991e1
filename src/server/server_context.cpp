#include "server/server_context.h"

#include <cstdio>
#include <random>

namespace edgeinfer::server {

namespace {

AdmissionOptions admission_options(const ServerOptions& o) {
  AdmissionOptions a;
  a.max_in_flight = std::max(1, o.engine.max_running) + std::max(0, o.max_queue);
  a.slo_ttft_ms = o.slo_ttft_ms;
  a.slo_min_priority = o.slo_min_priority;
  a.slo_window_s = o.slo_window_s;
  return a;
}

}  // namespace

ServerContext::ServerContext(ServerOptions o)
    : opt(std::move(o)),
      auth(opt.api_keys),
      limiter(opt.rate_limit, opt.rate_window_s),
      admission(admission_options(opt)),
      created_unix(std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count()) {
  std::random_device rd;
  id_tag_ = rd();
}

std::string ServerContext::new_id(const char* prefix) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%s-%08x%08llx", prefix, id_tag_,
                static_cast<unsigned long long>(next_id_.fetch_add(1, std::memory_order_relaxed)));
  return buf;
}

ServerGauges ServerContext::gauges() {
  ServerGauges g;
  g.in_flight = admission.in_flight();
  g.max_in_flight = admission.options().max_in_flight;
  g.slo_ttft_ms = admission.options().slo_ttft_ms;
  g.p99_ttft_window_ms = admission.p99_ttft_ms();
  g.n_shed = admission.n_shed();
  g.n_queue_full = admission.n_queue_full();
  return g;
}

bool ServerContext::model_matches(const std::string& name) const {
  if (name.empty() || name == model_id || name == opt.model_path) return true;
  const std::string& p = opt.model_path;
  const size_t slash = p.find_last_of('/');
  const std::string file = slash == std::string::npos ? p : p.substr(slash + 1);
  return name == file;
}

}  // namespace edgeinfer::server
