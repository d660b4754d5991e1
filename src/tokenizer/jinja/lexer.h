#pragma once
// Splits template source into tokens the way jinja2's lexer does: template data, the
// {{ }} / {% %} delimiters (comments dropped, raw blocks turned into data), and the
// expression tokens inside them. Whitespace control (`-`, `+`, trim_blocks, lstrip_blocks,
// dropping one trailing newline) is applied here, so the parser only sees final text.
#include <cstdint>
#include <string>
#include <vector>

namespace edgeinfer::jinja {

enum class Tok { Data, VarBegin, VarEnd, BlockBegin, BlockEnd, Name, String, Int, Float, Op, Eof };

struct Token {
  Tok type;
  std::string text;  // data text, name, decoded string literal or operator
  int line = 1;
  int64_t int_value = 0;
  double float_value = 0.0;
};

struct LexOptions {
  bool trim_blocks = true;
  bool lstrip_blocks = true;
  bool keep_trailing_newline = false;
};

// Throws Error("<name>:<line>: ...") on malformed input.
std::vector<Token> tokenize(const std::string& source, const LexOptions& opts, const std::string& name);

}  // namespace edgeinfer::jinja
