#pragma once
// Fill-in-the-middle prompts from a vocabulary's FIM tokens (tokenizer.ggml.fim_*_token_id, or
// found by their text: <|fim_prefix|>, <fim_prefix>, <｜fim▁begin｜>, <PRE>, ...).
//
// Layout (BOS first when the vocabulary adds one):
//   repo-level context, only when `extra` chunks are given:
//     with file-separator tokens: [REPO] repo_name "\n" { [FILE_SEP] filename "\n" text }* [FILE_SEP] filename "\n"
//       ([REPO] part only when the vocabulary has a repo token)
//     without: { "\n\n--- snippet ---\n\n" text }*
//   prefix-suffix-middle: [PRE] prefix prompt [SUF] suffix [MID]
//   suffix-prefix-middle: [SUF] suffix [PRE] prefix prompt [MID]
// The model then generates the middle; it ends with an end-of-generation token (is_eog).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace edgeinfer {

struct FimChunk {
  std::string filename;
  std::string text;
};

enum class FimOrder { PrefixSuffixMiddle, SuffixPrefixMiddle };

struct FimRequest {
  std::string_view prefix;       // text before the cursor
  std::string_view suffix;       // text after the cursor
  std::string_view prompt;       // text already typed at the cursor (follows the prefix)
  std::span<const FimChunk> extra;  // other files of the repository, oldest first
  std::string_view repo_name = "myproject";
  std::string_view filename = "filename";  // the file being edited
  FimOrder order = FimOrder::PrefixSuffixMiddle;
  // Token budgets, 0 = unlimited: the prefix keeps its last tokens, the suffix its first ones,
  // the repo-level context its last ones.
  size_t max_prefix_tokens = 0;
  size_t max_suffix_tokens = 0;
  size_t max_extra_tokens = 0;
};

// The vocabulary has prefix, suffix and middle tokens.
bool has_fim(const Tokenizer& tok);
// It also has a file-separator token (repo-level layout).
bool has_fim_repo(const Tokenizer& tok);

// Throws Error("<vocab>: vocabulary has no fill-in-the-middle tokens ...") when !has_fim(tok).
std::vector<int32_t> build_fim_prompt(const Tokenizer& tok, const FimRequest& req);

}  // namespace edgeinfer
