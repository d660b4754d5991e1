#pragma once
// Recursive-descent parser from tokens to the syntax tree, following jinja2's grammar and
// operator precedence (filters bind tighter than arithmetic, `not` looser than comparisons,
// chained comparisons, `a if b else c`, implicit tuples). Constructs that exist in jinja2 but
// not here (extends, include, import, recursive loops, ...) fail with the construct's name.
#include <string>
#include <vector>

#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/lexer.h"

namespace edgeinfer::jinja {

struct ParseLimits {
  int max_nesting = 200;  // expressions and statement blocks nested deeper than this fail
};

// Throws Error("<name>:<line>: ...") on syntax errors and unsupported constructs.
Body parse(const std::vector<Token>& tokens, const std::string& name, const ParseLimits& limits = {});

}  // namespace edgeinfer::jinja
