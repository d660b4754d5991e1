#pragma once
// Internal: the vocabulary as loaded from tokenizer.ggml.* metadata, shared by the SPM, BPE and
// WPM algorithms. Immutable after loading.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/token_index.h"
#include "tokenizer/tokenizer.h"

namespace edgeinfer {

// Token attributes (bit flags, as the GGUF token_type array maps to them).
enum TokenAttr : uint32_t {
  kAttrUndefined = 0,
  kAttrUnknown = 1u << 0,
  kAttrUnused = 1u << 1,
  kAttrNormal = 1u << 2,
  kAttrControl = 1u << 3,
  kAttrUserDefined = 1u << 4,
  kAttrByte = 1u << 5,
  kAttrLstrip = 1u << 7,  // swallow whitespace to the left when matched as a special token
  kAttrRstrip = 1u << 8,  // ... to the right
};

struct Vocab {
  VocabType type = VocabType::Spm;
  std::string name;  // GGUF path, for messages

  std::vector<std::string> text;
  std::vector<float> score;
  std::vector<uint32_t> attr;
  TokenIndex index;
  size_t max_token_len = 0;  // bytes

  int32_t find(std::string_view s) const { return index.find(text, s); }
  int32_t size() const { return static_cast<int32_t>(text.size()); }

  int32_t bos = -1, eos = -1, eot = -1, eom = -1, unk = -1, sep = -1, pad = -1, mask = -1;
  Tokenizer::Fim fim;
  std::vector<uint8_t> eog;  // per token: 1 = end of generation

  bool add_bos = false, add_eos = false, add_sep = false;
  bool add_space_prefix = false;  // SPM: "▁" before text at the start and after special tokens
  bool ignore_merges = false;     // BPE: a pre-token that is itself a token is emitted whole
  // SPM: characters c such that some token contains c followed by "▁". A word boundary (the
  // start of a "▁" run) after any other character cannot lie inside a token, so the text can be
  // merged word by word: same result as merging it whole, with small cache-resident queues.
  std::vector<uint32_t> spm_joiners;  // sorted
  bool wpm_lowercase = true, wpm_strip_accents = true;

  // SPM byte fallback: id of "<0xXX>" (or of the one-byte token) per byte value, -1 if none.
  std::array<int32_t, 256> byte_token{};

  // Tokens that may be matched as whole units in raw text (control, user-defined, unknown),
  // longest text first.
  std::vector<int32_t> special_tokens;
};

}  // namespace edgeinfer
