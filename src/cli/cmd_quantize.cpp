// `edgeinfer quantize IN.gguf OUT.gguf TYPE`: rewrite an F32/F16/BF16 model in another type or
// mix (Q4_K_M, ...), choosing per-tensor types as llama-quantize does (quant/quantize_model.h).
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/progress_bar.h"
#include "cli/tensor_summary.h"
#include "gguf/gguf_file.h"
#include "quant/quantize_model.h"
#include "util/thread_pool.h"

namespace edgeinfer::cli {

namespace {

struct QuantizeCliOptions {
  std::string in;
  std::string out;
  std::string type;
  int threads = 0;
  bool pure = false;
  bool dry_run = false;
  bool verbose = false;
};

int quantize(const QuantizeCliOptions& o) {
  const QuantTarget target = parse_quant_target(o.type);
  if (o.dry_run) {
    GgufFile f = GgufFile::open(o.in);
    const auto descs = tensor_descs(f);
    const auto plan = plan_tensor_types(descs, quant_model_info(f), target, o.pure);
    std::vector<QuantizedTensor> rows;
    for (size_t i : quantization_order(descs)) {
      const auto& d = descs[i];
      int64_t rows_n = 1;
      for (size_t k = 1; k < d.ne.size(); ++k) rows_n *= d.ne[k];
      const uint64_t bytes = tensor_row_bytes(plan[i].type, d.ne[0]).value_or(0) * static_cast<uint64_t>(rows_n);
      rows.push_back(QuantizedTensor{d.name, d.ne, d.type, plan[i].type, 0, bytes, plan[i].note});
      std::printf("%-32s %-6s -> %s\n", d.name.c_str(), std::string(tensor_type_name(d.type)).c_str(),
                  std::string(tensor_type_name(plan[i].type)).c_str());
    }
    print_tensor_summary(rows);
    return 0;
  }

  ThreadPool pool(o.threads > 0 ? o.threads : default_threads());
  ProgressBar bar("quantize " + std::string(target.name));
  const auto t0 = std::chrono::steady_clock::now();
  const QuantizeReport rep = quantize_model(o.in, o.out, target, pool, QuantizeOptions{o.pure},
                                            [&](const QuantizeProgress& p) {
                                              std::string what;
                                              if (!p.name.empty()) {
                                                what = "[" + std::to_string(p.tensor_index + 1) + "/" +
                                                       std::to_string(p.n_tensors) + "] " + std::string(p.name) +
                                                       " -> " + std::string(tensor_type_name(p.type));
                                              }
                                              bar.update(p.bytes_done, p.bytes_total, what);
                                            });
  bar.finish();
  const double secs = seconds_since(t0);
  if (o.verbose) {
    for (const QuantizedTensor& t : rep.tensors) {
      std::printf("%-32s %-6s -> %-6s %10.2f KiB -> %10.2f KiB\n", t.name.c_str(),
                  std::string(tensor_type_name(t.src_type)).c_str(), std::string(tensor_type_name(t.dst_type)).c_str(),
                  t.src_bytes / 1024.0, t.dst_bytes / 1024.0);
    }
  }
  std::printf("%s -> %s (%s): tensor data %.2f MiB -> %.2f MiB, file %.2f MiB, %.1f s, %d threads\n", o.in.c_str(),
              o.out.c_str(), std::string(target.name).c_str(), rep.in_bytes / 1048576.0, rep.out_bytes / 1048576.0,
              rep.out_file_bytes / 1048576.0, secs, pool.size());
  print_tensor_summary(rep.tensors);
  return 0;
}

}  // namespace

void add_quantize_command(CLI::App& app, Registry& r) {
  auto o = std::make_shared<QuantizeCliOptions>();
  CLI::App* sub = app.add_subcommand("quantize", "Convert an F32/F16/BF16 GGUF model to another type or mix");
  sub->add_option("input", o->in, "Input GGUF (F32, F16 or BF16 tensors)")->required();
  sub->add_option("output", o->out, "Output GGUF")->required();
  sub->add_option("type", o->type, "Target: " + quant_target_names())->required();
  sub->add_option("-t,--threads", o->threads, "Threads (0 = all hardware threads)")->capture_default_str()->check(non_negative());
  sub->add_flag("--pure", o->pure, "Every convertible tensor gets the base type (no mix rules, no Q6_K output)");
  sub->add_flag("--dry-run", o->dry_run, "Only print the type each tensor would get");
  sub->add_flag("-v,--verbose", o->verbose, "List every tensor written");
  r.add(sub, [o] { return quantize(*o); });
}

}  // namespace edgeinfer::cli
