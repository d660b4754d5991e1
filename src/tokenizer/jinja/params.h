#pragma once
// Binds the arguments of a built-in call to Python-style named parameters (positional in
// declaration order, or by keyword), with Python's errors for surplus or unknown ones.
#include <initializer_list>
#include <string>
#include <vector>

#include "tokenizer/jinja/errors.h"
#include "tokenizer/jinja/pyformat.h"
#include "tokenizer/jinja/value.h"

namespace edgeinfer::jinja {

class Params {
 public:
  Params(const std::string& what, const CallArgs& args, std::initializer_list<const char*> names)
      : names_(names), values_(names.size(), nullptr) {
    if (args.positional.size() > names_.size())
      throw Failure(what + " takes at most " + std::to_string(names_.size()) + " argument(s) (" +
                    std::to_string(args.positional.size()) + " given)");
    for (size_t i = 0; i < args.positional.size(); ++i) values_[i] = &args.positional[i];
    for (const auto& [k, v] : args.keyword) {
      size_t i = 0;
      while (i < names_.size() && k != names_[i]) ++i;
      if (i == names_.size()) throw Failure(what + " got an unexpected keyword argument '" + k + "'");
      if (values_[i]) throw Failure(what + " got multiple values for argument '" + k + "'");
      values_[i] = &v;
    }
  }

  bool has(size_t i) const { return values_[i] != nullptr; }
  const Value& get(size_t i) const { return *values_[i]; }
  Value get_or(size_t i, Value dflt) const { return values_[i] ? *values_[i] : std::move(dflt); }
  // Present and not None.
  bool given(size_t i) const { return values_[i] && !values_[i]->is_none(); }
  bool flag(size_t i, bool dflt) const { return values_[i] ? values_[i]->truthy() : dflt; }
  int64_t integer(size_t i, int64_t dflt, const std::string& what) const {
    if (!values_[i]) return dflt;
    const Value& v = *values_[i];
    if (v.is_int() || v.is_bool()) return v.as_int();
    throw Failure(what + ": '" + std::string(names_[i]) + "' must be an integer, not " + v.type_name());
  }

 private:
  std::vector<const char*> names_;
  std::vector<const Value*> values_;
};

}  // namespace edgeinfer::jinja
