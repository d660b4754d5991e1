// jinja2's built-in tests (`x is defined`, `x is divisibleby 3`, ...), including its
// Python-level quirks: booleans are numbers, Undefined is iterable, a sequence and callable.
#include <string_view>

#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/interpreter.h"
#include "tokenizer/jinja/params.h"
#include "tokenizer/jinja/text.h"

namespace edgeinfer::jinja {

namespace {

using Args = CallArgs;

const Value& one_arg(const Args& a, const char* what) {
  if (a.positional.size() != 1 || !a.keyword.empty()) throw Failure(std::string("test '") + what + "' takes exactly one argument");
  return a.positional[0];
}

void no_args(const Args& a, const char* what) {
  if (!a.positional.empty() || !a.keyword.empty()) throw Failure(std::string("test '") + what + "' takes no arguments");
}

bool t_defined(Interpreter&, const Value& v, Args& a) { no_args(a, "defined"); return !v.is_undefined(); }
bool t_undefined(Interpreter&, const Value& v, Args& a) { no_args(a, "undefined"); return v.is_undefined(); }
bool t_none(Interpreter&, const Value& v, Args& a) { no_args(a, "none"); return v.is_none(); }
bool t_boolean(Interpreter&, const Value& v, Args& a) { no_args(a, "boolean"); return v.is_bool(); }
bool t_true(Interpreter&, const Value& v, Args& a) { no_args(a, "true"); return v.is_bool() && v.as_bool(); }
bool t_false(Interpreter&, const Value& v, Args& a) { no_args(a, "false"); return v.is_bool() && !v.as_bool(); }
bool t_integer(Interpreter&, const Value& v, Args& a) { no_args(a, "integer"); return v.is_int(); }
bool t_float(Interpreter&, const Value& v, Args& a) { no_args(a, "float"); return v.is_float(); }
bool t_number(Interpreter&, const Value& v, Args& a) { no_args(a, "number"); return v.is_number(); }
bool t_string(Interpreter&, const Value& v, Args& a) { no_args(a, "string"); return v.is_string(); }
bool t_mapping(Interpreter&, const Value& v, Args& a) { no_args(a, "mapping"); return v.is_dict(); }
bool t_escaped(Interpreter&, const Value& v, Args& a) { no_args(a, "escaped"); return v.is_safe(); }

bool t_sequence(Interpreter&, const Value& v, Args& a) {
  no_args(a, "sequence");
  return v.is_undefined() || v.is_string() || v.is_list() || v.is_tuple() || v.is_dict();
}

bool t_iterable(Interpreter&, const Value& v, Args& a) {
  no_args(a, "iterable");
  return v.is_undefined() || v.is_string() || v.is_sequence_like() || v.is_dict();
}

bool t_callable(Interpreter&, const Value& v, Args& a) {
  no_args(a, "callable");
  // Undefined defines __call__ (to raise), so Python calls it callable.
  return v.is_function() || v.is_undefined();
}

bool t_lower(Interpreter&, const Value& v, Args& a) { no_args(a, "lower"); return text::is_lower_str(py_str(v)); }
bool t_upper(Interpreter&, const Value& v, Args& a) { no_args(a, "upper"); return text::is_upper_str(py_str(v)); }

bool modulo_is(Interpreter& in, const Value& v, const Value& m, int64_t want) {
  return equals(in.binary("%", v, m), Value::integer(want));
}
bool t_odd(Interpreter& in, const Value& v, Args& a) { no_args(a, "odd"); return modulo_is(in, v, Value::integer(2), 1); }
bool t_even(Interpreter& in, const Value& v, Args& a) { no_args(a, "even"); return modulo_is(in, v, Value::integer(2), 0); }
bool t_divisibleby(Interpreter& in, const Value& v, Args& a) {
  return modulo_is(in, v, one_arg(a, "divisibleby"), 0);
}

bool t_eq(Interpreter&, const Value& v, Args& a) { return equals(v, one_arg(a, "eq")); }
bool t_ne(Interpreter&, const Value& v, Args& a) { return !equals(v, one_arg(a, "ne")); }
bool t_lt(Interpreter& in, const Value& v, Args& a) { return in.compare("<", v, one_arg(a, "lt")); }
bool t_gt(Interpreter& in, const Value& v, Args& a) { return in.compare(">", v, one_arg(a, "gt")); }
bool t_le(Interpreter& in, const Value& v, Args& a) { return in.compare("<=", v, one_arg(a, "le")); }
bool t_ge(Interpreter& in, const Value& v, Args& a) { return in.compare(">=", v, one_arg(a, "ge")); }
bool t_in(Interpreter& in, const Value& v, Args& a) { return in.contains(one_arg(a, "in"), v); }

bool t_sameas(Interpreter&, const Value& v, Args& a) {
  const Value& o = one_arg(a, "sameas");
  if (v.kind() != o.kind()) return false;
  switch (v.kind()) {
    case Value::Kind::Undefined: return v.identity() == o.identity();
    case Value::Kind::None: return true;
    case Value::Kind::Bool: return v.as_bool() == o.as_bool();
    // CPython caches small ints, so `1 is 1` holds; larger ones are separate objects.
    case Value::Kind::Int: return v.as_int() == o.as_int() && v.as_int() >= -5 && v.as_int() <= 256;
    case Value::Kind::Float: return false;
    default: return v.identity() == o.identity();
  }
}

bool t_filter(Interpreter&, const Value& v, Args& a) {
  no_args(a, "filter");
  return v.is_string() && find_filter(v.str()) != nullptr;
}

bool t_test(Interpreter&, const Value& v, Args& a) {
  no_args(a, "test");
  return v.is_string() && find_test(v.str()) != nullptr;
}

struct TestEntry {
  std::string_view name;
  TestFn fn;
};

constexpr TestEntry kTests[] = {
    {"odd", t_odd},           {"even", t_even},         {"divisibleby", t_divisibleby},
    {"defined", t_defined},   {"undefined", t_undefined}, {"filter", t_filter},
    {"test", t_test},         {"none", t_none},         {"boolean", t_boolean},
    {"false", t_false},       {"true", t_true},         {"integer", t_integer},
    {"float", t_float},       {"lower", t_lower},       {"upper", t_upper},
    {"string", t_string},     {"mapping", t_mapping},   {"number", t_number},
    {"sequence", t_sequence}, {"iterable", t_iterable}, {"callable", t_callable},
    {"sameas", t_sameas},     {"escaped", t_escaped},   {"in", t_in},
    {"==", t_eq},             {"eq", t_eq},             {"equalto", t_eq},
    {"!=", t_ne},             {"ne", t_ne},             {">", t_gt},
    {"gt", t_gt},             {"greaterthan", t_gt},    {"ge", t_ge},
    {">=", t_ge},             {"<", t_lt},              {"lt", t_lt},
    {"lessthan", t_lt},       {"<=", t_le},             {"le", t_le},
};

}  // namespace

TestFn find_test(std::string_view name) {
  for (const auto& t : kTests)
    if (t.name == name) return t.fn;
  return nullptr;
}

}  // namespace edgeinfer::jinja
