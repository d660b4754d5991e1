#include "sampling/sampler.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "util/error.h"

namespace edgeinfer {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// NaN → -inf (never chosen), +inf → FLT_MAX (so max-subtraction stays finite).
inline float sanitize(float x) {
  if (std::isnan(x)) return kNegInf;
  if (x == std::numeric_limits<float>::infinity()) return FLT_MAX;
  return x;
}

// Best first; equal logits by lower id. A strict total order over candidates, so std::partial_sort
// gives the same result with every standard library.
struct BetterFirst {
  template <class C>
  bool operator()(const C& a, const C& b) const {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  }
};

uint64_t resolve_seed(uint64_t seed) {
  if (seed != SamplingParams::kRandomSeed) return seed;
  std::random_device rd;
  uint64_t s = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  // Keep the drawn seed distinct from the "random" marker so seed() can be passed back in.
  return s == SamplingParams::kRandomSeed ? 0 : s;
}

}  // namespace

Sampler::Sampler(const SamplingParams& params, int32_t n_vocab)
    : params_(params), n_vocab_(n_vocab) {
  params_.validate();
  if (n_vocab <= 0) throw Error("sampler: n_vocab = " + std::to_string(n_vocab) + " must be > 0");
  seed_ = resolve_seed(params_.seed);
  rng_.reseed(seed_);
  if (params_.penalties_enabled()) {
    counts_.assign(static_cast<size_t>(n_vocab), 0);
    if (params_.repeat_last_n > 0) ring_.assign(static_cast<size_t>(params_.repeat_last_n), 0);
  }
  cand_.resize(static_cast<size_t>(n_vocab));
  weight_.resize(static_cast<size_t>(n_vocab));
}

void Sampler::reset() {
  std::fill(counts_.begin(), counts_.end(), 0);
  ring_pos_ = 0;
  ring_fill_ = 0;
  rng_.reseed(seed_);
}

void Sampler::accept(int32_t token) {
  if (token < 0 || token >= n_vocab_)
    throw Error("sampler: accepted token id " + std::to_string(token) + " is outside the vocabulary [0, " +
                std::to_string(n_vocab_) + ")");
  if (counts_.empty()) return;  // penalties disabled
  if (!ring_.empty()) {
    const auto window = static_cast<int32_t>(ring_.size());
    if (ring_fill_ == window) --counts_[static_cast<size_t>(ring_[static_cast<size_t>(ring_pos_)])];
    else ++ring_fill_;
    ring_[static_cast<size_t>(ring_pos_)] = token;
    ring_pos_ = (ring_pos_ + 1) % window;
  }
  ++counts_[static_cast<size_t>(token)];
}

void Sampler::prepare(const float* logits) {
  const bool penalize = !counts_.empty();
  const float rp = params_.repeat_penalty;
  const float presence = params_.presence_penalty;
  const float frequency = params_.frequency_penalty;

  float max_logit = kNegInf;
  int32_t argmax = -1;
  for (int32_t i = 0; i < n_vocab_; ++i) {
    float l = sanitize(logits[i]);
    if (penalize) {
      const int32_t c = counts_[static_cast<size_t>(i)];
      if (c > 0) {
        l = l <= 0.0f ? l * rp : l / rp;
        l -= static_cast<float>(c) * frequency + presence;
        l = sanitize(l);  // a huge penalty could overflow to -inf; that is fine, NaN is not
      }
    }
    cand_[static_cast<size_t>(i)] = {i, l};
    if (l > max_logit) {
      max_logit = l;
      argmax = i;
    }
  }
  if (argmax < 0) throw Error("sampler: every logit is NaN or -inf; no token can be chosen");
  max_logit_ = max_logit;
  argmax_ = argmax;

  if (params_.temperature <= 0.0f) {
    cand_[0] = {argmax, max_logit};
    n_cand_ = 1;
    sorted_ = true;
    weight_[0] = 1.0f;
    weight_sum_ = 1.0;
    return;
  }
  n_cand_ = n_vocab_;
  sorted_ = false;
  if (params_.top_k > 0 && params_.top_k < n_cand_) apply_top_k();
  if (params_.top_p < 1.0f) apply_top_p();
  if (params_.min_p > 0.0f) apply_min_p();
  apply_temperature();
}

void Sampler::apply_top_k() {
  const auto k = static_cast<std::ptrdiff_t>(params_.top_k);
  std::partial_sort(cand_.begin(), cand_.begin() + k, cand_.begin() + n_cand_, BetterFirst{});
  n_cand_ = params_.top_k;
  sorted_ = true;
}

void Sampler::apply_top_p() {
  // Normalizer over the live candidates at temperature 1.
  double sum = 0.0;
  for (int32_t i = 0; i < n_cand_; ++i) sum += std::exp(static_cast<double>(cand_[static_cast<size_t>(i)].logit) - max_logit_);
  const double target = static_cast<double>(params_.top_p) * sum;

  // Without a prior top-k the candidates are unsorted; sort a growing prefix until it holds the
  // nucleus, so a small nucleus over a large vocabulary costs O(n log k), not a full sort.
  int32_t n_sorted = sorted_ ? n_cand_ : std::min<int32_t>(n_cand_, 256);
  int32_t scanned = 0;
  double cum = 0.0;
  for (;;) {
    if (!sorted_)
      std::partial_sort(cand_.begin(), cand_.begin() + n_sorted, cand_.begin() + n_cand_, BetterFirst{});
    for (; scanned < n_sorted; ++scanned) {
      cum += std::exp(static_cast<double>(cand_[static_cast<size_t>(scanned)].logit) - max_logit_);
      if (cum >= target) {
        n_cand_ = scanned + 1;  // the token that crosses top_p is kept
        sorted_ = true;
        return;
      }
    }
    if (n_sorted == n_cand_) break;  // rounding kept cum just below target: keep everything
    n_sorted = static_cast<int32_t>(std::min<int64_t>(n_cand_, int64_t{n_sorted} * 8));
  }
  sorted_ = true;
}

void Sampler::apply_min_p() {
  // p_i >= min_p * p_max  <=>  logit_i - max_logit >= log(min_p). The most likely token always
  // survives. Stable compaction keeps the current order (sorted or by id).
  const float threshold = static_cast<float>(std::log(static_cast<double>(params_.min_p)));
  int32_t kept = 0;
  for (int32_t i = 0; i < n_cand_; ++i) {
    const Candidate c = cand_[static_cast<size_t>(i)];
    if (c.logit - max_logit_ >= threshold) cand_[static_cast<size_t>(kept++)] = c;
  }
  n_cand_ = kept;
}

void Sampler::apply_temperature() {
  // (l - max) / T is <= 0 and never NaN for any T > 0, so tiny temperatures cannot overflow.
  const double inv_t = 1.0 / static_cast<double>(params_.temperature);
  double sum = 0.0;
  for (int32_t i = 0; i < n_cand_; ++i) {
    const double z = (static_cast<double>(cand_[static_cast<size_t>(i)].logit) - max_logit_) * inv_t;
    const auto w = static_cast<float>(std::exp(z));
    weight_[static_cast<size_t>(i)] = w;
    sum += w;
  }
  weight_sum_ = sum;
}

int32_t Sampler::sample(const float* logits) { return sample(logits, 0, nullptr, nullptr); }

int32_t Sampler::sample(const float* logits, int n_top, std::vector<TokenLogprob>* top_out,
                        float* chosen_logprob) {
  prepare(logits);
  int32_t chosen = argmax_;
  if (params_.temperature > 0.0f) {
    // One draw per non-greedy sample, whatever survived the filters.
    const double u = rng_.next_double() * weight_sum_;
    double acc = 0.0;
    int32_t last_nonzero = 0;
    chosen = -1;
    for (int32_t i = 0; i < n_cand_; ++i) {
      const float w = weight_[static_cast<size_t>(i)];
      if (w <= 0.0f) continue;
      last_nonzero = i;
      acc += w;
      if (u < acc) {
        chosen = cand_[static_cast<size_t>(i)].id;
        break;
      }
    }
    // Rounding can leave u a hair above the running sum at the end.
    if (chosen < 0) chosen = cand_[static_cast<size_t>(last_nonzero)].id;
  }

  if (top_out) top_out->clear();
  if (chosen_logprob || (top_out && n_top > 0)) {
    // log_softmax of the raw logits.
    float raw_max = kNegInf;
    for (int32_t i = 0; i < n_vocab_; ++i) raw_max = std::max(raw_max, sanitize(logits[i]));
    double sum = 0.0;
    for (int32_t i = 0; i < n_vocab_; ++i) sum += std::exp(static_cast<double>(sanitize(logits[i])) - raw_max);
    const double lse = static_cast<double>(raw_max) + std::log(sum);
    if (chosen_logprob) *chosen_logprob = static_cast<float>(sanitize(logits[chosen]) - lse);
    if (top_out && n_top > 0) {
      // Small sorted insertion list: scanning ids in increasing order and displacing only on a
      // strictly greater logit gives lower ids precedence on ties.
      const auto n = static_cast<size_t>(std::min(n_top, n_vocab_));
      for (int32_t i = 0; i < n_vocab_; ++i) {
        const float l = sanitize(logits[i]);
        if (top_out->size() == n) {
          if (!(l > top_out->back().logprob)) continue;
          top_out->pop_back();
        }
        auto pos = std::find_if(top_out->begin(), top_out->end(),
                                [l](const TokenLogprob& t) { return t.logprob < l; });
        top_out->insert(pos, TokenLogprob{i, l});
      }
      for (TokenLogprob& t : *top_out) t.logprob = static_cast<float>(t.logprob - lse);
    }
  }
  return chosen;
}

void Sampler::distribution(const float* logits, std::vector<TokenProb>* out) {
  prepare(logits);
  out->clear();
  for (int32_t i = 0; i < n_cand_; ++i)
    out->push_back({cand_[static_cast<size_t>(i)].id,
                    static_cast<float>(weight_[static_cast<size_t>(i)] / weight_sum_)});
}

}  // namespace edgeinfer
