// Methods of str, dict, list and tuple values (`s.split(',')`, `d.get('k')`, `l.index(x)`).
// Mutating methods (list.append, dict.update, ...) are refused as jinja2's
// ImmutableSandboxedEnvironment refuses them. On a Markup string the methods markupsafe wraps
// escape their string arguments and return Markup, which templates can observe.
#include <algorithm>
#include <string_view>

#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/interpreter.h"
#include "tokenizer/jinja/params.h"
#include "tokenizer/jinja/text.h"

namespace edgeinfer::jinja {

namespace {

using Args = CallArgs;
using Method = Value (*)(Interpreter&, const Value& self, Args&);

std::string need_str(const Value& v, const char* what) {
  if (!v.is_string()) throw Failure(std::string(what) + " argument must be str, not " + v.type_name());
  return v.str();
}

// Result of a str method on `self`: Markup stays Markup.
Value str_result(const Value& self, std::string s) { return Value::string(std::move(s), self.is_safe()); }

// Markup methods see their string arguments escaped.
void escape_args(const Value& self, Args& a) {
  if (!self.is_safe()) return;
  for (Value& v : a.positional)
    if (v.is_string() && !v.is_safe()) v = Value::string(html_escape(v.str()), true);
  for (auto& [k, v] : a.keyword)
    if (v.is_string() && !v.is_safe()) v = Value::string(html_escape(v.str()), true);
}

Value strip_impl(const Value& self, Args& a, bool left, bool right, const char* name) {
  escape_args(self, a);
  Params p(name, a, {"chars"});
  std::string chars;
  bool has = p.given(0);
  if (has) chars = need_str(p.get(0), name);
  return str_result(self, text::strip(self.str(), has ? &chars : nullptr, left, right));
}
Value m_strip(Interpreter&, const Value& s, Args& a) { return strip_impl(s, a, true, true, "strip"); }
Value m_lstrip(Interpreter&, const Value& s, Args& a) { return strip_impl(s, a, true, false, "lstrip"); }
Value m_rstrip(Interpreter&, const Value& s, Args& a) { return strip_impl(s, a, false, true, "rstrip"); }

Value split_impl(Interpreter& in, const Value& self, Args& a, bool from_right, const char* name) {
  escape_args(self, a);
  Params p(name, a, {"sep", "maxsplit"});
  long maxsplit = static_cast<long>(p.integer(1, -1, name));
  std::vector<std::string> parts;
  if (p.given(0)) {
    std::string sep = need_str(p.get(0), name);
    if (sep.empty()) throw Failure("empty separator");
    parts = text::split_sep(self.str(), sep, maxsplit, from_right);
  } else {
    parts = text::split_whitespace(self.str(), maxsplit, from_right);
  }
  in.check_items(parts.size());
  ValueList out;
  for (auto& s : parts) out.push_back(str_result(self, std::move(s)));
  return Value::list(std::move(out));
}
Value m_split(Interpreter& in, const Value& s, Args& a) { return split_impl(in, s, a, false, "split"); }
Value m_rsplit(Interpreter& in, const Value& s, Args& a) { return split_impl(in, s, a, true, "rsplit"); }

Value m_splitlines(Interpreter&, const Value& s, Args& a) {
  Params p("splitlines", a, {"keepends"});
  ValueList out;
  for (auto& line : text::splitlines(s.str(), p.flag(0, false))) out.push_back(str_result(s, std::move(line)));
  return Value::list(std::move(out));
}

bool affix_match(const Value& self, Args& a, bool prefix, const char* name) {
  Params p(name, a, {"affix", "start", "end"});
  if (!p.has(0)) throw Failure(std::string(name) + "() takes at least 1 argument");
  if (p.has(1) || p.has(2)) throw Failure(std::string(name) + "() with start/end positions is not supported");
  const Value& arg = p.get(0);
  std::vector<std::string> options;
  if (arg.is_tuple()) {
    for (const Value& v : arg.items()) options.push_back(need_str(v, name));
  } else if (arg.is_string()) {
    options.push_back(arg.str());
  } else {
    throw Failure(std::string(name) + " first arg must be str or a tuple of str, not " + arg.type_name());
  }
  const std::string& s = self.str();
  for (const auto& o : options) {
    if (o.size() > s.size()) continue;
    if (prefix ? s.compare(0, o.size(), o) == 0 : s.compare(s.size() - o.size(), o.size(), o) == 0) return true;
  }
  return false;
}
Value m_startswith(Interpreter&, const Value& s, Args& a) { return Value::boolean(affix_match(s, a, true, "startswith")); }
Value m_endswith(Interpreter&, const Value& s, Args& a) { return Value::boolean(affix_match(s, a, false, "endswith")); }

Value m_upper(Interpreter&, const Value& s, Args& a) { Params p("upper", a, {}); return str_result(s, text::upper(s.str())); }
Value m_lower(Interpreter&, const Value& s, Args& a) { Params p("lower", a, {}); return str_result(s, text::lower(s.str())); }
Value m_casefold(Interpreter&, const Value& s, Args& a) { Params p("casefold", a, {}); return Value::string(text::lower(s.str())); }
Value m_title(Interpreter&, const Value& s, Args& a) { Params p("title", a, {}); return str_result(s, text::title_method(s.str())); }
Value m_capitalize(Interpreter&, const Value& s, Args& a) { Params p("capitalize", a, {}); return str_result(s, text::capitalize(s.str())); }
Value m_swapcase(Interpreter&, const Value& s, Args& a) { Params p("swapcase", a, {}); return str_result(s, text::swapcase(s.str())); }

Value m_replace(Interpreter& in, const Value& s, Args& a) {
  escape_args(s, a);
  Params p("replace", a, {"old", "new", "count"});
  if (!p.has(0) || !p.has(1)) throw Failure("replace expected at least 2 arguments");
  std::string old = need_str(p.get(0), "replace"), repl = need_str(p.get(1), "replace");
  long count = static_cast<long>(p.integer(2, -1, "replace"));
  size_t occurrences = old.empty() ? text::length(s.str()) + 1 : text::count(s.str(), old);
  in.check_size(s.str().size() + occurrences * repl.size());
  return str_result(s, text::replace(s.str(), old, repl, count));
}

Value find_impl(const Value& s, Args& a, bool last, bool raise, const char* name) {
  Params p(name, a, {"sub"});
  if (!p.has(0)) throw Failure(std::string(name) + "() takes at least 1 argument");
  long i = text::find(s.str(), need_str(p.get(0), name), last);
  if (i < 0 && raise) throw Failure("substring not found");
  return Value::integer(i);
}
Value m_find(Interpreter&, const Value& s, Args& a) { return find_impl(s, a, false, false, "find"); }
Value m_rfind(Interpreter&, const Value& s, Args& a) { return find_impl(s, a, true, false, "rfind"); }
Value m_index(Interpreter&, const Value& s, Args& a) { return find_impl(s, a, false, true, "index"); }
Value m_rindex(Interpreter&, const Value& s, Args& a) { return find_impl(s, a, true, true, "rindex"); }

Value m_count(Interpreter&, const Value& s, Args& a) {
  Params p("count", a, {"sub"});
  if (!p.has(0)) throw Failure("count() takes at least 1 argument");
  return Value::integer(static_cast<int64_t>(text::count(s.str(), need_str(p.get(0), "count"))));
}

Value m_join(Interpreter& in, const Value& s, Args& a) {
  Params p("join", a, {"iterable"});
  if (!p.has(0)) throw Failure("join() takes exactly one argument");
  ValueList items = in.iterate(p.get(0));
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_string())
      throw Failure("sequence item " + std::to_string(i) + ": expected str instance, " + items[i].type_name() + " found");
    if (i) out += s.str();
    out += (s.is_safe() && !items[i].is_safe()) ? html_escape(items[i].str()) : items[i].str();
    in.check_size(out.size());
  }
  return str_result(s, std::move(out));
}

Value m_format(Interpreter& in, const Value& s, Args& a) {
  std::string out = str_format(s.str(), a, s.is_safe());
  in.check_size(out.size());
  return str_result(s, std::move(out));
}

template <bool (*Pred)(char32_t)>
Value m_is(Interpreter&, const Value& s, Args& a) {
  Params p("is*", a, {});
  return Value::boolean(text::all_of(s.str(), Pred));
}
Value m_islower(Interpreter&, const Value& s, Args& a) { Params p("islower", a, {}); return Value::boolean(text::is_lower_str(s.str())); }
Value m_isupper(Interpreter&, const Value& s, Args& a) { Params p("isupper", a, {}); return Value::boolean(text::is_upper_str(s.str())); }

Value justify(Interpreter& in, const Value& s, Args& a, char how, const char* name) {
  escape_args(s, a);
  Params p(name, a, {"width", "fillchar"});
  int64_t width = p.integer(0, 0, name);
  std::string fill = " ";
  if (p.has(1)) {
    fill = need_str(p.get(1), name);
    if (text::length(fill) != 1) throw Failure("The fill character must be exactly one character long");
  }
  int64_t len = static_cast<int64_t>(text::length(s.str()));
  if (width <= len) return s;
  in.check_size(static_cast<size_t>(width) * fill.size());
  int64_t marg = width - len;
  int64_t left = how == '<' ? 0 : how == '>' ? marg : marg / 2 + (marg & width & 1);
  std::string out;
  for (int64_t i = 0; i < left; ++i) out += fill;
  out += s.str();
  for (int64_t i = 0; i < marg - left; ++i) out += fill;
  return str_result(s, std::move(out));
}
Value m_center(Interpreter& in, const Value& s, Args& a) { return justify(in, s, a, '^', "center"); }
Value m_ljust(Interpreter& in, const Value& s, Args& a) { return justify(in, s, a, '<', "ljust"); }
Value m_rjust(Interpreter& in, const Value& s, Args& a) { return justify(in, s, a, '>', "rjust"); }

Value m_zfill(Interpreter& in, const Value& s, Args& a) {
  Params p("zfill", a, {"width"});
  int64_t width = p.integer(0, 0, "zfill");
  const std::string& str = s.str();
  int64_t len = static_cast<int64_t>(text::length(str));
  if (width <= len) return s;
  in.check_size(static_cast<size_t>(width));
  size_t sign = (!str.empty() && (str[0] == '+' || str[0] == '-')) ? 1 : 0;
  return str_result(s, str.substr(0, sign) + std::string(static_cast<size_t>(width - len), '0') + str.substr(sign));
}

Value partition_impl(const Value& s, Args& a, bool last, const char* name) {
  escape_args(s, a);
  Params p(name, a, {"sep"});
  if (!p.has(0)) throw Failure(std::string(name) + "() takes exactly one argument");
  std::string sep = need_str(p.get(0), name);
  if (sep.empty()) throw Failure("empty separator");
  const std::string& str = s.str();
  size_t pos = last ? str.rfind(sep) : str.find(sep);
  if (pos == std::string::npos) {
    if (last) return Value::tuple({str_result(s, ""), str_result(s, ""), s});
    return Value::tuple({s, str_result(s, ""), str_result(s, "")});
  }
  return Value::tuple({str_result(s, str.substr(0, pos)), str_result(s, sep), str_result(s, str.substr(pos + sep.size()))});
}
Value m_partition(Interpreter&, const Value& s, Args& a) { return partition_impl(s, a, false, "partition"); }
Value m_rpartition(Interpreter&, const Value& s, Args& a) { return partition_impl(s, a, true, "rpartition"); }

Value m_removeprefix(Interpreter&, const Value& s, Args& a) {
  Params p("removeprefix", a, {"prefix"});
  std::string pre = p.has(0) ? need_str(p.get(0), "removeprefix") : "";
  const std::string& str = s.str();
  if (str.compare(0, pre.size(), pre) == 0) return Value::string(str.substr(pre.size()), s.is_safe());
  return s;
}

Value m_removesuffix(Interpreter&, const Value& s, Args& a) {
  Params p("removesuffix", a, {"suffix"});
  std::string suf = p.has(0) ? need_str(p.get(0), "removesuffix") : "";
  const std::string& str = s.str();
  if (!suf.empty() && str.size() >= suf.size() && str.compare(str.size() - suf.size(), suf.size(), suf) == 0)
    return Value::string(str.substr(0, str.size() - suf.size()), s.is_safe());
  return s;
}

// ---- dict ---------------------------------------------------------------------------------

Value m_items(Interpreter&, const Value& d, Args& a) {
  Params p("items", a, {});
  ValueList out;
  for (const auto& [k, v] : d.dict().entries) out.push_back(Value::tuple({k, v}));
  return Value::list(std::move(out));
}

Value m_keys(Interpreter&, const Value& d, Args& a) {
  Params p("keys", a, {});
  ValueList out;
  for (const auto& [k, v] : d.dict().entries) out.push_back(k);
  return Value::list(std::move(out));
}

Value m_values(Interpreter&, const Value& d, Args& a) {
  Params p("values", a, {});
  ValueList out;
  for (const auto& [k, v] : d.dict().entries) out.push_back(v);
  return Value::list(std::move(out));
}

Value m_get(Interpreter&, const Value& d, Args& a) {
  if (a.positional.empty() || a.positional.size() > 2 || !a.keyword.empty())
    throw Failure("get expected 1 or 2 positional arguments");
  if (const Value* v = d.dict().find(a.positional[0])) return *v;
  return a.positional.size() == 2 ? a.positional[1] : Value::none();
}

Value m_copy(Interpreter&, const Value& self, Args& a) {
  Params p("copy", a, {});
  return self;  // values are immutable, so sharing is a faithful copy
}

// ---- list / tuple ---------------------------------------------------------------------------

Value m_list_index(Interpreter&, const Value& l, Args& a) {
  if (a.positional.size() != 1 || !a.keyword.empty()) throw Failure("index() with start/stop is not supported");
  const auto& items = l.items();
  for (size_t i = 0; i < items.size(); ++i)
    if (equals(items[i], a.positional[0])) return Value::integer(static_cast<int64_t>(i));
  throw Failure(py_repr(a.positional[0]) + " is not in list");
}

Value m_list_count(Interpreter&, const Value& l, Args& a) {
  if (a.positional.size() != 1 || !a.keyword.empty()) throw Failure("count() takes exactly one argument");
  int64_t n = 0;
  for (const Value& v : l.items()) n += equals(v, a.positional[0]);
  return Value::integer(n);
}

struct MethodEntry {
  std::string_view name;
  Method fn;
};

constexpr MethodEntry kStrMethods[] = {
    {"strip", m_strip},         {"lstrip", m_lstrip},       {"rstrip", m_rstrip},
    {"split", m_split},         {"rsplit", m_rsplit},       {"splitlines", m_splitlines},
    {"startswith", m_startswith}, {"endswith", m_endswith}, {"upper", m_upper},
    {"lower", m_lower},         {"casefold", m_casefold},   {"title", m_title},
    {"capitalize", m_capitalize}, {"swapcase", m_swapcase}, {"replace", m_replace},
    {"find", m_find},           {"rfind", m_rfind},         {"index", m_index},
    {"rindex", m_rindex},       {"count", m_count},         {"join", m_join},
    {"format", m_format},       {"isdigit", m_is<text::is_digit>}, {"isdecimal", m_is<text::is_digit>},
    {"isnumeric", m_is<text::is_digit>}, {"isalpha", m_is<text::is_alpha>}, {"isalnum", m_is<text::is_alnum>},
    {"isspace", m_is<text::is_space>}, {"islower", m_islower}, {"isupper", m_isupper},
    {"center", m_center},       {"ljust", m_ljust},         {"rjust", m_rjust},
    {"zfill", m_zfill},         {"partition", m_partition}, {"rpartition", m_rpartition},
    {"removeprefix", m_removeprefix}, {"removesuffix", m_removesuffix},
};

constexpr MethodEntry kDictMethods[] = {
    {"items", m_items}, {"keys", m_keys}, {"values", m_values}, {"get", m_get}, {"copy", m_copy},
};

constexpr MethodEntry kListMethods[] = {
    {"index", m_list_index}, {"count", m_list_count}, {"copy", m_copy},
};

constexpr MethodEntry kTupleMethods[] = {
    {"index", m_list_index}, {"count", m_list_count},
};

constexpr std::string_view kListMutators[] = {"append", "clear", "extend", "insert", "pop", "remove", "reverse", "sort"};
constexpr std::string_view kDictMutators[] = {"clear", "pop", "popitem", "setdefault", "update"};

template <size_t N>
std::optional<Value> lookup(const MethodEntry (&table)[N], const Value& self, std::string_view name) {
  for (const auto& m : table) {
    if (m.name == name) {
      Method fn = m.fn;
      return Value::function(std::string(name), [fn, self](Interpreter& in, CallArgs& a) { return fn(in, self, a); });
    }
  }
  return std::nullopt;
}

template <size_t N>
std::optional<Value> refuse(const std::string_view (&names)[N], const Value& self, std::string_view name) {
  for (auto n : names)
    if (n == name)
      return Value::undefined("access to attribute '" + std::string(name) + "' of '" + self.type_name() + "' object is unsafe.");
  return std::nullopt;
}

}  // namespace

std::optional<Value> find_method(const Value& obj, std::string_view name) {
  switch (obj.kind()) {
    case Value::Kind::String: return lookup(kStrMethods, obj, name);
    case Value::Kind::Dict:
      if (auto m = lookup(kDictMethods, obj, name)) return m;
      return refuse(kDictMutators, obj, name);
    case Value::Kind::List:
      if (auto m = lookup(kListMethods, obj, name)) return m;
      return refuse(kListMutators, obj, name);
    case Value::Kind::Tuple: return lookup(kTupleMethods, obj, name);
    default: return std::nullopt;
  }
}

}  // namespace edgeinfer::jinja
