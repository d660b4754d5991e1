#include "tokenizer/jinja/template.h"

#include "tokenizer/jinja/errors.h"

namespace edgeinfer::jinja {

Template::Template(const std::string& source, TemplateOptions options) : name_(std::move(options.name)) {
  std::vector<Token> tokens = tokenize(source, options.lex, name_);
  body_ = std::make_shared<const Body>(parse(tokens, name_, options.parse_limits));
}

std::string Template::render(std::vector<std::pair<std::string, Value>> vars, const RenderConfig& config) const {
  Interpreter in(config);
  try {
    return in.render(*body_, std::move(vars));
  } catch (const Failure& f) {
    throw Error(name_ + ":" + std::to_string(in.line()) + ": " + f.what());
  }
}

}  // namespace edgeinfer::jinja
