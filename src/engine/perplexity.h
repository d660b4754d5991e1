#pragma once
// Perplexity with the reference engine's method (llama.cpp's llama-perplexity, as described in
// ../shared/data/README.md): the tokenized text (with BOS when the vocabulary adds one) is split
// into floor(n_tokens / n_ctx) chunks of n_ctx tokens; the first token of each chunk is replaced
// by BOS; each chunk is decoded from an empty KV cache; only the predictions of the tokens at
// positions n_ctx/2 + 1 .. n_ctx - 1 are scored (n_ctx/2 - 1 per chunk, the second half, which
// always has at least half a window of context).
//   PPL = exp(mean NLL);  ± = PPL · sqrt(var(NLL) / (N - 1));  running PPL after every chunk.
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "kernels/kernels.h"
#include "model/model.h"
#include "quant/tensor_type.h"
#include "util/thread_pool.h"

namespace edgeinfer {

struct PerplexityOptions {
  int64_t n_ctx = 512;
  int64_t n_batch = 0;      // tokens per forward call; 0 = n_ctx (one batch per chunk)
  int64_t max_chunks = -1;  // -1 = all
  TensorType kv_type = TensorType::F16;
};

struct PerplexityChunk {
  int64_t index = 0;  // 0-based
  int64_t n_chunks = 0;
  double running_ppl = 0;  // over all chunks so far
  double seconds = 0;      // this chunk's forward time
};

struct PerplexityResult {
  double ppl = 0;
  double ppl_err = 0;  // the ± figure
  double mean_nll = 0;
  int64_t n_chunks = 0;
  int64_t n_scored = 0;  // predictions scored
  std::vector<double> running_ppl;
  double seconds = 0;  // forward time, all chunks
};

// log(softmax(logits)[token]) with the reference's arithmetic: float max, double sum of expf.
double log_softmax_at(const float* logits, int64_t n_vocab, int32_t token);

// `tokens` is the whole tokenized text (BOS first when the vocabulary adds it); bos = the id to
// put at the start of each chunk, or -1 to leave chunks as they are. Throws Error when the text
// has fewer than 2·n_ctx tokens (as the reference does) or n_ctx < 4.
PerplexityResult compute_perplexity(const Model& model, const Kernels& kernels, ThreadPool& pool,
                                    std::span<const int32_t> tokens, int32_t bos, const PerplexityOptions& opt,
                                    const std::function<void(const PerplexityChunk&)>& on_chunk = {});

}  // namespace edgeinfer
