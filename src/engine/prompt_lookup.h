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
  // The engine adapts each sequence's draft length between 2 and this (0: fixed at max_draft):
  // doubled while every draft is accepted, halved towards what was accepted otherwise. A batched
  // verification costs more per row than a single decode, so long drafts pay only when they hold.
  int32_t max_draft_adaptive = 32;
};

// Appends at most p.max_draft proposed tokens to `draft` (cleared first).
void prompt_lookup_draft(std::span<const int32_t> tokens, const PromptLookupParams& p, std::vector<int32_t>& draft);

// Drafts from a predicted output: while the generated tokens equal the prediction's start, the
// prediction's next tokens; otherwise what follows the latest occurrence in the prediction of the
// last n tokens of `tokens` (n from max_ngram down to min_ngram). `draft` is cleared first.
void predicted_draft(std::span<const int32_t> tokens, std::span<const int32_t> generated,
                     std::span<const int32_t> prediction, const PromptLookupParams& p, std::vector<int32_t>& draft);

}  // namespace edgeinfer
