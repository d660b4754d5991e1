// `edgeinfer run`: generate text from a prompt (or chat with --chat), streaming it to stdout.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/commands.h"
#include "cli/common.h"
#include "engine/sequence_runner.h"
#include "kernels/kernels.h"
#include "sampling/sampler.h"
#include "tokenizer/chat_defaults.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"
#include "util/thread_pool.h"

namespace edgeinfer::cli {

namespace {

struct RunOptions {
  std::string model;
  std::string prompt;
  int n_predict = 128;
  float temp = 0.0f;
  int top_k = 40;
  float top_p = 0.95f;
  float min_p = 0.05f;
  float repeat_penalty = 1.0f;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  int64_t seed = -1;
  int threads = 0;
  int64_t ctx = 0;
  std::string kv_type = "f16";
  bool echo = false;
  bool ignore_eos = false;
  bool no_bos = false;
  bool chat = false;
  std::string system;
};

struct GenStats {
  size_t n_prompt = 0;
  double prompt_s = 0;
  int n_gen = 0;
  double gen_s = 0;
  std::string stop_reason;
};

// Feeds `tokens` after what the runner already holds in common with them, then samples up to
// n_predict tokens, streaming text to stdout. Returns the generated text.
std::string generate(SequenceRunner& runner, std::vector<int32_t>& held, const std::vector<int32_t>& tokens,
                     Sampler& sampler, const Tokenizer& tok, const RunOptions& o, GenStats& st) {
  size_t common = 0;
  while (common < held.size() && common < tokens.size() && held[common] == tokens[common]) ++common;
  if (common == tokens.size()) --common;  // the last token must run again for fresh logits
  runner.rewind(static_cast<int64_t>(common));
  held.assign(tokens.begin(), tokens.end());
  const std::vector<int32_t> fresh(tokens.begin() + common, tokens.end());
  if (static_cast<int64_t>(tokens.size()) >= runner.n_ctx()) {
    throw Error("prompt has " + std::to_string(tokens.size()) + " tokens, the context holds " +
                std::to_string(runner.n_ctx()) + " (raise -c)");
  }
  const auto t_prompt = std::chrono::steady_clock::now();
  const float* logits = runner.eval(fresh);
  st.prompt_s = seconds_since(t_prompt);
  st.n_prompt = fresh.size();

  StreamDecoder out(tok);
  std::string text;
  const auto t_gen = std::chrono::steady_clock::now();
  st.n_gen = 0;
  st.stop_reason = "length";
  while (st.n_gen < o.n_predict) {
    const int32_t id = sampler.sample(logits);
    sampler.accept(id);
    ++st.n_gen;
    if (!o.ignore_eos && tok.is_eog(id)) {
      held.push_back(id);
      st.stop_reason = "end of text";
      break;
    }
    std::string piece = out.push(id);
    if (!piece.empty()) {
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
      text += piece;
    }
    if (st.n_gen >= o.n_predict) break;
    if (runner.n_past() + 1 > runner.n_ctx()) {
      st.stop_reason = "context full";
      break;
    }
    held.push_back(id);
    logits = runner.eval(std::span<const int32_t>(&id, 1));
  }
  // The last sampled token has no KV yet; `held` lists only tokens that the runner holds.
  held.resize(std::min<size_t>(held.size(), static_cast<size_t>(runner.n_past())));
  std::string rest = out.flush();
  std::fwrite(rest.data(), 1, rest.size(), stdout);
  text += rest;
  std::fputc('\n', stdout);
  std::fflush(stdout);
  st.gen_s = seconds_since(t_gen);
  return text;
}

void print_stats(const GenStats& st) {
  std::fprintf(stderr, "prompt:     %8zu tokens %8.1f ms %10.2f tok/s\n", st.n_prompt, st.prompt_s * 1e3,
               st.n_prompt / std::max(st.prompt_s, 1e-9));
  std::fprintf(stderr, "generated:  %8d tokens %8.1f ms %10.2f tok/s (stopped: %s)\n", st.n_gen, st.gen_s * 1e3,
               st.n_gen / std::max(st.gen_s, 1e-9), st.stop_reason.c_str());
}

int run(const RunOptions& o) {
  const auto t_load = std::chrono::steady_clock::now();
  auto model = load_model_checked(o.model);
  Tokenizer tok = Tokenizer::from_gguf(model->gguf());
  const double load_s = seconds_since(t_load);

  ThreadPool pool(o.threads > 0 ? o.threads : default_threads());
  const Kernels& kernels = kernels_for(select_isa());
  RunnerOptions ro;
  ro.n_ctx = o.ctx;
  ro.kv_type = parse_kv_type(o.kv_type);
  SequenceRunner runner(*model, kernels, pool, ro);

  SamplingParams sp;
  sp.temperature = o.temp;
  sp.top_k = o.top_k;
  sp.top_p = o.top_p;
  sp.min_p = o.min_p;
  sp.repeat_penalty = o.repeat_penalty;
  sp.presence_penalty = o.presence_penalty;
  sp.frequency_penalty = o.frequency_penalty;
  if (o.seed >= 0) sp.seed = static_cast<uint64_t>(o.seed);
  sp.validate();
  Sampler sampler(sp, static_cast<int32_t>(runner.n_vocab()));
  std::fprintf(stderr, "load:       %8.1f ms (%s, %s kernels, %d threads, context %lld)\n", load_s * 1e3,
               model->config().arch.c_str(), std::string(isa_name(kernels.isa)).c_str(), pool.size(),
               static_cast<long long>(runner.n_ctx()));

  std::vector<int32_t> held;
  GenStats st;
  if (!o.chat) {
    if (o.prompt.empty()) throw Error("give a prompt with -p TEXT (or use --chat)");
    std::vector<int32_t> prompt = tok.encode(o.prompt, /*add_special=*/!o.no_bos);
    if (prompt.empty()) throw Error("the prompt is empty after tokenization");
    for (int32_t t : prompt) sampler.accept(t);
    if (o.echo) {
      std::fputs(o.prompt.c_str(), stdout);
      std::fflush(stdout);
    }
    generate(runner, held, prompt, sampler, tok, o, st);
    std::fprintf(stderr, "\n");
    print_stats(st);
    return 0;
  }

  // Chat: the model's template (or a ChatML fallback for models without one).
  ModelChatTemplate ct = load_chat_template(model->gguf(), tok);
  if (ct.is_fallback) std::fprintf(stderr, "note: the model has no chat template; using a ChatML-style fallback\n");
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  if (!o.system.empty()) messages.push_back({{"role", "system"}, {"content", o.system}});
  auto turn = [&](const std::string& user) {
    messages.push_back({{"role", "user"}, {"content", user}});
    const std::string rendered = ct.tmpl->apply(messages, nullptr, /*add_generation_prompt=*/true);
    const std::vector<int32_t> tokens = tokenize_chat_prompt(tok, rendered);
    sampler.reset();
    for (int32_t t : tokens) sampler.accept(t);
    const std::string reply = generate(runner, held, tokens, sampler, tok, o, st);
    messages.push_back({{"role", "assistant"}, {"content", reply}});
  };
  const bool interactive = o.prompt.empty() && isatty(STDIN_FILENO);
  if (!interactive) {
    std::string user = o.prompt;
    if (user.empty()) {
      std::ostringstream ss;
      ss << std::cin.rdbuf();
      user = ss.str();
    }
    if (user.empty()) throw Error("no message: give -p TEXT or text on standard input");
    turn(user);
    std::fprintf(stderr, "\n");
    print_stats(st);
    return 0;
  }
  std::fprintf(stderr, "chat with %s — type a message, empty line or Ctrl-D to quit\n", o.model.c_str());
  std::string line;
  for (;;) {
    std::fprintf(stderr, "\n> ");
    if (!std::getline(std::cin, line) || line.empty()) break;
    turn(line);
  }
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, Registry& r) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand("run", "Generate text from a prompt (or chat), streamed to stdout");
  sub->add_option("-m,--model", o->model, "GGUF model file")->required();
  sub->add_option("-p,--prompt", o->prompt, "Prompt text (with --chat: the user message)");
  sub->add_option("-n,--n-predict", o->n_predict, "Tokens to generate")->capture_default_str()->check(non_negative());
  sub->add_option("--temp", o->temp, "Temperature; 0 = greedy (deterministic)")->capture_default_str()->check(non_negative());
  sub->add_option("--top-k", o->top_k, "Keep the K most likely tokens (0 = off)")->capture_default_str();
  sub->add_option("--top-p", o->top_p, "Nucleus sampling threshold (1 = off)")->capture_default_str();
  sub->add_option("--min-p", o->min_p, "Drop tokens below min-p × the top probability (0 = off)")->capture_default_str();
  sub->add_option("--repeat-penalty", o->repeat_penalty, "Penalty for repeated tokens (1 = off)")->capture_default_str();
  sub->add_option("--presence-penalty", o->presence_penalty, "OpenAI presence penalty")->capture_default_str();
  sub->add_option("--frequency-penalty", o->frequency_penalty, "OpenAI frequency penalty")->capture_default_str();
  sub->add_option("--seed", o->seed, "Random seed (-1 = random)")->capture_default_str();
  sub->add_option("-t,--threads", o->threads, "Threads (0 = all hardware threads)")->capture_default_str()->check(non_negative());
  sub->add_option("-c,--ctx-size", o->ctx, "Context size in tokens (0 = model's, at most 4096)")->capture_default_str()->check(non_negative());
  sub->add_option("--kv-type", o->kv_type, "KV cache type: f16, f32, q8_0")->capture_default_str()->check(CLI::IsMember({"f16", "f32", "q8_0"}));
  sub->add_flag("--echo", o->echo, "Print the prompt before the generated text");
  sub->add_flag("--ignore-eos", o->ignore_eos, "Keep generating past end-of-text tokens");
  sub->add_flag("--no-bos", o->no_bos, "Do not add the BOS token");
  sub->add_flag("--chat", o->chat, "Apply the model's chat template; interactive when stdin is a terminal and no -p is given");
  sub->add_option("--system", o->system, "System message for --chat");
  r.add(sub, [o] { return run(*o); });
}

}  // namespace edgeinfer::cli
