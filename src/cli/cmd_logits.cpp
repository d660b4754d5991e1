// `edgeinfer logits`: decode a token sequence as one batch and write the logits of every
// position as float32, row-major [n_tokens][n_vocab] — the layout of the reference files, so
// any model can be compared with another engine.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"
#include "engine/sequence_runner.h"
#include "kernels/kernels.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"
#include "util/thread_pool.h"

namespace edgeinfer::cli {

namespace {

struct LogitsOptions {
  std::string model;
  std::string tokens;
  std::string prompt;
  std::string out;
  int threads = 0;
  std::string kv_type = "f16";
};

std::vector<int32_t> parse_ids(const std::string& s) {
  std::vector<int32_t> ids;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    std::string item = s.substr(i, j - i);
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || v < 0 || v > INT32_MAX) {
      throw Error("--tokens: '" + item + "' is not a token id");
    }
    ids.push_back(static_cast<int32_t>(v));
    i = j + 1;
  }
  return ids;
}

int logits(const LogitsOptions& o) {
  auto model = load_model_checked(o.model);
  std::vector<int32_t> ids;
  if (!o.tokens.empty()) {
    ids = parse_ids(o.tokens);
  } else {
    Tokenizer tok = Tokenizer::from_gguf(model->gguf());
    ids = tok.encode(o.prompt, /*add_special=*/true);
  }
  if (ids.empty()) throw Error("no tokens to decode");
  ThreadPool pool(o.threads > 0 ? o.threads : default_threads());
  RunnerOptions ro;
  ro.n_ctx = static_cast<int64_t>(ids.size());
  ro.n_batch = static_cast<int64_t>(ids.size());
  ro.kv_type = parse_kv_type(o.kv_type);
  SequenceRunner runner(*model, kernels_for(select_isa()), pool, ro);
  const float* l = runner.eval(ids, /*all_logits=*/true);
  const size_t count = ids.size() * static_cast<size_t>(runner.n_vocab());

  std::FILE* f = std::fopen(o.out.c_str(), "wb");
  if (!f) throw Error(o.out + ": cannot open for writing");
  const size_t wrote = std::fwrite(l, sizeof(float), count, f);
  if (std::fclose(f) != 0 || wrote != count) throw Error(o.out + ": write failed");
  std::fprintf(stderr, "wrote %zu x %lld logits to %s\n", ids.size(), static_cast<long long>(runner.n_vocab()),
               o.out.c_str());
  return 0;
}

}  // namespace

void add_logits_command(CLI::App& app, Registry& r) {
  auto o = std::make_shared<LogitsOptions>();
  CLI::App* sub = app.add_subcommand("logits", "Decode tokens in one batch and write every position's logits (f32)");
  sub->add_option("-m,--model", o->model, "GGUF model file")->required();
  auto* t = sub->add_option("--tokens", o->tokens, "Comma-separated token ids, e.g. 1,403,407");
  auto* p = sub->add_option("-p,--prompt", o->prompt, "Text to tokenize (BOS added as the model says)");
  t->excludes(p);
  sub->add_option("-o,--output", o->out, "Output file: float32 [n_tokens][n_vocab]")->required();
  sub->add_option("-t,--threads", o->threads, "Threads (0 = all hardware threads)")->check(non_negative());
  sub->add_option("--kv-type", o->kv_type, "KV cache type: f16, f32, q8_0")->capture_default_str()->check(CLI::IsMember({"f16", "f32", "q8_0"}));
  r.add(sub, [o] {
    if (o->tokens.empty() && o->prompt.empty()) throw Error("give --tokens IDS or -p TEXT");
    return logits(*o);
  });
}

}  // namespace edgeinfer::cli
