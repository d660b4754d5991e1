// `edgeinfer bench-serve -m MODEL --workload agent|completion|edit [-t N] [--kv-mem 512M] [--json]`:
// replays a serving workload in-process against the engine and prints TTFT/TPOT percentiles,
// tokens/s, the prefix hit rate and the serving targets measured in the same run
// (engine/serve_bench.h).
#include <nlohmann/json.hpp>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include "cli/commands.h"
#include "cli/common.h"
#include "engine/serve_bench.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace edgeinfer::cli {

namespace {

struct BenchServeCliOptions {
  std::string model;
  std::string workload = "agent";
  int threads = 0;
  std::string kv_type = "f16";
  std::string kv_mem;
  int kv_block = 16;
  int batch = 512;
  int prefill_cap = -1;
  double step_slack = 0.2;
  std::string cache_dir;
  std::string draft;
  std::string step_log;
  bool no_spec = false;
  bool no_targets = false;
  bool json = false;
  bool quiet = false;
  uint64_t seed = 1;
  ServeBenchOptions sizes;
};

nlohmann::json summary_json(const LatencySummary& s) {
  return {{"n", s.n}, {"mean", s.mean}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"max", s.max}};
}

int bench_serve(const BenchServeCliOptions& o) {
  auto model = load_model_checked(o.model);
  Tokenizer tok = Tokenizer::from_gguf(model->gguf());
  ServeBenchOptions so = o.sizes;
  so.workload = o.workload;
  so.seed = o.seed;
  so.targets = !o.no_targets;
  so.engine.n_threads = o.threads > 0 ? o.threads : default_threads();
  so.engine.kv_type = parse_kv_type(o.kv_type);
  so.engine.kv_block_size = o.kv_block;
  so.engine.max_batch_tokens = o.batch;
  so.engine.max_prefill_with_decode = o.prefill_cap;
  so.engine.step_slack = o.step_slack;
  so.engine.speculative = !o.no_spec;
  so.engine.cache_dir = o.cache_dir;
  if (!o.kv_mem.empty()) so.engine.kv_mem_bytes = static_cast<int64_t>(parse_byte_size(o.kv_mem, "--kv-mem"));
  std::unique_ptr<Model> draft;
  if (!o.draft.empty()) {
    draft = load_model_checked(o.draft);
    so.engine.draft_model = draft.get();
  }
  // --step-log: one CSV line per engine step, with the workload's phase lines as comments, on a
  // common clock (ms since the start).
  struct StepLog {
    std::FILE* f = nullptr;
    std::mutex mu;
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    double now_ms() const {
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    ~StepLog() {
      if (f) std::fclose(f);
    }
  };
  auto step_log = std::make_shared<StepLog>();
  if (!o.step_log.empty()) {
    step_log->f = std::fopen(o.step_log.c_str(), "w");
    if (!step_log->f) throw Error("cannot open --step-log file '" + o.step_log + "' for writing");
    std::fprintf(step_log->f,
                 "t_ms,step,seqs,decode,prefill_tokens,draft_tokens,accepted,prefill_cap,schedule_ms,forward_ms,total_ms,attention_ms\n");
    so.engine.on_step = [step_log](const StepInfo& si) {
      std::lock_guard<std::mutex> lk(step_log->mu);
      std::fprintf(step_log->f, "%.2f,%llu,%d,%d,%d,%d,%d,%d,%.3f,%.3f,%.3f,%.3f\n", step_log->now_ms(),
                   static_cast<unsigned long long>(si.step), si.n_seqs, si.n_decode, si.n_prefill_tokens,
                   si.n_draft_tokens, si.n_accepted, si.prefill_cap, si.schedule_ms, si.forward_ms, si.total_ms, si.attention_ms);
    };
  }
  const bool quiet = o.quiet;
  if (!quiet || step_log->f) {
    so.log = [quiet, step_log](const std::string& line) {
      if (step_log->f) {
        std::lock_guard<std::mutex> lk(step_log->mu);
        std::fprintf(step_log->f, "# %.2f %s\n", step_log->now_ms(), line.c_str());
      }
      if (!quiet) {
        std::fprintf(stderr, "bench-serve: %s\n", line.c_str());
        std::fflush(stderr);
      }
    };
  }
  const ServeBenchReport r = run_serve_bench(*model, tok, so);
  if (!o.json) {
    std::printf("model: %s\n%s", o.model.c_str(), format_serve_bench(r).c_str());
    return 0;
  }
  nlohmann::json j;
  j["model"] = o.model;
  j["workload"] = r.workload;
  j["model_desc"] = r.model_desc;
  j["threads"] = r.n_threads;
  j["kv"] = r.kv_desc;
  j["notes"] = r.notes;
  j["load_average"] = {{"before", r.load_before}, {"after", r.load_after}};
  j["requests"] = r.n_requests;
  j["prompt_tokens"] = r.n_prompt_tokens;
  j["cached_tokens"] = r.n_cached_tokens;
  j["generated_tokens"] = r.n_generated;
  j["wall_s"] = r.wall_s;
  j["ttft_ms"] = summary_json(r.ttft);
  j["tpot_ms"] = summary_json(r.tpot);
  j["tokens_per_s"] = {{"generated", r.gen_tokens_per_s}, {"prompt_computed", r.prompt_tokens_per_s}};
  j["prefix_hit_rate"] = {{"blocks", r.block_hit_rate}, {"tokens", r.token_hit_rate}};
  j["speculation"] = {{"drafted", r.n_drafted}, {"accepted", r.n_accepted}};
  j["preemptions"] = r.n_preemptions;
  j["lines"] = r.lines;
  j["targets"] = nlohmann::json::array();
  for (const TargetCheck& t : r.targets) {
    j["targets"].push_back({{"name", t.name},
                            {"value", t.value},
                            {"limit", t.limit},
                            {"at_least", t.at_least},
                            {"met", t.met},
                            {"detail", t.detail}});
  }
  std::printf("%s\n", j.dump(2).c_str());
  return 0;
}

}  // namespace

void add_bench_serve_command(CLI::App& app, Registry& r) {
  auto o = std::make_shared<BenchServeCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "bench-serve", "Replay a serving workload (agent, completion, edit) in-process: TTFT, TPOT, tokens/s, prefix hits, targets");
  sub->add_option("-m,--model", o->model, "GGUF model file")->required();
  sub->add_option("--workload", o->workload, "agent, completion or edit")
      ->capture_default_str()
      ->check(CLI::IsMember({"agent", "completion", "edit"}));
  sub->add_option("-t,--threads", o->threads, "Threads (0 = all hardware threads)")->capture_default_str();
  sub->add_option("--kv-type", o->kv_type, "KV cache type: f16, f32, q8_0")
      ->capture_default_str()
      ->check(CLI::IsMember({"f16", "f32", "q8_0"}));
  sub->add_option("--kv-mem", o->kv_mem, "KV cache budget, e.g. 512M (default: max(8192 tokens, context))");
  sub->add_option("--kv-block", o->kv_block, "Tokens per KV block")->capture_default_str()->check(CLI::Range(1, 1024));
  sub->add_option("--batch", o->batch, "Tokens per engine step")->capture_default_str()->check(CLI::Range(1, 1 << 16));
  sub->add_option("--prefill-cap", o->prefill_cap, "Prompt tokens per step while others decode (-1 adaptive, 0 none)")
      ->capture_default_str();
  sub->add_option("--step-slack", o->step_slack,
                  "How much slower than a plain decode step prompt tokens and drafts may make a step while others decode")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 10.0));
  sub->add_option("--draft", o->draft, "Draft model for speculative decoding (same vocabulary)");
  sub->add_option("--cache-dir", o->cache_dir, "Where the restart check persists its prefix cache (a fresh subfolder)");
  sub->add_option("--step-log", o->step_log, "Write one CSV line per engine step (sizes, cap, times) to this file");
  sub->add_flag("--no-spec", o->no_spec, "Disable speculative decoding (agent, completion)");
  sub->add_flag("--no-targets", o->no_targets, "Only the workload, no target measurements");
  sub->add_flag("--json", o->json, "Print the report as JSON");
  sub->add_flag("-q,--quiet", o->quiet, "No progress lines on stderr");
  sub->add_option("--seed", o->seed, "Seed of the synthetic prompts")->capture_default_str();
  ServeBenchOptions& z = o->sizes;
  sub->add_option("--clients", z.n_clients, "agent: concurrent clients")->capture_default_str()->check(positive());
  sub->add_option("--rounds", z.rounds, "agent: rounds per client")->capture_default_str()->check(positive());
  sub->add_option("--system-tokens", z.system_tokens, "agent: shared system prompt")->capture_default_str();
  sub->add_option("--turn-tokens", z.turn_tokens, "agent: tokens per user turn")->capture_default_str();
  sub->add_option("--answer-tokens", z.answer_tokens, "agent: tokens per answer")->capture_default_str();
  sub->add_option("--file-tokens", z.file_tokens, "completion: source file")->capture_default_str();
  sub->add_option("--completions", z.n_completions, "completion: requests")->capture_default_str();
  sub->add_option("--completion-tokens", z.completion_tokens, "completion: tokens per completion")->capture_default_str();
  sub->add_option("--edit-file-tokens", z.edit_file_tokens, "edit: file to rewrite")->capture_default_str();
  sub->add_option("--edit-changes", z.edit_changes, "edit: small changes between the file and its rewrite")
      ->capture_default_str()
      ->check(non_negative());
  r.add(sub, [o] { return bench_serve(*o); });
}

}  // namespace edgeinfer::cli
