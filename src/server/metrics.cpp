#include "server/metrics.h"

#include <cstdio>

namespace edgeinfer::server {

namespace {

constexpr const char* kPrefix = "edgeinfer:";
constexpr FinishReason kReasons[] = {FinishReason::Stop, FinishReason::Length, FinishReason::Cancelled,
                                     FinishReason::Error};

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

// Label values are the model name and fixed words; escape what Prometheus requires.
std::string escape_label(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

class PromWriter {
 public:
  explicit PromWriter(const std::string& model) : model_label_("model_name=\"" + escape_label(model) + "\"") {}

  void header(const std::string& name, const char* type, const char* help) {
    out_ += "# HELP " + std::string(kPrefix) + name + " " + help + "\n";
    out_ += "# TYPE " + std::string(kPrefix) + name + " " + type + "\n";
  }
  void sample(const std::string& name, double v, const std::string& extra_labels = {}) {
    out_ += kPrefix + name + "{" + model_label_ + (extra_labels.empty() ? "" : "," + extra_labels) + "} " + num(v) + "\n";
  }
  void gauge(const std::string& name, const char* help, double v) {
    header(name, "gauge", help);
    sample(name, v);
  }
  void counter(const std::string& name, const char* help, double v) {
    header(name, "counter", help);
    sample(name, v);
  }
  void histogram(const std::string& name, const char* help, const Histogram& h) {
    header(name, "histogram", help);
    for (size_t i = 0; i < h.bounds().size(); ++i) {
      sample(name + "_bucket", static_cast<double>(h.cumulative(i)), "le=\"" + num(h.bounds()[i]) + "\"");
    }
    sample(name + "_bucket", static_cast<double>(h.count()), "le=\"+Inf\"");
    sample(name + "_sum", h.sum());
    sample(name + "_count", static_cast<double>(h.count()));
  }
  std::string take() { return std::move(out_); }

 private:
  std::string model_label_;
  std::string out_;
};

json percentiles_ms(const Histogram& h) {
  json j;
  j["count"] = h.count();
  j["mean"] = h.count() ? 1e3 * h.sum() / static_cast<double>(h.count()) : 0.0;
  j["p50"] = 1e3 * h.quantile(0.50);
  j["p90"] = 1e3 * h.quantile(0.90);
  j["p99"] = 1e3 * h.quantile(0.99);
  j["p999"] = 1e3 * h.quantile(0.999);
  j["max"] = 1e3 * h.max();
  return j;
}

json percentiles(const Histogram& h) {
  json j;
  j["count"] = h.count();
  j["mean"] = h.count() ? h.sum() / static_cast<double>(h.count()) : 0.0;
  j["p50"] = h.quantile(0.50);
  j["p90"] = h.quantile(0.90);
  j["p99"] = h.quantile(0.99);
  j["p999"] = h.quantile(0.999);
  j["max"] = h.max();
  return j;
}

}  // namespace

ServerMetrics::ServerMetrics()
    : t_start_(std::chrono::steady_clock::now()),
      ttft_(latency_buckets_s()),
      tpot_(token_latency_buckets_s()),
      e2e_(request_latency_buckets_s()),
      queue_(latency_buckets_s()),
      prefill_(latency_buckets_s()),
      decode_(request_latency_buckets_s()),
      prompt_tokens_(token_count_buckets()),
      gen_tokens_(token_count_buckets()) {}

void ServerMetrics::record_finished(const FinishedRequest& r) {
  const RequestTimings& t = r.timings;
  std::lock_guard<std::mutex> lk(mu_);
  ++finished_;
  e2e_.observe(r.e2e_s);
  queue_.observe(t.queue_ms / 1e3);
  prompt_tokens_.observe(t.n_prompt);
  gen_tokens_.observe(t.n_generated);
  if (t.n_generated > 0) {
    ttft_.observe(t.ttft_ms / 1e3);
    prefill_.observe(t.prefill_ms / 1e3);
    decode_.observe(t.decode_ms / 1e3);
  }
  if (t.n_generated > 1) tpot_.observe(t.decode_ms / 1e3 / (t.n_generated - 1));
}

void ServerMetrics::record_status(int status) {
  std::lock_guard<std::mutex> lk(mu_);
  status_[status]++;
}

void ServerMetrics::record_rejection(const std::string& reason) {
  std::lock_guard<std::mutex> lk(mu_);
  rejected_[reason]++;
}

void ServerMetrics::record_disconnect() {
  std::lock_guard<std::mutex> lk(mu_);
  ++disconnects_;
}

uint64_t ServerMetrics::status_count(int status) const {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = status_.find(status);
  return it == status_.end() ? 0 : it->second;
}

uint64_t ServerMetrics::n_disconnects() const {
  std::lock_guard<std::mutex> lk(mu_);
  return disconnects_;
}

std::string ServerMetrics::prometheus(const EngineStats& es, const ServerGauges& g, const std::string& model_name) const {
  PromWriter w(model_name);
  const double bs = es.kv_block_size;
  w.gauge("num_requests_running", "Requests whose sequences hold KV and are being computed.", es.n_running);
  w.gauge("num_requests_waiting", "Requests queued in the engine, not yet running.", es.n_waiting);
  w.gauge("requests_in_flight", "Generations admitted by the server and not finished (running + waiting).", g.in_flight);
  w.gauge("requests_in_flight_max", "Bound on admitted generations; more are refused with 503.", g.max_in_flight);
  w.gauge("kv_cache_usage_perc", "Fraction of KV cache blocks in use (0-1).",
          es.kv_blocks_total ? static_cast<double>(es.kv_blocks_used) / es.kv_blocks_total : 0.0);
  w.gauge("kv_blocks_used", "KV cache blocks referenced by requests.", es.kv_blocks_used);
  w.gauge("kv_blocks_total", "KV cache blocks in the pool.", es.kv_blocks_total);
  w.gauge("kv_block_size", "Tokens per KV cache block.", es.kv_block_size);
  w.counter("prompt_tokens_total", "Prompt tokens submitted.", static_cast<double>(es.n_prompt_tokens));
  w.counter("generation_tokens_total", "Tokens generated.", static_cast<double>(es.n_generated_tokens));
  w.counter("prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache (whole blocks).",
            static_cast<double>(es.prefix_queries) * bs);
  w.counter("prefix_cache_hits_total", "Prompt tokens found in the prefix cache (whole blocks).",
            static_cast<double>(es.prefix_hits) * bs);
  w.counter("prompt_tokens_cached_total", "Prompt tokens whose KV came from the prefix cache.",
            static_cast<double>(es.n_cached_tokens));
  w.counter("num_preemptions_total", "Times a running request was preempted to free KV blocks.",
            static_cast<double>(es.n_preemptions));
  w.counter("spec_decode_num_draft_tokens_total", "Speculative tokens proposed.", static_cast<double>(es.n_drafted));
  w.counter("spec_decode_num_accepted_tokens_total", "Speculative tokens accepted.",
            static_cast<double>(es.n_draft_accepted));
  w.header("request_success_total", "counter", "Finished requests by finish reason.");
  for (FinishReason r : kReasons) {
    w.sample("request_success_total", static_cast<double>(es.n_finished[static_cast<int>(r)]),
             std::string("finished_reason=\"") + finish_reason_name(r) + "\"");
  }
  std::lock_guard<std::mutex> lk(mu_);
  w.header("http_requests_total", "counter", "HTTP responses by status code.");
  for (const auto& [status, n] : status_) {
    w.sample("http_requests_total", static_cast<double>(n), "status=\"" + std::to_string(status) + "\"");
  }
  w.header("requests_rejected_total", "counter", "Requests refused before reaching the engine, by reason.");
  for (const char* reason : {"unauthorized", "rate_limited", "queue_full", "slo_shed", "shutting_down", "loading"}) {
    auto it = rejected_.find(reason);
    w.sample("requests_rejected_total", it == rejected_.end() ? 0.0 : static_cast<double>(it->second),
             std::string("reason=\"") + reason + "\"");
  }
  w.counter("client_disconnects_total", "Streams whose client went away before the end (request cancelled).",
            static_cast<double>(disconnects_));
  w.gauge("slo_ttft_p99_seconds", "P99 time to first token over the SLO window (0 when no samples).",
          g.p99_ttft_window_ms / 1e3);
  w.histogram("time_to_first_token_seconds", "Time from arrival to the first generated token.", ttft_);
  w.histogram("time_per_output_token_seconds", "Mean time per output token after the first, per request.", tpot_);
  w.histogram("e2e_request_latency_seconds", "Time from arrival at the server to the last token.", e2e_);
  w.histogram("request_queue_time_seconds", "Time from arrival to first being scheduled.", queue_);
  w.histogram("request_prefill_time_seconds", "Time from first being scheduled to the first token.", prefill_);
  w.histogram("request_decode_time_seconds", "Time from the first token to the last.", decode_);
  w.histogram("request_prompt_tokens", "Prompt tokens per request.", prompt_tokens_);
  w.histogram("request_generation_tokens", "Generated tokens per request.", gen_tokens_);
  return w.take();
}

json ServerMetrics::stats_json(const EngineStats& es, const ServerGauges& g, const std::string& model_name) const {
  json j;
  j["model"] = model_name;
  std::lock_guard<std::mutex> lk(mu_);
  j["uptime_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start_).count();
  json req;
  req["running"] = es.n_running;
  req["waiting"] = es.n_waiting;
  req["in_flight"] = g.in_flight;
  req["max_in_flight"] = g.max_in_flight;
  req["finished_observed"] = finished_;
  json fin;
  for (FinishReason r : kReasons) fin[finish_reason_name(r)] = es.n_finished[static_cast<int>(r)];
  req["finished"] = fin;
  json st = json::object();
  for (const auto& [status, n] : status_) st[std::to_string(status)] = n;
  req["http_status"] = st;
  json rej = json::object();
  for (const auto& [reason, n] : rejected_) rej[reason] = n;
  req["rejected"] = rej;
  req["client_disconnects"] = disconnects_;
  j["requests"] = req;
  json lat;
  lat["ttft"] = percentiles_ms(ttft_);
  lat["tpot"] = percentiles_ms(tpot_);
  lat["e2e"] = percentiles_ms(e2e_);
  lat["queue"] = percentiles_ms(queue_);
  lat["prefill"] = percentiles_ms(prefill_);
  lat["decode"] = percentiles_ms(decode_);
  j["latency_ms"] = lat;
  json tok;
  tok["prompt_total"] = es.n_prompt_tokens;
  tok["cached_total"] = es.n_cached_tokens;
  tok["generated_total"] = es.n_generated_tokens;
  tok["drafted_total"] = es.n_drafted;
  tok["draft_accepted_total"] = es.n_draft_accepted;
  tok["prompt_per_request"] = percentiles(prompt_tokens_);
  tok["generated_per_request"] = percentiles(gen_tokens_);
  j["tokens"] = tok;
  json kv;
  kv["blocks_used"] = es.kv_blocks_used;
  kv["blocks_total"] = es.kv_blocks_total;
  kv["block_size"] = es.kv_block_size;
  kv["prefix_queries_blocks"] = es.prefix_queries;
  kv["prefix_hits_blocks"] = es.prefix_hits;
  kv["preemptions"] = es.n_preemptions;
  j["kv_cache"] = kv;
  json slo;
  slo["ttft_ms"] = g.slo_ttft_ms;
  slo["p99_ttft_window_ms"] = g.p99_ttft_window_ms;
  slo["shed"] = g.n_shed;
  slo["queue_full"] = g.n_queue_full;
  j["admission"] = slo;
  return j;
}

}  // namespace edgeinfer::server
