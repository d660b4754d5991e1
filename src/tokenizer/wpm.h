#pragma once
// WordPiece (BERT): Hugging Face's BertNormalizer (drop control characters, whitespace to
// spaces, CJK ideographs isolated, NFD + accent stripping and lowercasing as configured), split
// on whitespace and punctuation, then greedy longest-match-first word pieces. In GGUF the
// word-initial pieces carry a "▁" prefix and "##" continuations are stored bare.
#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace edgeinfer {

void wpm_encode(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out);

}  // namespace edgeinfer
