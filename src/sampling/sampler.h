#pragma once
// Turns one row of logits into one token for one sequence. The chain, in llama.cpp's default
// order:
//
//   penalties → top-k → top-p → min-p → temperature → draw
//
// top-p and min-p look at the softmax of the logits as they stand after the earlier steps, at
// temperature 1 (as llama.cpp does), so temperature reshapes the kept set but never changes which
// tokens are kept. Each filter renormalizes over what survived the previous one. Temperature 0
// is greedy: the argmax of the penalized logits, exact ties going to the lowest id; greedy never
// touches the RNG, every other sample() consumes exactly one draw.
//
// One Sampler per sequence: it owns its RNG (rng.h — a fixed algorithm, so a seed means the same
// tokens on every platform, up to the last bit of libm's exp) and its penalty history. All
// buffers are sized by n_vocab at construction; sample() allocates nothing (top_out excepted, see
// below).
//
// Non-finite logits: NaN counts as -inf (the token is never chosen), +inf as the largest float.
// A row with no finite-or-+inf logit throws, since no token can be chosen from it.
#include <cstdint>
#include <vector>

#include "sampling/rng.h"
#include "sampling/sampling_params.h"

namespace edgeinfer {

class Sampler {
 public:
  struct TokenLogprob {
    int32_t id;
    float logprob;  // natural log
  };
  struct TokenProb {
    int32_t id;
    float prob;
  };

  // Validates `params` (throws Error naming the bad field); n_vocab must be > 0.
  Sampler(const SamplingParams& params, int32_t n_vocab);

  // Records a token (prompt or generated) in the penalty window. Throws Error for an id outside
  // [0, n_vocab). A no-op for the window when penalties are disabled.
  void accept(int32_t token);

  // logits: n_vocab floats, read only.
  int32_t sample(const float* logits);

  // As above, and reports log-probabilities for the server's `logprobs`. They are the model's raw
  // distribution — log_softmax of the logits as given, before penalties, filters and temperature
  // (vLLM's default; the same token always gets the same logprob whatever the sampling settings).
  // chosen_logprob (may be null): the chosen token's. top_out (may be null): cleared, then the
  // min(n_top, n_vocab) most likely tokens, most likely first, ties by lower id. Reserve n_top in
  // top_out beforehand to keep this free of allocation.
  int32_t sample(const float* logits, int n_top, std::vector<TokenLogprob>* top_out,
                 float* chosen_logprob);

  // The distribution the next sample() would draw from for these logits: the surviving tokens
  // in draw order with their probabilities (summing to 1). Greedy gives the argmax with
  // probability 1. Consumes no randomness; allocates `out`. For tests and debugging.
  void distribution(const float* logits, std::vector<TokenProb>* out);

  // Forgets the penalty history and restarts the RNG from seed(): the Sampler then behaves as
  // freshly built.
  void reset();

  // The seed in use (the drawn one when params.seed was kRandomSeed).
  uint64_t seed() const { return seed_; }
  const SamplingParams& params() const { return params_; }
  int32_t n_vocab() const { return n_vocab_; }

 private:
  struct Candidate {
    int32_t id;
    float logit;
  };

  // Runs the chain up to (not including) the draw: fills cand_[0, n_cand_) and weight_
  // (unnormalized probabilities at the sampling temperature, summing to weight_sum_).
  // Returns the greedy token when temperature <= 0 (then cand_ holds just that token).
  void prepare(const float* logits);
  void apply_top_k();
  void apply_top_p();
  void apply_min_p();
  void apply_temperature();

  SamplingParams params_;
  int32_t n_vocab_;
  uint64_t seed_;
  Rng rng_;

  // Penalty window: ring_ holds the last repeat_last_n accepted tokens (unused when the window is
  // unbounded), counts_[id] the occurrences of id in the window.
  std::vector<int32_t> ring_;
  int32_t ring_pos_ = 0;
  int32_t ring_fill_ = 0;
  std::vector<int32_t> counts_;

  std::vector<Candidate> cand_;  // [n_vocab]; [0, n_cand_) are live
  std::vector<float> weight_;    // [n_vocab]; exp((logit - max_logit_) / temperature)
  int32_t n_cand_ = 0;
  bool sorted_ = false;          // cand_[0, n_cand_) best first (else in id order)
  float max_logit_ = 0.0f;
  int32_t argmax_ = 0;
  double weight_sum_ = 0.0;
};

}  // namespace edgeinfer
