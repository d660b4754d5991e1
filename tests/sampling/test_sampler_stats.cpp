// Statistical sanity: over many draws, token frequencies match the distribution the chain
// reports (which the exact tests pin to hand-computed values).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sampling/sampler.h"

namespace edgeinfer {
namespace {

void check_frequencies(const SamplingParams& p, const std::vector<float>& logits, int n_draws) {
  const auto n_vocab = static_cast<int32_t>(logits.size());
  Sampler s(p, n_vocab);
  std::vector<Sampler::TokenProb> dist;
  s.distribution(logits.data(), &dist);
  std::vector<double> want(logits.size(), 0.0);
  for (const auto& t : dist) want[static_cast<size_t>(t.id)] = t.prob;

  std::vector<int> count(logits.size(), 0);
  for (int i = 0; i < n_draws; ++i) ++count[static_cast<size_t>(s.sample(logits.data()))];
  for (size_t id = 0; id < logits.size(); ++id) {
    const double q = want[id];
    const double freq = static_cast<double>(count[id]) / n_draws;
    if (q == 0.0) {
      EXPECT_EQ(count[id], 0) << "id " << id << " was filtered out but drawn";
      continue;
    }
    // 5 standard deviations of a binomial proportion.
    const double sigma = std::sqrt(q * (1 - q) / n_draws);
    EXPECT_NEAR(freq, q, 5 * sigma + 1e-9) << "id " << id;
  }
}

TEST(SamplerStats, PlainSoftmax) {
  SamplingParams p;
  p.temperature = 1.0f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.seed = 7;
  check_frequencies(p, {0.0f, 1.0f, 2.0f, 0.5f, -1.0f, 1.5f}, 200000);
}

TEST(SamplerStats, DefaultChainOverAWiderVocab) {
  std::vector<float> logits(300);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = static_cast<float>((i * 131) % 97) / 12.0f;
  SamplingParams p;  // top-k 40, top-p 0.95, min-p 0.05, temperature 0.8
  p.seed = 11;
  check_frequencies(p, logits, 40000);
}

}  // namespace
}  // namespace edgeinfer
