#pragma once
// Incremental, UTF-8-safe detokenizer for streaming generated tokens.
#include <cstdint>
#include <string>

namespace edgeinfer {

class Tokenizer;

// push() returns only complete UTF-8 text: bytes of a code point split across byte tokens are
// held back until the rest arrive. Bytes that can never complete a code point are replaced by
// U+FFFD as soon as that is certain; flush() returns what remains (an unfinished sequence becomes
// U+FFFD).
//
// Leading space: by default the decoder streams a continuation (generated tokens after a prompt),
// so every piece is emitted as is: "▁was" after "The little dog" gives " was". Pass
// at_text_start = true when the ids start the text (e.g. re-decoding a whole prompt): then, as
// Tokenizer::decode does, the first piece with text loses one leading space on vocabularies that
// add a space prefix (SPM, WPM). For valid text the concatenated push() outputs equal
// Tokenizer::decode(ids, show_special, at_text_start).
// The decoder keeps a reference: the Tokenizer must outlive it.
class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& tok, bool show_special = false, bool at_text_start = false);
  std::string push(int32_t id);
  std::string flush();
  // Forget held bytes and the first-piece state (a new response).
  void reset();

 private:
  const Tokenizer* tok_;
  bool show_special_;
  bool at_text_start_;
  bool emitted_ = false;  // has any piece produced output yet (leading-space rule)
  std::string pending_;   // bytes of an incomplete code point
};

}  // namespace edgeinfer
