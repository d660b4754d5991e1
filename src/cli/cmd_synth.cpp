// `edgeinfer synth OUT.gguf --preset P --type T`: write a random-weight model with the shapes of
// a real one (model/synth_model.h), quantized while it is written.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/progress_bar.h"
#include "cli/tensor_summary.h"
#include "model/synth_model.h"
#include "util/error.h"
#include "util/thread_pool.h"

namespace edgeinfer::cli {

namespace {

struct SynthCliOptions {
  std::string out;
  SynthOptions synth;
  int threads = 0;
  bool list = false;
};

int synth(const SynthCliOptions& o) {
  if (o.list) {
    for (const SynthPreset& p : synth_presets()) {
      std::printf("%-13s %s: %s, %lld dim, %lld layers, %lld/%lld heads, %lld FFN, vocab %lld%s\n",
                  std::string(p.name).c_str(), std::string(p.description).c_str(), std::string(p.arch).c_str(),
                  static_cast<long long>(p.n_embd), static_cast<long long>(p.n_layer),
                  static_cast<long long>(p.n_head), static_cast<long long>(p.n_head_kv),
                  static_cast<long long>(p.n_ff), static_cast<long long>(p.n_vocab),
                  p.default_vocab.empty() ? " (byte-level stand-in vocabulary unless --vocab-from)" : "");
    }
    return 0;
  }
  if (o.out.empty()) throw Error("synth: give the output path (edgeinfer synth OUT.gguf --preset P --type T)");
  ThreadPool pool(o.threads > 0 ? o.threads : default_threads());
  ProgressBar bar("synth " + o.synth.preset + " " + o.synth.type);
  const auto t0 = std::chrono::steady_clock::now();
  const SynthReport rep = write_synth_model(o.out, o.synth, pool, [&](const QuantizeProgress& p) {
    std::string what;
    if (!p.name.empty()) {
      what = "[" + std::to_string(p.tensor_index + 1) + "/" + std::to_string(p.n_tensors) + "] " +
             std::string(p.name) + " -> " + std::string(tensor_type_name(p.type));
    }
    bar.update(p.bytes_done, p.bytes_total, what);
  });
  bar.finish();
  std::printf("%s: preset %s, type %s, seed %llu, %lld parameters, vocab %lld (%s), %.2f MiB, %.1f s\n", o.out.c_str(),
              o.synth.preset.c_str(), o.synth.type.c_str(), static_cast<unsigned long long>(o.synth.seed),
              static_cast<long long>(rep.n_params), static_cast<long long>(rep.n_vocab), rep.vocab_source.c_str(),
              rep.file_bytes / 1048576.0, seconds_since(t0));
  print_tensor_summary(rep.tensors);
  return 0;
}

}  // namespace

void add_synth_command(CLI::App& app, Registry& r) {
  auto o = std::make_shared<SynthCliOptions>();
  CLI::App* sub = app.add_subcommand("synth", "Write a random-weight model with the shapes of a real one");
  sub->add_option("output", o->out, "Output GGUF");
  sub->add_option("--preset", o->synth.preset, "Shapes: " + synth_preset_names())->capture_default_str();
  sub->add_option("--type", o->synth.type, "Weight type or mix: " + quant_target_names())->capture_default_str();
  sub->add_option("--vocab-from", o->synth.vocab_from, "GGUF whose tokenizer.* metadata to copy (default: the preset's)");
  sub->add_option("--seed", o->synth.seed, "Random seed")->capture_default_str();
  sub->add_option("-t,--threads", o->threads, "Threads (0 = all hardware threads)")->capture_default_str()->check(non_negative());
  sub->add_flag("--pure", o->synth.pure, "Every matrix gets the base type (no mix rules)");
  sub->add_flag("--list", o->list, "List the presets and exit");
  r.add(sub, [o] { return synth(*o); });
}

}  // namespace edgeinfer::cli
