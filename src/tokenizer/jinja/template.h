#pragma once
// A parsed Jinja2 template: parse once, render many times (concurrently if wanted).
//
//   jinja::Template t("{% for m in messages %}{{ m.content }}{% endfor %}", {.name = "chat"});
//   std::string out = t.render({{"messages", jinja::from_json(msgs)}}, jinja::RenderConfig{});
//
// Defaults match how Hugging Face renders chat templates: trim_blocks and lstrip_blocks on,
// one trailing newline of the source dropped, jinja2's sandbox rules for attribute access.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/interpreter.h"
#include "tokenizer/jinja/lexer.h"
#include "tokenizer/jinja/parser.h"
#include "tokenizer/jinja/value.h"

namespace edgeinfer::jinja {

struct TemplateOptions {
  std::string name = "template";  // used in error messages: "<name>:<line>: ..."
  LexOptions lex;
  ParseLimits parse_limits;
};

class Template {
 public:
  // Throws Error naming the line on syntax errors and unsupported constructs.
  explicit Template(const std::string& source, TemplateOptions options = {});

  // Throws RaisedError for raise_exception(), Error ("<name>:<line>: <message>") otherwise.
  std::string render(std::vector<std::pair<std::string, Value>> vars, const RenderConfig& config) const;

  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::shared_ptr<const Body> body_;
};

}  // namespace edgeinfer::jinja
