#pragma once
// Name tables of the built-in filters and tests (jinja2's FILTERS / TESTS) and the methods
// of str, dict and list that templates call (`s.strip()`, `d.items()`, ...).
#include <optional>
#include <string_view>

#include "tokenizer/jinja/ast.h"

namespace edgeinfer::jinja {

// nullptr when no such filter/test exists here.
FilterFn find_filter(std::string_view name);
TestFn find_test(std::string_view name);
// jinja2 filters deliberately left out (they fail at load time with this explanation).
bool is_unsupported_filter(std::string_view name);

// Bound method `obj.name` of a str, dict or list value, or nullopt when the type has no
// such method. Methods that would mutate the object yield an undefined whose use fails, as
// in jinja2's ImmutableSandboxedEnvironment.
std::optional<Value> find_method(const Value& obj, std::string_view name);

}  // namespace edgeinfer::jinja
