#include "engine/perplexity.h"

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "engine/sequence_runner.h"
#include "util/error.h"

namespace edgeinfer {

double log_softmax_at(const float* logits, int64_t n_vocab, int32_t token) {
  float max_logit = logits[0];
  for (int64_t i = 1; i < n_vocab; ++i) max_logit = std::max(max_logit, logits[i]);
  double sum_exp = 0.0;
  for (int64_t i = 0; i < n_vocab; ++i) sum_exp += std::exp(logits[i] - max_logit);
  return static_cast<double>(logits[token] - max_logit) - std::log(sum_exp);
}

PerplexityResult compute_perplexity(const Model& model, const Kernels& kernels, ThreadPool& pool,
                                    std::span<const int32_t> tokens, int32_t bos, const PerplexityOptions& opt,
                                    const std::function<void(const PerplexityChunk&)>& on_chunk) {
  const int64_t n_ctx = opt.n_ctx;
  const int64_t n_tok = static_cast<int64_t>(tokens.size());
  if (n_ctx < 4) throw Error("perplexity: context size " + std::to_string(n_ctx) + " is too small (at least 4)");
  if (n_tok < 2 * n_ctx) {
    throw Error("perplexity: the text has " + std::to_string(n_tok) + " tokens; a context of " +
                std::to_string(n_ctx) + " needs at least " + std::to_string(2 * n_ctx));
  }
  int64_t n_chunks = n_tok / n_ctx;
  if (opt.max_chunks >= 0) n_chunks = std::min(n_chunks, opt.max_chunks);

  RunnerOptions ro;
  ro.n_ctx = n_ctx;
  ro.n_batch = opt.n_batch > 0 ? opt.n_batch : n_ctx;
  ro.kv_type = opt.kv_type;
  SequenceRunner runner(model, kernels, pool, ro);
  const int64_t V = runner.n_vocab();

  const int64_t first = n_ctx / 2;
  double nll = 0.0, nll2 = 0.0;
  int64_t count = 0;
  PerplexityResult res;
  std::vector<int32_t> chunk(static_cast<size_t>(n_ctx));
  for (int64_t c = 0; c < n_chunks; ++c) {
    for (int64_t j = 0; j < n_ctx; ++j) chunk[j] = tokens[c * n_ctx + j];
    if (bos >= 0) chunk[0] = bos;
    runner.clear();
    const auto t0 = std::chrono::steady_clock::now();
    const float* logits = runner.eval(chunk, /*all_logits=*/true);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    res.seconds += secs;
    // Row j predicts token j + 1; score the second half.
    for (int64_t j = first; j < n_ctx - 1; ++j) {
      const double lp = log_softmax_at(logits + j * V, V, tokens[c * n_ctx + j + 1]);
      nll -= lp;
      nll2 += lp * lp;
      ++count;
    }
    const double running = std::exp(nll / static_cast<double>(count));
    res.running_ppl.push_back(running);
    if (on_chunk) on_chunk(PerplexityChunk{c, n_chunks, running, secs});
  }
  res.n_chunks = n_chunks;
  res.n_scored = count;
  res.mean_nll = nll / static_cast<double>(count);
  res.ppl = std::exp(res.mean_nll);
  const double var = nll2 / static_cast<double>(count) - res.mean_nll * res.mean_nll;
  res.ppl_err = (var > 0.0 && count > 1) ? std::sqrt(var / static_cast<double>(count - 1)) * res.ppl : 0.0;
  return res;
}

}  // namespace edgeinfer
