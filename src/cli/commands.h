#pragma once
// Subcommands of the `edgeinfer` executable. Each add_*_command registers its options on a
// CLI11 subcommand and the action to run when that subcommand is chosen.
#include <CLI/CLI.hpp>
#include <functional>
#include <vector>

namespace edgeinfer::cli {

struct Registry {
  std::vector<std::pair<CLI::App*, std::function<int()>>> commands;
  void add(CLI::App* sub, std::function<int()> action) { commands.emplace_back(sub, std::move(action)); }
};

void add_run_command(CLI::App& app, Registry& r);
void add_info_command(CLI::App& app, Registry& r);
void add_logits_command(CLI::App& app, Registry& r);
void add_tokenize_command(CLI::App& app, Registry& r);
void add_quantize_command(CLI::App& app, Registry& r);
void add_synth_command(CLI::App& app, Registry& r);
void add_bench_command(CLI::App& app, Registry& r);
void add_perplexity_command(CLI::App& app, Registry& r);
void add_bench_serve_command(CLI::App& app, Registry& r);
#ifdef EDGEINFER_HAVE_SERVER
void add_serve_command(CLI::App& app, Registry& r);
#endif

}  // namespace edgeinfer::cli
