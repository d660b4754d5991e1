#pragma once
// Text <-> token ids for the vocabulary a GGUF file carries: SentencePiece-style (SPM, "llama"),
// byte-level BPE with a named pre-tokenizer ("gpt2"), and WordPiece (WPM, "bert").
// Behaviour follows the reference engine (llama.cpp) so prompts tokenize to exactly the ids the
// model was trained on. A Tokenizer is immutable after loading and cheap to copy (shared state);
// every method is safe to call from several threads at once.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace edgeinfer {

class GgufFile;

enum class VocabType { Spm, Bpe, Wpm };

class Tokenizer {
 public:
  // Reads tokenizer.ggml.* metadata. Throws Error naming the file for an unknown tokenizer model
  // or pre-tokenizer name, missing or malformed keys, or a regex that fails to compile.
  static Tokenizer from_gguf(const GgufFile& f);

  VocabType type() const;
  int32_t n_vocab() const;
  // Name for messages: the GGUF path.
  const std::string& name() const;
  // tokenizer.ggml.pre as loaded ("" when absent; BPE then uses the 'default' splitter).
  const std::string& pre_tokenizer() const;

  // add_special: add BOS/EOS (CLS/SEP for WPM) as the vocabulary's metadata says.
  // parse_special: map control-token text (e.g. "<|im_start|>") to its id; never by default.
  // User-defined (added) tokens are always matched as whole tokens, as Hugging Face and
  // llama.cpp do. Arbitrary bytes are accepted (invalid UTF-8 is tokenized byte-wise).
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special = false) const;
  // Same, appending to `out` (lets callers reuse a buffer).
  void encode_into(std::string_view text, bool add_special, bool parse_special, std::vector<int32_t>& out) const;

  // Bytes of one token ("▁"→" ", <0x0A>→"\n", byte-level BPE → raw bytes). Control and unknown
  // tokens give "" unless show_special. Out-of-range ids throw Error.
  std::string token_to_piece(int32_t id, bool show_special = false) const;
  // Concatenated pieces; for vocabularies that add a space prefix when encoding (SPM, WPM) the
  // first emitted piece loses one leading space, so decode(encode(x, false)) == x where the
  // vocabulary can represent x. Out-of-range ids throw Error.
  // at_text_start = false decodes a continuation (e.g. generated tokens after a prompt): no
  // leading space is stripped.
  std::string decode(std::span<const int32_t> ids, bool show_special = false, bool at_text_start = true) const;
  // Appends the piece of `id` to `out` (no allocation when `out` has room).
  void append_piece(int32_t id, bool show_special, std::string& out) const;
  const std::string& token_text(int32_t id) const;  // raw vocab string
  float token_score(int32_t id) const;

  int32_t bos() const;
  int32_t eos() const;
  int32_t eot() const;
  int32_t eom() const;
  int32_t unk() const;
  int32_t pad() const;
  int32_t sep() const;  // WPM: [SEP]
  bool is_eog(int32_t id) const;  // EOS, EOT, EOM, and other end-of-generation tokens
  bool is_control(int32_t id) const;
  bool is_byte(int32_t id) const;
  bool is_user_defined(int32_t id) const;
  bool add_bos() const;
  bool add_eos() const;
  // Whether encode() puts a space before text (SPM "add_space_prefix"), and so whether decoding
  // strips one leading space from the first emitted piece.
  bool strips_leading_space() const;

  struct Fim {
    int32_t pre = -1, suf = -1, mid = -1, pad = -1, rep = -1, sep = -1;
  };
  const Fim& fim() const;

  struct Impl;

 private:
  explicit Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace edgeinfer

#include "tokenizer/stream_decoder.h"
