// `edgeinfer perplexity -m MODEL -f FILE [-c CTX]`: perplexity of a text with llama-perplexity's
// chunking (engine/perplexity.h), printed the way it prints it.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "cli/commands.h"
#include "cli/common.h"
#include "engine/perplexity.h"
#include "kernels/kernels.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"
#include "util/thread_pool.h"

namespace edgeinfer::cli {

namespace {

struct PplOptions {
  std::string model;
  std::string file;
  int64_t ctx = 512;
  int64_t batch = 0;
  int64_t chunks = -1;
  int threads = 0;
  std::string kv_type = "f16";
};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open text file '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int perplexity(const PplOptions& o) {
  auto model = load_model_checked(o.model);
  const Tokenizer tok = Tokenizer::from_gguf(model->gguf());
  const std::string text = read_text(o.file);
  const auto t_tok = std::chrono::steady_clock::now();
  const bool add_bos = tok.add_bos();
  const std::vector<int32_t> tokens = tok.encode(text, /*add_special=*/true);
  std::fprintf(stderr, "perplexity: tokenized %s: %zu tokens%s in %.1f ms\n", o.file.c_str(), tokens.size(),
               add_bos ? " (with BOS)" : "", seconds_since(t_tok) * 1e3);

  ThreadPool pool(o.threads > 0 ? o.threads : default_threads());
  const Kernels& kernels = kernels_for(select_isa());
  PerplexityOptions po;
  po.n_ctx = o.ctx;
  po.n_batch = o.batch;
  po.max_chunks = o.chunks;
  po.kv_type = parse_kv_type(o.kv_type);
  std::fprintf(stderr, "perplexity: %lld chunks of %lld tokens, %d threads, %s kernels\n",
               static_cast<long long>(o.chunks >= 0 ? std::min<int64_t>(o.chunks, tokens.size() / o.ctx)
                                                    : static_cast<int64_t>(tokens.size()) / o.ctx),
               static_cast<long long>(o.ctx), pool.size(), std::string(isa_name(kernels.isa)).c_str());
  const PerplexityResult r = compute_perplexity(*model, kernels, pool, tokens, add_bos ? tok.bos() : -1, po,
                                                [](const PerplexityChunk& c) {
                                                  std::printf("[%lld]%.4f,", static_cast<long long>(c.index + 1),
                                                              c.running_ppl);
                                                  std::fflush(stdout);
                                                });
  std::printf("\nFinal estimate: PPL = %.4f +/- %.5f\n", r.ppl, r.ppl_err);
  std::fprintf(stderr, "perplexity: %lld chunks, %lld predictions scored, %.2f s forward (%.1f tok/s)\n",
               static_cast<long long>(r.n_chunks), static_cast<long long>(r.n_scored), r.seconds,
               r.n_chunks * o.ctx / std::max(r.seconds, 1e-9));
  return 0;
}

}  // namespace

void add_perplexity_command(CLI::App& app, Registry& r) {
  auto o = std::make_shared<PplOptions>();
  CLI::App* sub = app.add_subcommand("perplexity", "Perplexity of a text file (llama-perplexity's method)");
  sub->add_option("-m,--model", o->model, "GGUF model file")->required();
  sub->add_option("-f,--file", o->file, "Text file")->required();
  sub->add_option("-c,--ctx-size", o->ctx, "Tokens per chunk")->capture_default_str()->check(CLI::Range(int64_t{4}, int64_t{1} << 20));
  sub->add_option("-b,--batch-size", o->batch, "Tokens per forward call (0 = the chunk)")->capture_default_str()->check(non_negative());
  sub->add_option("--chunks", o->chunks, "Score at most this many chunks (-1 = all)")->capture_default_str();
  sub->add_option("-t,--threads", o->threads, "Threads (0 = all hardware threads)")->capture_default_str()->check(non_negative());
  sub->add_option("--kv-type", o->kv_type, "KV cache type: f16, f32, q8_0")->capture_default_str()->check(CLI::IsMember({"f16", "f32", "q8_0"}));
  r.add(sub, [o] { return perplexity(*o); });
}

}  // namespace edgeinfer::cli
