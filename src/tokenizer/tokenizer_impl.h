#pragma once
// Internal: what a loaded Tokenizer holds.
#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/bpe.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"
#include "tokenizer/word_cache.h"

namespace edgeinfer {

// A piece of input text after special-token matching: raw text or one whole token.
struct Fragment {
  int32_t token;  // -1 for raw text
  size_t offset;  // raw text: byte range in the input
  size_t length;
};

struct Tokenizer::Impl {
  Vocab vocab;
  std::string pre_name;

  // BPE only.
  std::unique_ptr<PreTokenizer> pre;
  BpeMerges merges;
  std::array<int32_t, 256> byte_level_token{};  // id of the byte-level character of each byte

  // token_to_piece(id, show_special = true) for every id.
  std::vector<std::string> pieces;

  // Special-token candidates by first byte, longest first: [0] user-defined only (always
  // matched), [1] every special token (parse_special).
  std::array<std::vector<int32_t>, 256> special_by_byte[2];
  // Rank of each special token in vocab.special_tokens (its matching priority), -1 otherwise.
  std::vector<int32_t> special_rank;

  void partition(std::string_view text, bool parse_special, std::vector<Fragment>& out) const;
  void encode_bpe(std::string_view text, WordCache& cache, std::vector<int32_t>& out) const;
  std::string_view piece(int32_t id, bool show_special) const;
};

}  // namespace edgeinfer
