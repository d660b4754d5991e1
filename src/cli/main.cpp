// edgeinfer: command-line entry point. Every subcommand is a thin user of libedgeinfer.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "util/error.h"

int main(int argc, char** argv) {
  using namespace edgeinfer;
  CLI::App app{"edgeinfer — fast local LLM inference for edge CPUs"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  cli::Registry registry;
  cli::add_run_command(app, registry);
  cli::add_info_command(app, registry);
  cli::add_logits_command(app, registry);
  cli::add_tokenize_command(app, registry);
  cli::add_quantize_command(app, registry);
  cli::add_synth_command(app, registry);
  cli::add_bench_command(app, registry);
  cli::add_perplexity_command(app, registry);
  cli::add_bench_serve_command(app, registry);
#ifdef EDGEINFER_HAVE_SERVER
  cli::add_serve_command(app, registry);
#endif

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "error: %s\n\n", e.what());
    // Show the usage of the subcommand that failed to parse, if one was chosen.
    CLI::App* shown = &app;
    for (auto* sub : app.get_subcommands()) shown = sub;
    std::fputs(shown->help().c_str(), stderr);
    return 2;
  }

  try {
    for (auto& [sub, action] : registry.commands) {
      if (sub->parsed()) return action();
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 2;
}
