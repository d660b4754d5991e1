#pragma once
// SentencePiece-style BPE over scores (llama/phi-3/baichuan vocabularies): start from UTF-8
// characters, repeatedly merge the adjacent pair whose concatenation is the highest-scoring
// token (leftmost on ties), then emit byte tokens for anything that is not a token.
#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"
#include "tokenizer/word_cache.h"

namespace edgeinfer {

// `text` must already have spaces escaped as "▁" (and the space prefix added by the caller).
void spm_encode(const Vocab& vocab, std::string_view text, WordCache& cache, std::vector<int32_t>& out);

}  // namespace edgeinfer
