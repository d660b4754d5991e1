#pragma once
// Per-request sampling settings. Defaults follow llama.cpp's; the penalty fields follow the
// semantics named beside them. `validate()` is what the CLI and the server call on user input;
// the Sampler calls it too, so a bad value never reaches the hot loop.
#include <cstdint>

namespace edgeinfer {

struct SamplingParams {
  // Seed value meaning "draw a fresh seed from std::random_device when the Sampler is built"
  // (Sampler::seed() then reports the one drawn, so a run can be replayed). Every other value is
  // a fixed seed: same seed + same logits + same accepted tokens → same tokens, on any machine.
  static constexpr uint64_t kRandomSeed = 0xFFFFFFFFFFFFFFFFull;

  float temperature = 0.8f;  // 0 means greedy: argmax of the penalized logits, exact ties → lowest id
  int32_t top_k = 40;        // keep the k most likely tokens; <= 0 disables
  float top_p = 0.95f;       // nucleus: smallest set whose probability reaches top_p; 1 disables
  float min_p = 0.05f;       // drop tokens with p < min_p * p(most likely); 0 disables

  // llama.cpp semantics: each distinct token seen in the window has its logit divided by
  // repeat_penalty when positive, multiplied when negative. 1 disables.
  float repeat_penalty = 1.0f;
  // The penalty window, shared by all three penalties: the last repeat_last_n accepted tokens;
  // 0 disables every penalty; -1 means every token accepted since construction / reset().
  int32_t repeat_last_n = 64;
  // OpenAI semantics: logit -= count * frequency_penalty + (count > 0) * presence_penalty,
  // count being the token's occurrences in the window. 0 disables.
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;

  uint64_t seed = kRandomSeed;

  // Throws edgeinfer::Error naming the field for: temperature NaN/inf/negative; top_p NaN or
  // outside (0, 1]; min_p NaN or outside [0, 1]; repeat_penalty NaN/inf or <= 0;
  // repeat_last_n < -1; presence/frequency penalty NaN or inf.
  void validate() const;

  bool penalties_enabled() const {
    return repeat_last_n != 0 &&
           (repeat_penalty != 1.0f || presence_penalty != 0.0f || frequency_penalty != 0.0f);
  }
};

}  // namespace edgeinfer
