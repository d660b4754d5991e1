#pragma once
// `edgeinfer bench-serve`: replays a serving workload in-process against the Engine and reports
// what clients would see, plus the serving targets of issue 5 measured in the same run.
//
// Prompts are synthetic: tokens drawn (seeded, deterministic) from the model's ordinary
// vocabulary entries (no control, byte or end-of-generation tokens), so any model works and no
// data files are needed. Every request is greedy.
//
// Workloads:
//   agent       n_clients closed-loop clients share one system prompt of system_tokens; each
//               round a client sends its own turn of turn_tokens and gets answer_tokens back; its
//               next round's prompt is the whole conversation so far plus a new turn. Round 1
//               starts together, with the system prompt not yet cached.
//   completion  one source file of file_tokens; the cursor starts 3/4 of the way in; n_completions
//               requests of completion_tokens each, one after another, with a small edit near the
//               cursor before each (1-4 tokens typed, sometimes a token just before the cursor
//               replaced). With FIM tokens in the vocabulary the prompt is
//               [SUF] suffix [PRE] prefix [MID] (suffix first: it does not change as the user
//               types, so it stays cached); otherwise the prefix alone.
//   edit        a file of edit_file_tokens inside an instruction to rewrite it. A random-weight
//               model does not copy its input, so the roles are set up from its own output: the
//               rewrite (edit_file_tokens + 16 tokens, greedy, no speculation) is generated once;
//               the "original file" the client sends as its predicted output is that rewrite with
//               edit_changes small changes undone (1-2 tokens replaced, 1-3 inserted or 1-2
//               removed, at spread-out places), which is what a real model's rewrite of a file with
//               a few small changes looks like to the drafting. The rewrite is then generated again
//               with speculation (prompt lookup and the predicted file); the output must be
//               identical. Two more runs are reported: the predicted file unrelated to the output
//               (every draft wrong: what speculation costs when it fails) and the output itself as
//               the prediction (every draft right: the ceiling).
//
// Figures (the workload proper; target checks run their own requests):
//   TTFT      submission -> first token, per request, as the client sees it.
//   TPOT      per generated token: the gap since the previous token (an event carrying k tokens
//             after a gap g counts k tokens of g/k).
//   tokens/s  generated tokens / wall time of the workload.
//   hit rate  prefix cache: blocks found / blocks looked up; and cached / prompt tokens.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace edgeinfer {

struct ServeBenchOptions {
  std::string workload = "agent";  // agent | completion | edit
  EngineOptions engine;            // cache_dir empty: a temporary folder for the restart check
  uint64_t seed = 1;
  bool targets = true;             // also measure the target ratios

  // agent
  int32_t n_clients = 8;
  int32_t system_tokens = 1000;
  int32_t turn_tokens = 50;
  int32_t answer_tokens = 64;
  int32_t rounds = 3;
  // completion
  int32_t file_tokens = 2000;
  int32_t n_completions = 20;
  int32_t completion_tokens = 16;
  // edit
  int32_t edit_file_tokens = 500;
  int32_t edit_changes = 5;

  // Progress lines (phase names, request counts); may be empty.
  std::function<void(const std::string&)> log;
};

struct LatencySummary {
  int64_t n = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;  // milliseconds
};
LatencySummary summarize(std::vector<double> ms);

// One of the targets, measured.
struct TargetCheck {
  std::string name;    // e.g. "agent: mean TTFT, 8 clients / 1 alone"
  double value = 0;
  double limit = 0;
  bool at_least = false;  // true: value >= limit passes; false: value <= limit passes
  bool met = false;
  std::string detail;  // the figures the ratio comes from
};

// One request of the edit workload: the same rewrite with one kind of predicted output.
struct EditRun {
  std::string name;
  double decode_tps = 0;
  int32_t n_drafted = 0, n_accepted = 0;  // draft tokens verified / accepted
  bool identical = false;                 // output equal to the run without speculation
};

struct ServeBenchReport {
  std::string workload;
  std::string model_desc;  // arch, weight type, parameters
  int32_t n_threads = 0;
  std::string kv_desc;     // type, blocks x block size
  std::string notes;       // e.g. "FIM: no (plain prefix completion)"
  double load_before = -1, load_after = -1;  // 1-minute load average (-1: unknown)

  int64_t n_requests = 0;
  int64_t n_prompt_tokens = 0;
  int64_t n_cached_tokens = 0;
  int64_t n_generated = 0;
  double wall_s = 0;
  LatencySummary ttft, tpot;
  double gen_tokens_per_s = 0;
  double prompt_tokens_per_s = 0;  // prompt tokens computed (not cached) / wall time
  double block_hit_rate = 0;       // prefix cache blocks found / looked up
  double token_hit_rate = 0;       // cached / prompt tokens
  uint64_t n_drafted = 0, n_accepted = 0, n_preemptions = 0;

  std::vector<EditRun> edit_runs;  // edit workload only, in the order they ran
  std::vector<TargetCheck> targets;
  std::vector<std::string> lines;  // extra per-workload figures, printed as they are
};

ServeBenchReport run_serve_bench(const Model& model, const Tokenizer& tok, const ServeBenchOptions& opt);

// The same as text (what `edgeinfer bench-serve` prints).
std::string format_serve_bench(const ServeBenchReport& r);

}  // namespace edgeinfer
