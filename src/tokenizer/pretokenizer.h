#pragma once
// Regex pre-tokenizer for BPE vocabularies: a list of regexes applied in turn, each splitting
// every current piece into its matches and the text between them (both kept), as the
// reference engine and Hugging Face's "Split(..., Isolated)" do. Run by PCRE2 (UTF + Unicode
// properties, JIT compiled; invalid UTF-8 is tolerated and never matched by a class).
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace edgeinfer {

struct TextSpan {
  size_t offset;
  size_t length;
};

class PreTokenizer {
 public:
  // Compiles the regexes; throws Error("<owner>: pre-tokenizer '<name>': regex ... error at
  // offset N: message") on a bad pattern.
  PreTokenizer(const std::vector<std::string>& regexes, const std::string& owner, const std::string& name);
  ~PreTokenizer();
  PreTokenizer(const PreTokenizer&) = delete;
  PreTokenizer& operator=(const PreTokenizer&) = delete;

  // Calls emit(offset, length) for consecutive non-empty pieces that cover text exactly, in
  // order. Streams: memory does not grow with the text.
  using Emit = std::function<void(size_t offset, size_t length)>;
  void split(std::string_view text, const Emit& emit) const;
  // Convenience form collecting the pieces.
  void split(std::string_view text, std::vector<TextSpan>& out) const;

 private:
  struct Compiled;
  class Matcher;
  void split_level(size_t level, std::string_view text, size_t offset, size_t length, Matcher& m,
                   const Emit& emit) const;
  std::vector<std::unique_ptr<Compiled>> regexes_;
  std::string owner_;
};

// The regex list the reference engine uses for a `tokenizer.ggml.pre` name, plus the flags the
// name implies. nullptr when the name is unknown.
struct PreTokenizerSpec {
  std::vector<std::string> regexes;
  bool ignore_merges = false;  // emit a pre-token whole when it is a token (llama3 family)
  bool add_bos = false;        // default add_bos for this family (before metadata overrides)
  bool no_bos = false;         // the family has no BOS token (ChatGLM)
};
const PreTokenizerSpec* find_pre_tokenizer(std::string_view name);
// Every known name (for error messages and tests).
std::vector<std::string> known_pre_tokenizers();

}  // namespace edgeinfer
