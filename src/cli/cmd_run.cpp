// `edgeinfer run`: generate text from a prompt, streaming it to stdout.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/common.h"
#include "engine/sequence_runner.h"
#include "kernels/kernels.h"
#include "sampling/sampler.h"
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
};

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

  std::vector<int32_t> prompt = tok.encode(o.prompt, /*add_special=*/!o.no_bos);
  if (prompt.empty()) throw Error("the prompt is empty after tokenization (give -p TEXT)");
  if (static_cast<int64_t>(prompt.size()) >= runner.n_ctx()) {
    throw Error("prompt has " + std::to_string(prompt.size()) + " tokens, the context holds " +
                std::to_string(runner.n_ctx()) + " (raise -c)");
  }

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
  for (int32_t t : prompt) sampler.accept(t);

  if (o.echo) {
    std::fputs(o.prompt.c_str(), stdout);
    std::fflush(stdout);
  }

  const auto t_prompt = std::chrono::steady_clock::now();
  const float* logits = runner.eval(prompt);
  const double prompt_s = seconds_since(t_prompt);

  StreamDecoder out(tok);
  const auto t_gen = std::chrono::steady_clock::now();
  int n_gen = 0;
  std::string stop_reason = "length";
  for (;;) {
    if (n_gen >= o.n_predict) break;
    const int32_t id = sampler.sample(logits);
    sampler.accept(id);
    ++n_gen;
    if (!o.ignore_eos && tok.is_eog(id)) {
      stop_reason = "end of text";
      break;
    }
    std::string piece = out.push(id);
    if (!piece.empty()) {
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
    }
    if (n_gen >= o.n_predict) break;
    if (runner.n_past() + 1 > runner.n_ctx()) {
      stop_reason = "context full";
      break;
    }
    const int32_t one[1] = {id};
    logits = runner.eval(one);
  }
  std::string rest = out.flush();
  std::fwrite(rest.data(), 1, rest.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
  const double gen_s = seconds_since(t_gen);

  std::fprintf(stderr, "\n");
  std::fprintf(stderr, "load:       %8.1f ms (%s, %s kernels, %d threads)\n", load_s * 1e3,
               model->config().arch.c_str(), std::string(isa_name(kernels.isa)).c_str(), pool.size());
  std::fprintf(stderr, "prompt:     %8zu tokens %8.1f ms %10.2f tok/s\n", prompt.size(), prompt_s * 1e3,
               prompt.size() / std::max(prompt_s, 1e-9));
  std::fprintf(stderr, "generated:  %8d tokens %8.1f ms %10.2f tok/s (stopped: %s)\n", n_gen, gen_s * 1e3,
               n_gen / std::max(gen_s, 1e-9), stop_reason.c_str());
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, Registry& r) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand("run", "Generate text from a prompt, streamed to stdout");
  sub->add_option("-m,--model", o->model, "GGUF model file")->required();
  sub->add_option("-p,--prompt", o->prompt, "Prompt text")->required();
  sub->add_option("-n,--n-predict", o->n_predict, "Tokens to generate")->capture_default_str()->check(CLI::NonNegativeNumber);
  sub->add_option("--temp", o->temp, "Temperature; 0 = greedy (deterministic)")->capture_default_str()->check(CLI::NonNegativeNumber);
  sub->add_option("--top-k", o->top_k, "Keep the K most likely tokens (0 = off)")->capture_default_str();
  sub->add_option("--top-p", o->top_p, "Nucleus sampling threshold (1 = off)")->capture_default_str();
  sub->add_option("--min-p", o->min_p, "Drop tokens below min-p × the top probability (0 = off)")->capture_default_str();
  sub->add_option("--repeat-penalty", o->repeat_penalty, "Penalty for repeated tokens (1 = off)")->capture_default_str();
  sub->add_option("--presence-penalty", o->presence_penalty, "OpenAI presence penalty")->capture_default_str();
  sub->add_option("--frequency-penalty", o->frequency_penalty, "OpenAI frequency penalty")->capture_default_str();
  sub->add_option("--seed", o->seed, "Random seed (-1 = random)")->capture_default_str();
  sub->add_option("-t,--threads", o->threads, "Threads (0 = all hardware threads)")->capture_default_str()->check(CLI::NonNegativeNumber);
  sub->add_option("-c,--ctx-size", o->ctx, "Context size in tokens (0 = model's, at most 4096)")->capture_default_str()->check(CLI::NonNegativeNumber);
  sub->add_option("--kv-type", o->kv_type, "KV cache type: f16, f32, q8_0")->capture_default_str()->check(CLI::IsMember({"f16", "f32", "q8_0"}));
  sub->add_flag("--echo", o->echo, "Print the prompt before the generated text");
  sub->add_flag("--ignore-eos", o->ignore_eos, "Keep generating past end-of-text tokens");
  sub->add_flag("--no-bos", o->no_bos, "Do not add the BOS token");
  r.add(sub, [o] { return run(*o); });
}

}  // namespace edgeinfer::cli
