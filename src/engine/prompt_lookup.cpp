#include "engine/prompt_lookup.h"

#include <algorithm>

namespace edgeinfer {

void prompt_lookup_draft(std::span<const int32_t> tokens, const PromptLookupParams& p, std::vector<int32_t>& draft) {
  draft.clear();
  const int64_t n = static_cast<int64_t>(tokens.size());
  for (int32_t ng = p.max_ngram; ng >= p.min_ngram; --ng) {
    if (n <= ng) continue;
    const int32_t* tail = tokens.data() + n - ng;
    // Most recent earlier match: scan backwards from the position just before the tail.
    for (int64_t start = n - ng - 1; start >= 0; --start) {
      if (!std::equal(tail, tail + ng, tokens.data() + start)) continue;
      const int64_t from = start + ng;
      const int64_t len = std::min<int64_t>(p.max_draft, n - from);
      if (len <= 0) continue;
      draft.assign(tokens.begin() + from, tokens.begin() + from + len);
      return;
    }
  }
}

void predicted_draft(std::span<const int32_t> tokens, std::span<const int32_t> generated,
                     std::span<const int32_t> prediction, const PromptLookupParams& p, std::vector<int32_t>& draft) {
  draft.clear();
  const int64_t g = static_cast<int64_t>(generated.size());
  const int64_t np = static_cast<int64_t>(prediction.size());
  if (g < np && std::equal(generated.begin(), generated.end(), prediction.begin())) {
    const int64_t len = std::min<int64_t>(p.max_draft, np - g);
    draft.assign(prediction.begin() + g, prediction.begin() + g + len);
    return;
  }
  const int64_t n = static_cast<int64_t>(tokens.size());
  for (int32_t ng = p.max_ngram; ng >= p.min_ngram; --ng) {
    if (n < ng) continue;
    const int32_t* tail = tokens.data() + n - ng;
    for (int64_t start = np - ng - 1; start >= 0; --start) {
      if (!std::equal(tail, tail + ng, prediction.data() + start)) continue;
      const int64_t from = start + ng;
      const int64_t len = std::min<int64_t>(p.max_draft, np - from);
      draft.assign(prediction.begin() + from, prediction.begin() + from + len);
      return;
    }
  }
}

}  // namespace edgeinfer
