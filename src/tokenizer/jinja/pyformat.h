#pragma once
// Python's text forms of values: str(), repr(), float repr, json.dumps (as jinja2's tojson
// calls it), markupsafe.escape, printf-style `%` formatting and str.format. Chat templates
// print these directly, so they must match CPython character for character.
#include <string>
#include <string_view>

#include "tokenizer/jinja/value.h"

namespace edgeinfer::jinja {

std::string float_repr(double d);
std::string py_str(const Value& v);
std::string py_repr(const Value& v);
std::string string_repr(std::string_view s);

struct JsonOptions {
  // indent < 0: single line with ", " and ": " separators; otherwise newline + indent
  // (indent_str when set, else that many spaces) per level.
  int indent = -1;
  std::string indent_str;
  bool has_indent_str = false;
  bool sort_keys = true;
  bool ensure_ascii = true;
  bool html_safe = true;  // jinja2's htmlsafe_json_dumps: <, >, &, ' as \u escapes
  std::string item_sep = ", ";
  std::string key_sep = ": ";
};
std::string to_json(const Value& v, const JsonOptions& opts);

std::string html_escape(std::string_view s);

// `fmt % args` for str; args is a tuple, a dict (for %(name)s) or a single value.
std::string percent_format(const std::string& fmt, const Value& args, bool escape_args);
// str.format(*positional, **keyword).
std::string str_format(const std::string& fmt, const CallArgs& args, bool escape_args);

}  // namespace edgeinfer::jinja
