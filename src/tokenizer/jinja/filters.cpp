// jinja2's built-in filters, with the argument names, defaults and edge cases of jinja2 3.1
// (e.g. map/select gate on the input's truthiness, replace/join return plain str, tojson
// returns Markup, indent's trailing-newline quirk).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/interpreter.h"
#include "tokenizer/jinja/params.h"
#include "tokenizer/jinja/text.h"

namespace edgeinfer::jinja {

namespace {

using Args = CallArgs;

// soft_str: str(value), keeping Markup as Markup.
Value soft_str(const Value& v) {
  if (v.is_string()) return v;
  return Value::string(py_str(v));
}

Value ignore_case(const Value& v) { return v.is_string() ? Value::string(text::lower(v.str())) : v; }

// jinja2's make_attrgetter: "a.b.0" looked up with subscript semantics, digits as ints.
std::vector<Value> attribute_parts(const Value& attr) {
  std::vector<Value> parts;
  if (attr.is_none() || attr.is_undefined()) return parts;
  if (!attr.is_string()) {
    parts.push_back(attr);
    return parts;
  }
  for (const std::string& p : text::split_sep(attr.str(), ".", -1, false)) {
    bool digits = !p.empty() && std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; });
    parts.push_back(digits ? Value::integer(std::strtoll(p.c_str(), nullptr, 10)) : Value::string(p));
  }
  return parts;
}

Value lookup_path(Interpreter& in, Value item, const std::vector<Value>& parts, const Value* dflt = nullptr) {
  for (const Value& p : parts) {
    item = in.get_item(item, p);
    if (dflt && item.is_undefined()) item = *dflt;
  }
  return item;
}

size_t py_len(Interpreter& in, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined: return 0;
    case Value::Kind::String: return text::length(v.str());
    case Value::Kind::List:
    case Value::Kind::Tuple: return v.items().size();
    case Value::Kind::Dict: return v.dict().entries.size();
    default: throw Failure("object of type '" + v.type_name() + "' has no len()");
  }
}

Value f_abs(Interpreter& in, const Value& v, Args& a) {
  Params p("abs", a, {});
  if (v.is_undefined()) in.fail_undefined(v);
  if (v.is_int() || v.is_bool()) {
    if (v.as_int() == INT64_MIN) throw Failure("integer overflow");
    return Value::integer(std::llabs(v.as_int()));
  }
  if (v.is_float()) return Value::floating(std::fabs(v.as_double()));
  throw Failure("bad operand type for abs(): '" + v.type_name() + "'");
}

Value f_attr(Interpreter& in, const Value& v, Args& a) {
  Params p("attr", a, {"name"});
  if (!p.has(0)) throw Failure("attr() missing required argument 'name'");
  if (v.is_undefined()) in.fail_undefined(v);
  std::string name = py_str(p.get(0));
  if (v.is_object()) {
    if (auto r = v.object()->attribute(name)) return *r;
  } else if (auto m = find_method(v, name)) {
    return *m;
  }
  return Value::undefined("'" + v.type_name() + " object' has no attribute '" + name + "'");
}

Value f_batch(Interpreter& in, const Value& v, Args& a) {
  Params p("batch", a, {"linecount", "fill_with"});
  int64_t n = p.integer(0, -1, "batch");
  if (n <= 0) throw Failure("batch(): linecount must be a positive integer");
  ValueList out, cur;
  for (const Value& item : in.iterate(v)) {
    if (static_cast<int64_t>(cur.size()) == n) {
      out.push_back(Value::list(std::move(cur)));
      cur.clear();
    }
    cur.push_back(item);
  }
  if (!cur.empty()) {
    if (p.given(1))
      while (static_cast<int64_t>(cur.size()) < n) cur.push_back(p.get(1));
    out.push_back(Value::list(std::move(cur)));
  }
  return Value::iterator(std::move(out));
}

Value f_capitalize(Interpreter&, const Value& v, Args& a) {
  Params p("capitalize", a, {});
  Value s = soft_str(v);
  return Value::string(text::capitalize(s.str()), s.is_safe());
}

std::string center_str(Interpreter& in, const std::string& s, int64_t width, const std::string& fill = " ") {
  int64_t len = static_cast<int64_t>(text::length(s));
  if (width <= len) return s;
  in.check_size(static_cast<size_t>(width));
  int64_t marg = width - len;
  // CPython's centering puts the odd space on the left when width is odd.
  int64_t left = marg / 2 + (marg & width & 1);
  std::string out;
  for (int64_t i = 0; i < left; ++i) out += fill;
  out += s;
  for (int64_t i = 0; i < marg - left; ++i) out += fill;
  return out;
}

Value f_center(Interpreter& in, const Value& v, Args& a) {
  Params p("center", a, {"width"});
  Value s = soft_str(v);
  return Value::string(center_str(in, s.str(), p.integer(0, 80, "center")), s.is_safe());
}

Value f_length(Interpreter& in, const Value& v, Args& a) {
  Params p("length", a, {});
  return Value::integer(static_cast<int64_t>(py_len(in, v)));
}

Value f_default(Interpreter&, const Value& v, Args& a) {
  Params p("default", a, {"default_value", "boolean"});
  if (v.is_undefined() || (p.flag(1, false) && !v.truthy())) return p.get_or(0, Value::string(""));
  return v;
}

template <class KeyFn>
void stable_sort_by(Interpreter& in, ValueList& items, KeyFn key, bool reverse) {
  std::vector<std::pair<Value, size_t>> keyed;
  keyed.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) keyed.emplace_back(key(items[i]), i);
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
    return reverse ? in.less(y.first, x.first) : in.less(x.first, y.first);
  });
  ValueList out;
  out.reserve(items.size());
  for (auto& [k, i] : keyed) out.push_back(items[i]);
  items = std::move(out);
}

Value f_dictsort(Interpreter& in, const Value& v, Args& a) {
  Params p("dictsort", a, {"case_sensitive", "by", "reverse"});
  if (!v.is_dict()) throw Failure("dictsort: '" + v.type_name() + "' object has no attribute 'items'");
  bool case_sensitive = p.flag(0, false);
  std::string by = p.has(1) ? py_str(p.get(1)) : "key";
  if (by != "key" && by != "value") throw Failure("You can only sort by either \"key\" or \"value\"");
  size_t pos = by == "key" ? 0 : 1;
  ValueList items;
  for (const auto& [k, val] : v.dict().entries) items.push_back(Value::tuple({k, val}));
  stable_sort_by(
      in, items,
      [&](const Value& item) {
        const Value& x = item.items()[pos];
        return case_sensitive ? x : ignore_case(x);
      },
      p.flag(2, false));
  return Value::list(std::move(items));
}

Value f_escape(Interpreter&, const Value& v, Args& a) {
  Params p("escape", a, {});
  if (v.is_safe()) return v;
  return Value::string(html_escape(py_str(v)), true);
}

Value f_forceescape(Interpreter&, const Value& v, Args& a) {
  Params p("forceescape", a, {});
  return Value::string(html_escape(py_str(v)), true);
}

Value f_first(Interpreter& in, const Value& v, Args& a) {
  Params p("first", a, {});
  ValueList items = in.iterate(v);
  if (items.empty()) return Value::undefined("No first item, sequence was empty.");
  return items.front();
}

Value f_last(Interpreter& in, const Value& v, Args& a) {
  Params p("last", a, {});
  if (v.is_iterator()) throw Failure("'generator' object is not reversible");
  ValueList items = in.iterate(v);
  if (items.empty()) return Value::undefined("No last item, sequence was empty.");
  return items.back();
}

// Python float(str): surrounding whitespace, underscores between digits, inf/nan words.
std::optional<double> parse_float(const std::string& raw) {
  std::string s = text::strip(raw, nullptr, true, true);
  std::string clean;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_') {
      if (i == 0 || i + 1 >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i - 1])) ||
          !std::isdigit(static_cast<unsigned char>(s[i + 1])))
        return std::nullopt;
      continue;
    }
    clean += s[i];
  }
  if (clean.empty()) return std::nullopt;
  std::string low = text::lower(clean);
  std::string body = (low[0] == '+' || low[0] == '-') ? low.substr(1) : low;
  double sign = low[0] == '-' ? -1.0 : 1.0;
  if (body == "inf" || body == "infinity") return sign * INFINITY;
  if (body == "nan") return NAN;
  for (char c : body)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == '+' || c == '-')) return std::nullopt;
  char* end = nullptr;
  double d = std::strtod(clean.c_str(), &end);
  if (end != clean.c_str() + clean.size()) return std::nullopt;
  return d;
}

std::optional<int64_t> parse_int(const std::string& raw, int64_t base) {
  std::string s = text::strip(raw, nullptr, true, true);
  if (s.empty()) return std::nullopt;
  bool neg = false;
  size_t i = 0;
  if (s[0] == '+' || s[0] == '-') {
    neg = s[0] == '-';
    i = 1;
  }
  auto prefix_base = [&](char c) { c = static_cast<char>(c | 0x20); return c == 'x' ? 16 : c == 'o' ? 8 : c == 'b' ? 2 : 0; };
  if (i + 1 < s.size() && s[i] == '0' && prefix_base(s[i + 1]) && (base == 0 || base == prefix_base(s[i + 1]))) {
    base = prefix_base(s[i + 1]);
    i += 2;
    if (i < s.size() && s[i] == '_') ++i;
  } else if (base == 0) {
    base = 10;
  }
  if (base < 2 || base > 36 || i >= s.size()) return std::nullopt;
  uint64_t v = 0;
  bool any = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '_' && any && i + 1 < s.size() && s[i + 1] != '_') continue;
    int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::isalpha(static_cast<unsigned char>(c)) ? (c | 0x20) - 'a' + 10 : 99;
    if (d >= base) return std::nullopt;
    if (v > (static_cast<uint64_t>(INT64_MAX) - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) throw Failure("integer too large");
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
    any = true;
  }
  if (!any) return std::nullopt;
  return neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
}

Value f_float(Interpreter& in, const Value& v, Args& a) {
  Params p("float", a, {"default"});
  if (v.is_undefined()) in.fail_undefined(v);
  if (v.is_number()) return Value::floating(v.as_double());
  if (v.is_string())
    if (auto d = parse_float(v.str())) return Value::floating(*d);
  return p.get_or(0, Value::floating(0.0));
}

Value f_int(Interpreter& in, const Value& v, Args& a) {
  Params p("int", a, {"default", "base"});
  if (v.is_undefined()) in.fail_undefined(v);
  Value dflt = p.get_or(0, Value::integer(0));
  if (v.is_int() || v.is_bool()) return Value::integer(v.as_int());
  auto from_double = [&](double d) -> Value {
    if (std::isnan(d)) return dflt;
    if (std::isinf(d)) throw Failure("cannot convert float infinity to integer");
    if (std::fabs(d) >= 9.2e18) throw Failure("integer too large");
    return Value::integer(static_cast<int64_t>(std::trunc(d)));
  };
  if (v.is_float()) return from_double(v.as_double());
  if (v.is_string()) {
    if (auto i = parse_int(v.str(), p.integer(1, 10, "int"))) return Value::integer(*i);
    if (auto d = parse_float(v.str())) return from_double(*d);
  }
  return dflt;
}

Value f_format(Interpreter& in, const Value& v, Args& a) {
  if (!a.positional.empty() && !a.keyword.empty())
    throw Failure("can't handle positional and keyword arguments at the same time");
  Value s = soft_str(v);
  Value args;
  if (!a.keyword.empty()) {
    Dict d;
    for (auto& [k, val] : a.keyword) d.set(Value::string(k), val);
    args = Value::dict(std::move(d));
  } else {
    args = Value::tuple(a.positional);
  }
  std::string out = percent_format(s.str(), args, s.is_safe());
  in.check_size(out.size());
  return Value::string(std::move(out), s.is_safe());
}

Value f_indent(Interpreter& in, const Value& v, Args& a) {
  Params p("indent", a, {"width", "first", "blank"});
  std::string indention;
  if (p.has(0) && p.get(0).is_string()) {
    indention = p.get(0).str();
  } else {
    int64_t w = p.integer(0, 4, "indent");
    if (w > 0) {
      in.check_size(static_cast<size_t>(w));
      indention.assign(static_cast<size_t>(w), ' ');
    }
  }
  // jinja2 does `s += "\n"` on the input itself, which only works for strings.
  if (v.is_undefined()) in.fail_undefined(v);
  if (!v.is_string()) throw Failure("unsupported operand type(s) for +=: '" + v.type_name() + "' and 'str'");
  const Value& s = v;
  std::string str = s.str() + "\n";  // the newline makes splitlines() keep a trailing empty line
  std::vector<std::string> lines = text::splitlines(str, false);
  std::string rv;
  if (p.flag(2, false)) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i) rv += "\n" + indention;
      rv += lines[i];
    }
  } else {
    rv = lines.empty() ? std::string() : lines[0];
    for (size_t i = 1; i < lines.size(); ++i) {
      rv += "\n";
      if (!lines[i].empty()) rv += indention;
      rv += lines[i];
      in.check_size(rv.size());
    }
  }
  if (p.flag(1, false)) rv = indention + rv;
  in.check_size(rv.size());
  return Value::string(std::move(rv), s.is_safe());
}

Value f_items(Interpreter&, const Value& v, Args& a) {
  Params p("items", a, {});
  if (v.is_undefined()) return Value::iterator({});
  if (!v.is_dict()) throw Failure("Can only get item pairs from a mapping.");
  ValueList out;
  for (const auto& [k, val] : v.dict().entries) out.push_back(Value::tuple({k, val}));
  return Value::iterator(std::move(out));
}

Value f_join(Interpreter& in, const Value& v, Args& a) {
  Params p("join", a, {"d", "attribute"});
  std::string sep = p.has(0) ? py_str(p.get(0)) : "";
  ValueList items = in.iterate(v);
  std::vector<Value> parts = p.given(1) ? attribute_parts(p.get(1)) : std::vector<Value>{};
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += py_str(parts.empty() ? items[i] : lookup_path(in, items[i], parts));
    in.check_size(out.size());
  }
  return Value::string(std::move(out));
}

Value f_list(Interpreter& in, const Value& v, Args& a) {
  Params p("list", a, {});
  ValueList items = in.iterate(v);
  return Value::list(std::move(items));
}

Value f_lower(Interpreter&, const Value& v, Args& a) {
  Params p("lower", a, {});
  Value s = soft_str(v);
  return Value::string(text::lower(s.str()), s.is_safe());
}

Value f_upper(Interpreter&, const Value& v, Args& a) {
  Params p("upper", a, {});
  Value s = soft_str(v);
  return Value::string(text::upper(s.str()), s.is_safe());
}

Value f_map(Interpreter& in, const Value& v, Args& a) {
  if (!v.truthy()) return Value::iterator({});
  ValueList items = in.iterate(v);
  ValueList out;
  out.reserve(items.size());
  const Value* attribute = nullptr;
  const Value* dflt = nullptr;
  for (auto& [k, val] : a.keyword) {
    if (k == "attribute") attribute = &val;
    if (k == "default") dflt = &val;
  }
  if (a.positional.empty() && attribute) {
    for (auto& [k, val] : a.keyword)
      if (k != "attribute" && k != "default") throw Failure("Unexpected keyword argument '" + k + "'");
    auto parts = attribute_parts(*attribute);
    const Value* d = (dflt && !dflt->is_none()) ? dflt : nullptr;
    for (const Value& item : items) out.push_back(lookup_path(in, item, parts, d));
    return Value::iterator(std::move(out));
  }
  if (a.positional.empty()) throw Failure("map requires a filter argument");
  std::string name = py_str(a.positional[0]);
  FilterFn fn = find_filter(name);
  if (!fn) throw Failure("No filter named '" + name + "'");
  for (const Value& item : items) {
    CallArgs rest;
    rest.positional.assign(a.positional.begin() + 1, a.positional.end());
    rest.keyword = a.keyword;
    out.push_back(fn(in, item, rest));
  }
  return Value::iterator(std::move(out));
}

Value min_max(Interpreter& in, const Value& v, Args& a, bool want_max, const char* what) {
  Params p(what, a, {"case_sensitive", "attribute"});
  ValueList items = in.iterate(v);
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  bool case_sensitive = p.flag(0, false);
  auto parts = p.given(1) ? attribute_parts(p.get(1)) : std::vector<Value>{};
  auto key = [&](const Value& item) {
    Value k = lookup_path(in, item, parts);
    return case_sensitive ? k : ignore_case(k);
  };
  size_t best = 0;
  Value best_key = key(items[0]);
  for (size_t i = 1; i < items.size(); ++i) {
    Value k = key(items[i]);
    if (want_max ? in.less(best_key, k) : in.less(k, best_key)) {
      best = i;
      best_key = k;
    }
  }
  return items[best];
}

Value f_max(Interpreter& in, const Value& v, Args& a) { return min_max(in, v, a, true, "max"); }
Value f_min(Interpreter& in, const Value& v, Args& a) { return min_max(in, v, a, false, "min"); }

Value select_or_reject(Interpreter& in, const Value& v, Args& a, bool select, bool lookup_attr) {
  if (!v.truthy()) return Value::iterator({});
  size_t off = 0;
  std::vector<Value> parts;
  if (lookup_attr) {
    if (a.positional.empty()) throw Failure("Missing parameter for attribute name");
    parts = attribute_parts(a.positional[0]);
    off = 1;
  }
  TestFn test = nullptr;
  CallArgs test_args;
  if (a.positional.size() > off) {
    std::string name = py_str(a.positional[off]);
    test = find_test(name);
    if (!test) throw Failure("No test named '" + name + "'");
    test_args.positional.assign(a.positional.begin() + static_cast<long>(off) + 1, a.positional.end());
    test_args.keyword = a.keyword;
  }
  ValueList out;
  for (const Value& item : in.iterate(v)) {
    Value x = lookup_attr ? lookup_path(in, item, parts) : item;
    bool r;
    if (test) {
      CallArgs copy = test_args;
      r = test(in, x, copy);
    } else {
      r = x.truthy();
    }
    if (r == select) out.push_back(item);
  }
  return Value::iterator(std::move(out));
}

Value f_select(Interpreter& in, const Value& v, Args& a) { return select_or_reject(in, v, a, true, false); }
Value f_reject(Interpreter& in, const Value& v, Args& a) { return select_or_reject(in, v, a, false, false); }
Value f_selectattr(Interpreter& in, const Value& v, Args& a) { return select_or_reject(in, v, a, true, true); }
Value f_rejectattr(Interpreter& in, const Value& v, Args& a) { return select_or_reject(in, v, a, false, true); }

Value f_replace(Interpreter& in, const Value& v, Args& a) {
  Params p("replace", a, {"old", "new", "count"});
  if (!p.has(0) || !p.has(1)) throw Failure("replace() missing required arguments 'old' and 'new'");
  long count = p.given(2) ? static_cast<long>(p.integer(2, -1, "replace")) : -1;
  std::string s = py_str(v), old = py_str(p.get(0)), repl = py_str(p.get(1));
  size_t occurrences = old.empty() ? text::length(s) + 1 : text::count(s, old);
  in.check_size(s.size() + occurrences * repl.size());
  return Value::string(text::replace(s, old, repl, count));
}

Value f_reverse(Interpreter& in, const Value& v, Args& a) {
  Params p("reverse", a, {});
  if (v.is_string()) {
    std::u32string cps = text::decode(v.str());
    std::reverse(cps.begin(), cps.end());
    return Value::string(text::encode(cps), v.is_safe());
  }
  ValueList items;
  try {
    items = in.iterate(v);
  } catch (const Failure&) {
    throw Failure("argument must be iterable");
  }
  std::reverse(items.begin(), items.end());
  // reversed() of a list/tuple/dict is an iterator; a generator is copied into a list.
  return v.is_iterator() ? Value::list(std::move(items)) : Value::iterator(std::move(items));
}

double round_half_even(double x, int64_t digits) {
  if (digits > 300) return x;
  if (digits >= 0) {
    // printf rounds the exact binary value correctly, ties to even: what round() does.
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(digits), x);
    return std::strtod(buf, nullptr);
  }
  double scale = std::pow(10.0, static_cast<double>(-digits));
  double y = x / scale;
  double r = std::nearbyint(y);  // default rounding mode: ties to even
  return r * scale;
}

Value f_round(Interpreter& in, const Value& v, Args& a) {
  Params p("round", a, {"precision", "method"});
  int64_t precision = p.integer(0, 0, "round");
  std::string method = p.has(1) ? py_str(p.get(1)) : "common";
  if (method != "common" && method != "ceil" && method != "floor") throw Failure("method must be common, ceil or floor");
  if (v.is_undefined()) in.fail_undefined(v);
  if (!v.is_number()) throw Failure("type " + v.type_name() + " doesn't define __round__ method");
  if (method == "common") {
    if (v.is_int() || v.is_bool()) {
      if (precision >= 0) return Value::integer(v.as_int());
      return Value::integer(static_cast<int64_t>(round_half_even(static_cast<double>(v.as_int()), precision)));
    }
    double d = v.as_double();
    if (!std::isfinite(d)) return Value::floating(d);
    return Value::floating(round_half_even(d, precision));
  }
  double scale = std::pow(10.0, static_cast<double>(precision));
  double x = v.as_double() * scale;
  double r = method == "ceil" ? std::ceil(x) : std::floor(x);
  return Value::floating(r / scale);
}

Value f_safe(Interpreter&, const Value& v, Args& a) {
  Params p("safe", a, {});
  if (v.is_safe()) return v;
  return Value::string(py_str(v), true);
}

Value f_slice(Interpreter& in, const Value& v, Args& a) {
  Params p("slice", a, {"slices", "fill_with"});
  int64_t slices = p.integer(0, -1, "slice");
  if (slices <= 0) throw Failure("slice(): slices must be a positive integer");
  in.check_items(static_cast<size_t>(slices));
  ValueList seq = in.iterate(v);
  int64_t length = static_cast<int64_t>(seq.size());
  int64_t per = length / slices, extra = length % slices, offset = 0;
  ValueList out;
  for (int64_t k = 0; k < slices; ++k) {
    int64_t start = offset + k * per;
    if (k < extra) ++offset;
    int64_t end = offset + (k + 1) * per;
    ValueList part(seq.begin() + start, seq.begin() + end);
    if (p.given(1) && k >= extra) part.push_back(p.get(1));
    out.push_back(Value::list(std::move(part)));
  }
  return Value::iterator(std::move(out));
}

Value f_sort(Interpreter& in, const Value& v, Args& a) {
  Params p("sort", a, {"reverse", "case_sensitive", "attribute"});
  bool reverse = p.flag(0, false), case_sensitive = p.flag(1, false);
  std::vector<std::vector<Value>> attrs;
  if (p.given(2)) {
    if (p.get(2).is_string()) {
      for (const std::string& part : text::split_sep(p.get(2).str(), ",", -1, false))
        attrs.push_back(attribute_parts(Value::string(part)));
    } else {
      attrs.push_back(attribute_parts(p.get(2)));
    }
  } else {
    attrs.emplace_back();
  }
  ValueList items = in.iterate(v);
  stable_sort_by(
      in, items,
      [&](const Value& item) {
        ValueList key;
        for (const auto& parts : attrs) {
          Value k = lookup_path(in, item, parts);
          key.push_back(case_sensitive ? k : ignore_case(k));
        }
        return Value::list(std::move(key));
      },
      reverse);
  return Value::list(std::move(items));
}

Value f_string(Interpreter&, const Value& v, Args& a) {
  Params p("string", a, {});
  return soft_str(v);
}

Value f_sum(Interpreter& in, const Value& v, Args& a) {
  Params p("sum", a, {"attribute", "start"});
  auto parts = p.given(0) ? attribute_parts(p.get(0)) : std::vector<Value>{};
  Value total = p.get_or(1, Value::integer(0));
  if (total.is_string()) throw Failure("sum() can't sum strings [use ''.join(seq) instead]");
  for (const Value& item : in.iterate(v)) total = in.binary("+", total, parts.empty() ? item : lookup_path(in, item, parts));
  return total;
}

Value f_title(Interpreter&, const Value& v, Args& a) {
  Params p("title", a, {});
  // jinja2 splits on runs of [-\s({\[<] and upper-cases the first character of every piece.
  std::u32string in = text::decode(py_str(v));
  auto is_sep = [](char32_t c) { return text::is_space(c) || c == '-' || c == '(' || c == '{' || c == '[' || c == '<'; };
  std::string out;
  size_t i = 0;
  while (i < in.size()) {
    size_t j = i;
    bool sep = is_sep(in[i]);
    while (j < in.size() && is_sep(in[j]) == sep) ++j;
    std::u32string piece = in.substr(i, j - i);
    out += text::upper(text::encode(piece.substr(0, 1)));
    out += text::lower(text::encode(piece.substr(1)));
    i = j;
  }
  return Value::string(std::move(out));
}

Value f_tojson(Interpreter& in, const Value& v, Args& a) {
  JsonOptions o;
  bool transformers = in.config().json_style == JsonStyle::Transformers;
  Params p("tojson", a, transformers ? std::initializer_list<const char*>{"indent", "ensure_ascii", "separators", "sort_keys"}
                                     : std::initializer_list<const char*>{"indent"});
  if (transformers) {
    o.sort_keys = p.flag(3, false);
    o.ensure_ascii = p.flag(1, false);
    o.html_safe = false;
    if (p.given(2)) {
      const Value& seps = p.get(2);
      if (!seps.is_sequence_like() || seps.items().size() != 2) throw Failure("tojson: separators must be a pair");
      o.item_sep = py_str(seps.items()[0]);
      o.key_sep = py_str(seps.items()[1]);
    }
  }
  if (p.given(0)) {
    const Value& ind = p.get(0);
    if (ind.is_string()) {
      o.indent_str = ind.str();
      o.has_indent_str = true;
    } else {
      o.indent = static_cast<int>(std::max<int64_t>(p.integer(0, 0, "tojson"), 0));
      if (o.indent > 1000) throw Failure("tojson: indent too large");
    }
    if (transformers && p.given(2)) {
      // an explicit separators pair also applies to the indented form
    } else {
      o.item_sep = ",";
    }
  }
  std::string out = to_json(v, o);
  in.check_size(out.size());
  return Value::string(std::move(out), !transformers);
}

Value f_trim(Interpreter&, const Value& v, Args& a) {
  Params p("trim", a, {"chars"});
  Value s = soft_str(v);
  std::string chars;
  bool has_chars = p.given(0);
  if (has_chars) chars = py_str(p.get(0));
  return Value::string(text::strip(s.str(), has_chars ? &chars : nullptr, true, true), s.is_safe());
}

Value f_truncate(Interpreter& in, const Value& v, Args& a) {
  Params p("truncate", a, {"length", "killwords", "end", "leeway"});
  int64_t length = p.integer(0, 255, "truncate");
  bool killwords = p.flag(1, false);
  std::string end = p.has(2) ? py_str(p.get(2)) : "...";
  int64_t leeway = p.given(3) ? p.integer(3, 5, "truncate") : 5;
  int64_t end_len = static_cast<int64_t>(text::length(end));
  if (length < end_len) throw Failure("expected length >= " + std::to_string(end_len) + ", got " + std::to_string(length));
  if (leeway < 0) throw Failure("expected leeway >= 0, got " + std::to_string(leeway));
  // Short values come back unchanged, whatever their type; only strings can be cut.
  if (static_cast<int64_t>(py_len(in, v)) <= length + leeway) return v;
  if (!v.is_string()) throw Failure("can only concatenate " + v.type_name() + " to str");
  const std::string& s = v.str();
  std::u32string cps = text::decode(s);
  std::string head = text::encode(std::u32string_view(cps).substr(0, static_cast<size_t>(length - end_len)));
  if (killwords) return Value::string(head + end);
  size_t sp = head.rfind(' ');
  if (sp != std::string::npos) head.resize(sp);
  return Value::string(head + end);
}

Value f_unique(Interpreter& in, const Value& v, Args& a) {
  Params p("unique", a, {"case_sensitive", "attribute"});
  bool case_sensitive = p.flag(0, false);
  auto parts = p.given(1) ? attribute_parts(p.get(1)) : std::vector<Value>{};
  ValueList seen, out;
  for (const Value& item : in.iterate(v)) {
    Value key = lookup_path(in, item, parts);
    if (!case_sensitive) key = ignore_case(key);
    if (key.is_list() || key.is_dict()) throw Failure("unhashable type: '" + key.type_name() + "'");
    bool dup = false;
    for (const Value& s : seen) dup = dup || equals(s, key);
    if (!dup) {
      seen.push_back(key);
      out.push_back(item);
    }
  }
  return Value::iterator(std::move(out));
}

Value f_wordcount(Interpreter&, const Value& v, Args& a) {
  Params p("wordcount", a, {});
  int64_t n = 0;
  bool in_word = false;
  for (char32_t c : text::decode(py_str(v))) {
    bool w = text::is_word(c);
    if (w && !in_word) ++n;
    in_word = w;
  }
  return Value::integer(n);
}

struct FilterEntry {
  std::string_view name;
  FilterFn fn;
};

constexpr FilterEntry kFilters[] = {
    {"abs", f_abs},           {"attr", f_attr},         {"batch", f_batch},
    {"capitalize", f_capitalize}, {"center", f_center}, {"count", f_length},
    {"d", f_default},         {"default", f_default},   {"dictsort", f_dictsort},
    {"e", f_escape},          {"escape", f_escape},     {"first", f_first},
    {"float", f_float},       {"forceescape", f_forceescape}, {"format", f_format},
    {"indent", f_indent},     {"int", f_int},           {"items", f_items},
    {"join", f_join},         {"last", f_last},         {"length", f_length},
    {"list", f_list},         {"lower", f_lower},       {"map", f_map},
    {"max", f_max},           {"min", f_min},           {"reject", f_reject},
    {"rejectattr", f_rejectattr}, {"replace", f_replace}, {"reverse", f_reverse},
    {"round", f_round},       {"safe", f_safe},         {"select", f_select},
    {"selectattr", f_selectattr}, {"slice", f_slice},   {"sort", f_sort},
    {"string", f_string},     {"sum", f_sum},           {"title", f_title},
    {"tojson", f_tojson},     {"trim", f_trim},         {"truncate", f_truncate},
    {"unique", f_unique},     {"upper", f_upper},       {"wordcount", f_wordcount},
};

}  // namespace

FilterFn find_filter(std::string_view name) {
  for (const auto& f : kFilters)
    if (f.name == name) return f.fn;
  return nullptr;
}

bool is_unsupported_filter(std::string_view name) {
  static constexpr std::string_view kLeftOut[] = {"filesizeformat", "groupby", "pprint", "random", "striptags",
                                                  "urlencode", "urlize", "wordwrap", "xmlattr"};
  for (auto n : kLeftOut)
    if (n == name) return true;
  return false;
}

}  // namespace edgeinfer::jinja
