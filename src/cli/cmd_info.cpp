// `edgeinfer info`: what a GGUF model is — architecture, hyperparameters, tensors.
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/common.h"
#include "gguf/gguf_describe.h"

namespace edgeinfer::cli {

namespace {

struct InfoOptions {
  std::string model;
  bool metadata = false;
};

int info(const InfoOptions& o) {
  auto model = load_model_checked(o.model);
  const ModelConfig& c = model->config();
  const GgufFile& f = model->gguf();
  std::printf("file:            %s (%zu bytes, GGUF v%u)\n", f.path().c_str(), f.file_size(), f.version());
  if (!c.name.empty()) std::printf("name:            %s\n", c.name.c_str());
  std::printf("architecture:    %s\n", c.arch.c_str());
  std::printf("vocabulary:      %lld tokens\n", static_cast<long long>(c.n_vocab));
  std::printf("embedding:       %lld\n", static_cast<long long>(c.n_embd));
  std::printf("layers:          %lld\n", static_cast<long long>(c.n_layer));
  std::printf("heads:           %lld (KV heads %lld, head dim %lld)\n", static_cast<long long>(c.n_head),
              static_cast<long long>(c.n_head_kv), static_cast<long long>(c.head_dim));
  std::printf("feed-forward:    %lld\n", static_cast<long long>(c.n_ff));
  std::printf("context (train): %lld\n", static_cast<long long>(c.n_ctx_train));
  std::printf("rope:            %s, base %g, scale %g, %lld dims%s\n",
              c.rope_style == RopeStyle::Neox ? "neox" : "norm", c.rope_freq_base, c.rope_freq_scale,
              static_cast<long long>(c.n_rot), model->weights().rope_freqs ? ", frequency factors" : "");
  std::printf("rms eps:         %g\n", c.rms_eps);
  std::printf("output:          %s\n", model->weights().output_tied ? "tied to token_embd" : "output.weight");

  std::map<std::string, std::pair<int, uint64_t>> by_type;
  for (const auto& t : f.tensors()) {
    auto& e = by_type[std::string(tensor_type_name(t.type))];
    e.first += 1;
    e.second += t.n_bytes;
  }
  std::printf("tensors:         %zu, %.2f MiB\n", f.tensors().size(), model->weight_bytes() / 1048576.0);
  for (const auto& [name, e] : by_type) {
    std::printf("  %-8s %4d tensors %10.2f MiB\n", name.c_str(), e.first, e.second / 1048576.0);
  }
  if (o.metadata) std::printf("\n%s", describe_gguf(f).c_str());
  return 0;
}

}  // namespace

void add_info_command(CLI::App& app, Registry& r) {
  auto o = std::make_shared<InfoOptions>();
  CLI::App* sub = app.add_subcommand("info", "Show a model's architecture, hyperparameters and tensors");
  sub->add_option("-m,--model", o->model, "GGUF model file")->required();
  sub->add_flag("--metadata", o->metadata, "Also list every metadata key and tensor");
  r.add(sub, [o] { return info(*o); });
}

}  // namespace edgeinfer::cli
