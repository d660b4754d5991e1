// `edgeinfer bench -m MODEL [-p 512] [-n 128] [-t 1,2] [-d 0] [--parallel 1,8] [-r 5] [--json] [--profile]`:
// prompt-processing and generation speed (llama-bench's pp/tg), with the memory-bandwidth and
// compute probes of the same run and each figure's roofline ratio (engine/bench.h).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"
#include "engine/bench.h"
#include "kernels/kernels.h"
#include "quant/quantize_model.h"
#include "util/error.h"

namespace edgeinfer::cli {

namespace {

struct BenchCliOptions {
  std::string model;
  std::vector<int> n_prompt = {512};
  std::vector<int> n_gen = {128};
  std::vector<int> threads;
  std::vector<int> parallel = {1};
  int depth = 0;
  bool shared_depth = false;
  int reps = 5;
  std::string kv_type = "f16";
  bool json = false;
  bool profile = false;
  bool no_probes = false;
  size_t probe_mib = 512;
};

nlohmann::json profile_json(const BenchResult& r, const OpWorkTable& w) {
  const ForwardProfile& p = r.profile;
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < kFwdOpNames.size(); ++i) j[std::string(kFwdOpNames[i])] = p.seconds[i];
  j["forward_calls"] = p.forward_calls;
  const auto rates = profile_rates(r, w);
  nlohmann::json m = nlohmann::json::object();
  for (size_t i = 0; i < kFwdOpNames.size(); ++i) {
    if (rates[i] > 0) m[std::string(kFwdOpNames[i])] = rates[i];
  }
  j["matmul_rate"] = std::move(m);
  j["matmul_rate_unit"] = r.n_prompt > 0 ? "ops/s" : "bytes/s";
  return j;
}

// The ops' shares of the profiled time, then each matmul op's rate (weights streamed for tg,
// ops for pp) and, with probes, its share of the test's median peak.
void print_profile(const BenchResult& r, const OpWorkTable& w) {
  const ForwardProfile& p = r.profile;
  const double total = p.total();
  if (total <= 0) return;
  std::printf("    per-op time (%llu forward calls, %.3f s):", static_cast<unsigned long long>(p.forward_calls), total);
  for (size_t i = 0; i < kFwdOpNames.size(); ++i) {
    if (p.seconds[i] / total < 0.0005) continue;
    std::printf(" %s %.1f%%", std::string(kFwdOpNames[i]).c_str(), 100.0 * p.seconds[i] / total);
  }
  std::printf("\n");
  const auto rates = profile_rates(r, w);
  const bool pp = r.n_prompt > 0;
  std::printf("    matmul %s:", pp ? "G op/s" : "weights GB/s");
  for (size_t i = 0; i < kFwdOpNames.size(); ++i) {
    if (rates[i] <= 0) continue;
    std::printf(" %s %.1f", std::string(kFwdOpNames[i]).c_str(), rates[i] / 1e9);
    if (r.peak > 0) std::printf(" (%.0f%%)", 100.0 * rates[i] / r.peak);
  }
  std::printf("\n");
}

int bench(const BenchCliOptions& o) {
  auto model = load_model_checked(o.model);
  const Kernels& kernels = kernels_for(select_isa());
  BenchOptions bo;
  bo.n_prompt = o.n_prompt;
  bo.n_gen = o.n_gen;
  bo.threads = o.threads.empty() ? std::vector<int>{default_threads()} : o.threads;
  bo.parallel = o.parallel;
  bo.depth = o.depth;
  bo.shared_depth = o.shared_depth;
  bo.reps = o.reps;
  bo.kv_type = parse_kv_type(o.kv_type);
  bo.profile = o.profile;
  bo.probes = !o.no_probes;
  bo.probe_options.read_bytes = o.probe_mib << 20;

  const std::string size_str = [&] {
    char b[64];
    std::snprintf(b, sizeof b, "%.2f MiB", model->weight_bytes() / 1048576.0);
    return std::string(b);
  }();
  int64_t n_params = 0;
  for (const GgufTensorInfo& t : model->gguf().tensors()) n_params += t.n_elements();
  std::string ftype = "?";
  if (auto ft = model->gguf().get_int_opt("general.file_type")) {
    if (auto t = quant_target_for_file_type(static_cast<FileType>(*ft))) ftype = std::string(t->name);
  }
  if (!o.json) {
    std::printf("model: %s (%s, %s, %s, %.3f B params), %s kernels (%s CPU), KV %s\n", o.model.c_str(),
                model->config().arch.c_str(), ftype.c_str(), size_str.c_str(), n_params / 1e9,
                std::string(isa_name(kernels.isa)).c_str(), std::string(cpu_vendor_name(cpu_vendor())).c_str(),
                o.kv_type.c_str());
    if (model->repacked_matrices() > 0) {
      std::printf("repacked at load: %d matrices into the x16 layout, %.2f MiB held beside the mapping "
                  "(their file pages released; EDGEINFER_REPACK=0 turns this off)\n",
                  model->repacked_matrices(), model->repacked_bytes() / 1048576.0);
    }
  }
  // The profile's per-op rates, printed as each result arrives (before run_bench returns its
  // report) and in the JSON.
  const OpWorkTable op_work = matmul_work_by_op(*model);
  bool header = false;
  auto on_result = [&](const BenchResult& r) {
    if (o.json) return;
    if (!header) {
      // Wide enough for "tg128@d1024 x8 shared".
      std::printf("| %-22s | %7s | %-8s | %20s | %-38s |\n", "test", "threads", "type", "t/s (median ± sd)",
                  "roofline");
      std::printf("|------------------------|---------|----------|----------------------|----------------------------------------|\n");
      header = true;
    }
    char roof[128] = "-";
    if (r.peak > 0) {
      // The median peak beside the repetitions, and their range.
      char range[48] = "";
      if (!r.rep_peak.empty()) {
        const auto [lo, hi] = std::minmax_element(r.rep_peak.begin(), r.rep_peak.end());
        std::snprintf(range, sizeof range, " (%.0f-%.0f)", *lo / 1e9, *hi / 1e9);
      }
      if (r.basis == "read bandwidth") {
        std::snprintf(roof, sizeof roof, "%5.1f%% of %.1f GB/s read%s", 100 * r.roofline, r.peak / 1e9, range);
      } else {
        std::snprintf(roof, sizeof roof, "%5.1f%% of %.0f G %s%s", 100 * r.roofline, r.peak / 1e9,
                      r.basis == "int8 peak" ? "int8 op/s" : "fp32 flop/s", range);
      }
    }
    char ts[64];
    std::snprintf(ts, sizeof ts, "%.2f ± %.2f", r.median, r.stddev);
    std::printf("| %-22s | %7d | %-8s | %20s | %-38s |\n", r.test.c_str(), r.threads, ftype.c_str(), ts, roof);
    if (o.profile) print_profile(r, op_work);
    std::fflush(stdout);
  };
  const BenchReport rep = run_bench(*model, o.model, kernels, bo, on_result);

  if (o.json) {
    nlohmann::json j;
    j["model"] = rep.model_path;
    j["type"] = rep.model_type;
    j["model_bytes"] = rep.model_bytes;
    j["n_params"] = rep.n_params;
    j["isa"] = rep.isa;
    j["repacked_matrices"] = model->repacked_matrices();
    j["repacked_bytes"] = model->repacked_bytes();
    j["kv_type"] = o.kv_type;
    j["stream_bytes_per_token"] = rep.stream_bytes_per_token;
    j["matmul_ops_per_token"] = rep.matmul_ops_per_token;
    j["probes"] = nlohmann::json::array();
    for (const ProbeResult& p : rep.probes) {
      j["probes"].push_back({{"threads", p.threads},
                             {"isa", p.isa},
                             {"read_bytes_per_s", p.read_bytes_per_s},
                             {"int8_ops_per_s", p.int8_ops_per_s},
                             {"fp32_fma_flops", p.fma_flops}});
    }
    j["results"] = nlohmann::json::array();
    for (const BenchResult& r : rep.results) {
      nlohmann::json x = {{"test", r.test},         {"n_prompt", r.n_prompt}, {"n_gen", r.n_gen},
                          {"parallel", r.parallel}, {"depth", r.depth},       {"threads", r.threads},
                          {"tok_s", r.tok_s},       {"median", r.median},     {"mean", r.mean},
                          {"stddev", r.stddev}};
      if (r.peak > 0) {
        x["roofline"] = {{"achieved", r.achieved}, {"peak", r.peak}, {"ratio", r.roofline}, {"basis", r.basis}};
        if (!r.rep_peak.empty()) x["roofline"]["peak_per_repetition"] = r.rep_peak;
      }
      if (o.profile) x["profile"] = profile_json(r, op_work);
      j["results"].push_back(std::move(x));
    }
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    for (const ProbeResult& p : rep.probes) {
      std::printf("probe %d thread%s (%s): read %.1f GB/s, int8 %.0f Gop/s, fp32 fma %.0f GFLOP/s\n", p.threads,
                  p.threads == 1 ? "" : "s", p.isa.c_str(), p.read_bytes_per_s / 1e9, p.int8_ops_per_s / 1e9,
                  p.fma_flops / 1e9);
    }
    std::printf("weights streamed per generated token: %.2f MiB; matmul ops per token: %.2f G\n",
                rep.stream_bytes_per_token / 1048576.0, rep.matmul_ops_per_token / 1e9);
    bool any_bracketed = false;
    for (const BenchResult& r : rep.results) any_bracketed = any_bracketed || !r.rep_peak.empty();
    if (any_bracketed) {
      std::printf("roofline: the median of each repetition's own ratio to the peak probed just before and after\n"
                  "it (the higher): bytes/s over read bandwidth for tg, ops/s over the int8 or fp32 fma peak for\n"
                  "pp; the peak shown is the median of those probes (their range in brackets)\n");
    }
  }
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app, Registry& r) {
  auto o = std::make_shared<BenchCliOptions>();
  CLI::App* sub = app.add_subcommand("bench", "Prompt-processing and generation speed with roofline probes");
  sub->add_option("-m,--model", o->model, "GGUF model file")->required();
  sub->add_option("-p,--n-prompt", o->n_prompt, "Prompt lengths, comma-separated (0 = skip)")
      ->delimiter(',')
      ->capture_default_str()
      ->check(non_negative());
  sub->add_option("-n,--n-gen", o->n_gen, "Generation lengths, comma-separated (0 = skip)")
      ->delimiter(',')
      ->capture_default_str()
      ->check(non_negative());
  sub->add_option("-t,--threads", o->threads, "Thread counts, comma-separated (default: all hardware threads)")
      ->delimiter(',')
      ->check(positive());
  sub->add_option("-d,--depth", o->depth,
                  "Prompt tokens cached in each sequence before the generation tests (tg at depth)")
      ->capture_default_str()
      ->check(non_negative());
  sub->add_flag("--shared-depth", o->shared_depth,
                "With --parallel: the sequences share the depth prompt's cache blocks (a common cached prefix)");
  sub->add_option("--parallel", o->parallel,
                  "Sequences decoding together in the generation tests, comma-separated (tok/s counts all)")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  sub->add_option("-r,--repetitions", o->reps, "Timed repetitions per test")->capture_default_str()->check(positive());
  sub->add_option("--kv-type", o->kv_type, "KV cache type: f16, f32, q8_0")->capture_default_str()->check(CLI::IsMember({"f16", "f32", "q8_0"}));
  sub->add_option("--probe-mib", o->probe_mib, "Buffer size of the bandwidth probe, MiB")->capture_default_str()->check(positive());
  sub->add_flag("--json", o->json, "Print the results as JSON");
  sub->add_flag("--profile", o->profile, "Per-op time breakdown of the timed runs");
  sub->add_flag("--no-probes", o->no_probes, "Skip the bandwidth/compute probes");
  r.add(sub, [o] { return bench(*o); });
}

}  // namespace edgeinfer::cli
