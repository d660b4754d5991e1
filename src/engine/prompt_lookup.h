#pragma once
// Prompt-lookup drafting (speculative decoding without a draft model): find the most recent
// earlier occurrence of the sequence's last n tokens (n from max_ngram down to min_ngram) and
// propose the tokens that followed it. Edits of a file, code completion and quoting agents repeat
// long spans of their input, which this turns into several tokens per forward pass.
#include <cstdint>
#include <span>
#include <vector>

namespace edgeinfer {

struct PromptLookupParams {
  int32_t min_ngram = 2;
  int32_t max_ngram = 4;
  int32_t max_draft = 8;
};

// Appends at most p.max_draft proposed tokens to `draft` (cleared first).
void prompt_lookup_draft(std::span<const int32_t> tokens, const PromptLookupParams& p, std::vector<int32_t>& draft);

}  // namespace edgeinfer
