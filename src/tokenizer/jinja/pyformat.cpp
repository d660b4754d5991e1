#include "tokenizer/jinja/pyformat.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "tokenizer/jinja/errors.h"
#include "tokenizer/jinja/text.h"

namespace edgeinfer::jinja {

namespace {

constexpr int kMaxDepth = 512;

void check_depth(int depth) {
  if (depth > kMaxDepth) throw Failure("maximum nesting depth exceeded while formatting a value");
}

void hex_escape(std::string& out, const char* prefix, unsigned value, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%s%0*x", prefix, digits, value);
  out += buf;
}

void repr_into(std::string& out, const Value& v, int depth);

void str_into(std::string& out, const Value& v, int depth) {
  check_depth(depth);
  using K = Value::Kind;
  switch (v.kind()) {
    case K::Undefined: return;
    case K::None: out += "None"; return;
    case K::Bool: out += v.as_bool() ? "True" : "False"; return;
    case K::Int: out += std::to_string(v.as_int()); return;
    case K::Float: out += float_repr(v.as_double()); return;
    case K::String: out += v.str(); return;
    case K::List:
    case K::Tuple: {
      bool tuple = v.is_tuple();
      out += tuple ? '(' : '[';
      const auto& items = v.items();
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += ", ";
        repr_into(out, items[i], depth + 1);
      }
      if (tuple && items.size() == 1) out += ',';
      out += tuple ? ')' : ']';
      return;
    }
    case K::Iterator: out += "<generator object>"; return;
    case K::Dict: {
      out += '{';
      bool first = true;
      for (const auto& [k, val] : v.dict().entries) {
        if (!first) out += ", ";
        first = false;
        repr_into(out, k, depth + 1);
        out += ": ";
        repr_into(out, val, depth + 1);
      }
      out += '}';
      return;
    }
    case K::Function: out += "<function " + v.function().name + ">"; return;
    case K::Object: out += v.object()->repr(); return;
  }
}

void repr_into(std::string& out, const Value& v, int depth) {
  check_depth(depth);
  switch (v.kind()) {
    case Value::Kind::Undefined: out += "Undefined"; return;
    case Value::Kind::String:
      if (v.is_safe()) {
        out += "Markup(" + string_repr(v.str()) + ")";
      } else {
        out += string_repr(v.str());
      }
      return;
    default: str_into(out, v, depth);
  }
}

void json_string(std::string& out, std::string_view s, bool ensure_ascii) {
  out += '"';
  for (char32_t c : text::decode(s)) {
    switch (c) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    if (c < 0x20 || (ensure_ascii && c >= 0x7F)) {
      if (c >= 0x10000) {
        char32_t u = c - 0x10000;
        hex_escape(out, "\\u", static_cast<unsigned>(0xD800 + (u >> 10)), 4);
        hex_escape(out, "\\u", static_cast<unsigned>(0xDC00 + (u & 0x3FF)), 4);
      } else {
        hex_escape(out, "\\u", static_cast<unsigned>(c), 4);
      }
    } else {
      text::append_utf8(out, c);
    }
  }
  out += '"';
}

std::string json_key(const Value& k) {
  switch (k.kind()) {
    case Value::Kind::String: return k.str();
    case Value::Kind::Bool: return k.as_bool() ? "true" : "false";
    case Value::Kind::None: return "null";
    case Value::Kind::Int: return std::to_string(k.as_int());
    case Value::Kind::Float: return float_repr(k.as_double());
    default: throw Failure("keys must be str, int, float, bool or None, not " + k.type_name());
  }
}

bool key_less(const Value& a, const Value& b) {
  if (a.is_string() && b.is_string()) return a.str() < b.str();
  if (a.is_number() && b.is_number()) return a.as_double() < b.as_double();
  throw Failure("'<' not supported between instances of '" + a.type_name() + "' and '" + b.type_name() + "'");
}

void json_into(std::string& out, const Value& v, const JsonOptions& o, int level) {
  check_depth(level);
  bool pretty = o.indent >= 0 || o.has_indent_str;
  auto newline = [&](int lvl) {
    out += '\n';
    for (int i = 0; i < lvl; ++i) {
      if (o.has_indent_str)
        out += o.indent_str;
      else
        out.append(static_cast<size_t>(std::max(o.indent, 0)), ' ');
    }
  };
  const std::string& item_sep = pretty ? std::string(",") : o.item_sep;
  switch (v.kind()) {
    case Value::Kind::None: out += "null"; return;
    case Value::Kind::Bool: out += v.as_bool() ? "true" : "false"; return;
    case Value::Kind::Int: out += std::to_string(v.as_int()); return;
    case Value::Kind::Float: {
      double d = v.as_double();
      if (std::isnan(d))
        out += "NaN";
      else if (std::isinf(d))
        out += d > 0 ? "Infinity" : "-Infinity";
      else
        out += float_repr(d);
      return;
    }
    case Value::Kind::String: json_string(out, v.str(), o.ensure_ascii); return;
    case Value::Kind::List:
    case Value::Kind::Tuple: {
      const auto& items = v.items();
      if (items.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += item_sep;
        if (pretty) newline(level + 1);
        json_into(out, items[i], o, level + 1);
      }
      if (pretty) newline(level);
      out += ']';
      return;
    }
    case Value::Kind::Dict: {
      const auto& entries = v.dict().entries;
      if (entries.empty()) {
        out += "{}";
        return;
      }
      std::vector<const std::pair<Value, Value>*> order;
      order.reserve(entries.size());
      for (const auto& e : entries) order.push_back(&e);
      if (o.sort_keys)
        std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) { return key_less(a->first, b->first); });
      out += '{';
      for (size_t i = 0; i < order.size(); ++i) {
        if (i) out += item_sep;
        if (pretty) newline(level + 1);
        json_string(out, json_key(order[i]->first), o.ensure_ascii);
        out += o.key_sep;
        json_into(out, order[i]->second, o, level + 1);
      }
      if (pretty) newline(level);
      out += '}';
      return;
    }
    default: throw Failure("Object of type " + v.type_name() + " is not JSON serializable");
  }
}

// ---- printf-style -------------------------------------------------------------------------

struct Spec {
  bool left = false, zero = false, plus = false, space = false, alt = false;
  int width = -1, precision = -1;
  char type = 's';
};

std::string pad(std::string body, const Spec& s, bool numeric) {
  long w = s.width;
  long len = static_cast<long>(text::length(body));
  if (w <= len) return body;
  size_t fill = static_cast<size_t>(w - len);
  if (s.left) return body + std::string(fill, ' ');
  if (s.zero && numeric) {
    size_t sign = (!body.empty() && (body[0] == '-' || body[0] == '+' || body[0] == ' ')) ? 1 : 0;
    if (body.size() > sign + 1 && body[sign] == '0' && (body[sign + 1] == 'x' || body[sign + 1] == 'X' || body[sign + 1] == 'o'))
      sign += 2;
    return body.substr(0, sign) + std::string(fill, '0') + body.substr(sign);
  }
  return std::string(fill, ' ') + body;
}

int64_t int_arg(const Value& v, char type) {
  if (v.is_int() || v.is_bool()) return v.as_int();
  if (v.is_float() && type != 'x' && type != 'X' && type != 'o' && type != 'c') {
    double d = v.as_double();
    if (!std::isfinite(d)) throw Failure("cannot convert float infinity or NaN to integer");
    return static_cast<int64_t>(std::trunc(d));
  }
  throw Failure(std::string("%") + type + " format: a number is required, not " + v.type_name());
}

double float_arg(const Value& v, char type) {
  if (v.is_number()) return v.as_double();
  throw Failure(std::string("%") + type + " format: a real number is required, not " + v.type_name());
}

std::string c_format(const Spec& s, char type, double d) {
  std::string f = "%";
  if (s.plus) f += '+';
  if (s.space) f += ' ';
  if (s.alt) f += '#';
  f += '.';
  f += std::to_string(s.precision < 0 ? 6 : s.precision);
  f += type;
  char buf[512];
  int n = std::snprintf(buf, sizeof buf, f.c_str(), d);
  if (n < 0 || n >= static_cast<int>(sizeof buf)) {
    std::string big(static_cast<size_t>(n > 0 ? n + 1 : 4096), '\0');
    n = std::snprintf(big.data(), big.size(), f.c_str(), d);
    big.resize(static_cast<size_t>(std::max(n, 0)));
    return big;
  }
  return std::string(buf, static_cast<size_t>(n));
}

std::string format_one(const Spec& s, const Value& arg, bool escape_args) {
  auto esc = [&](std::string x) { return (escape_args && !arg.is_safe()) ? html_escape(x) : x; };
  switch (s.type) {
    case 's':
    case 'r':
    case 'a': {
      std::string body = s.type == 's' ? py_str(arg) : py_repr(arg);
      if (s.precision >= 0) {
        std::u32string cps = text::decode(body);
        if (cps.size() > static_cast<size_t>(s.precision)) body = text::encode(cps.substr(0, static_cast<size_t>(s.precision)));
      }
      return pad(esc(body), s, false);
    }
    case 'd':
    case 'i':
    case 'u': {
      int64_t i = int_arg(arg, s.type);
      std::string digits = std::to_string(i < 0 ? -(i + 1) + 1ULL : static_cast<uint64_t>(i));
      if (s.precision >= 0 && digits.size() < static_cast<size_t>(s.precision))
        digits = std::string(static_cast<size_t>(s.precision) - digits.size(), '0') + digits;
      std::string sign = i < 0 ? "-" : s.plus ? "+" : s.space ? " " : "";
      return pad(sign + digits, s, true);
    }
    case 'x':
    case 'X':
    case 'o': {
      int64_t i = int_arg(arg, s.type);
      uint64_t mag = i < 0 ? static_cast<uint64_t>(-(i + 1)) + 1 : static_cast<uint64_t>(i);
      char buf[40];
      std::snprintf(buf, sizeof buf, s.type == 'o' ? "%llo" : s.type == 'x' ? "%llx" : "%llX",
                    static_cast<unsigned long long>(mag));
      std::string prefix = s.alt ? (s.type == 'o' ? "0o" : s.type == 'x' ? "0x" : "0X") : "";
      std::string sign = i < 0 ? "-" : s.plus ? "+" : s.space ? " " : "";
      return pad(sign + prefix + buf, s, true);
    }
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'g':
    case 'G': {
      double d = float_arg(arg, s.type);
      return pad(c_format(s, s.type, d), s, std::isfinite(d));
    }
    case 'c': {
      std::string body;
      if (arg.is_string() && text::length(arg.str()) == 1) {
        body = arg.str();
      } else if (arg.is_int()) {
        int64_t cp = arg.as_int();
        if (cp < 0 || cp > 0x10FFFF) throw Failure("%c arg not in range(0x110000)");
        text::append_utf8(body, static_cast<char32_t>(cp));
      } else {
        throw Failure("%c requires int or char");
      }
      return pad(esc(body), s, false);
    }
    default: throw Failure(std::string("unsupported format character '") + s.type + "'");
  }
}

}  // namespace

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  // sci = [-]D[.DDD]e(+|-)XX
  bool neg = sci[0] == '-';
  if (neg) sci.erase(0, 1);
  size_t epos = sci.find('e');
  std::string mant = sci.substr(0, epos);
  int exp = std::stoi(sci.substr(epos + 1));
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out = neg ? "-" : "";
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out += "0.";
      out.append(static_cast<size_t>(-exp - 1), '0');
      out += digits;
    } else {
      size_t int_len = static_cast<size_t>(exp) + 1;
      if (digits.size() <= int_len) {
        out += digits;
        out.append(int_len - digits.size(), '0');
        out += ".0";
      } else {
        out += digits.substr(0, int_len);
        out += '.';
        out += digits.substr(int_len);
      }
    }
  } else {
    out += digits[0];
    if (digits.size() > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += 'e';
    out += exp < 0 ? '-' : '+';
    int a = exp < 0 ? -exp : exp;
    if (a < 10) out += '0';
    out += std::to_string(a);
  }
  return out;
}

std::string string_repr(std::string_view s) {
  bool has_single = s.find('\'') != std::string_view::npos;
  bool has_double = s.find('"') != std::string_view::npos;
  char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  for (char32_t c : text::decode(s)) {
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (text::is_printable(c)) {
      text::append_utf8(out, c);
    } else if (c <= 0xFF) {
      hex_escape(out, "\\x", static_cast<unsigned>(c), 2);
    } else if (c <= 0xFFFF) {
      hex_escape(out, "\\u", static_cast<unsigned>(c), 4);
    } else {
      hex_escape(out, "\\U", static_cast<unsigned>(c), 8);
    }
  }
  out += quote;
  return out;
}

std::string py_str(const Value& v) {
  if (v.is_string()) return v.str();
  std::string out;
  str_into(out, v, 0);
  return out;
}

std::string py_repr(const Value& v) {
  std::string out;
  repr_into(out, v, 0);
  return out;
}

std::string to_json(const Value& v, const JsonOptions& opts) {
  std::string out;
  json_into(out, v, opts, 0);
  if (!opts.html_safe) return out;
  std::string safe;
  safe.reserve(out.size());
  for (char c : out) {
    switch (c) {
      case '<': safe += "\\u003c"; break;
      case '>': safe += "\\u003e"; break;
      case '&': safe += "\\u0026"; break;
      case '\'': safe += "\\u0027"; break;
      default: safe += c;
    }
  }
  return safe;
}

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '\'': out += "&#39;"; break;
      case '"': out += "&#34;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string percent_format(const std::string& fmt, const Value& args, bool escape_args) {
  std::vector<Value> positional;
  const Dict* mapping = nullptr;
  // Python treats any non-tuple, non-str argument with __getitem__ (dict, list, jinja2's
  // Undefined) as a mapping: surplus arguments are then not an error.
  const bool mapping_like = args.is_dict() || args.is_list() || args.is_undefined();
  if (args.is_tuple()) {
    positional = args.items();
  } else {
    positional.push_back(args);
    if (args.is_dict()) mapping = &args.dict();
  }
  size_t next = 0;
  bool used_mapping = false;
  std::string out;
  size_t i = 0, n = fmt.size();
  while (i < n) {
    char c = fmt[i];
    if (c != '%') {
      out += c;
      ++i;
      continue;
    }
    ++i;
    if (i >= n) throw Failure("incomplete format");
    if (fmt[i] == '%') {
      out += '%';
      ++i;
      continue;
    }
    const Value* arg = nullptr;
    if (fmt[i] == '(') {
      if (args.is_undefined()) throw Failure(args.str().empty() ? "value is undefined" : args.str());
      if (!mapping) throw Failure("format requires a mapping");
      size_t close = fmt.find(')', i);
      if (close == std::string::npos) throw Failure("incomplete format key");
      std::string key = fmt.substr(i + 1, close - i - 1);
      arg = mapping->find(std::string_view(key));
      if (!arg) throw Failure("KeyError: " + string_repr(key));
      used_mapping = true;
      i = close + 1;
    }
    Spec s;
    for (; i < n; ++i) {
      char f = fmt[i];
      if (f == '-')
        s.left = true;
      else if (f == '0')
        s.zero = true;
      else if (f == '+')
        s.plus = true;
      else if (f == ' ')
        s.space = true;
      else if (f == '#')
        s.alt = true;
      else
        break;
    }
    if (i < n && fmt[i] == '*') throw Failure("'*' width in format strings is not supported");
    while (i < n && fmt[i] >= '0' && fmt[i] <= '9') {
      s.width = std::max(s.width, 0) * 10 + (fmt[i] - '0');
      if (s.width > 100000) throw Failure("format width too large");
      ++i;
    }
    if (i < n && fmt[i] == '.') {
      ++i;
      s.precision = 0;
      while (i < n && fmt[i] >= '0' && fmt[i] <= '9') {
        s.precision = s.precision * 10 + (fmt[i] - '0');
        if (s.precision > 1000) throw Failure("format precision too large");
        ++i;
      }
    }
    while (i < n && (fmt[i] == 'l' || fmt[i] == 'h' || fmt[i] == 'L')) ++i;
    if (i >= n) throw Failure("incomplete format");
    s.type = fmt[i++];
    if (!arg) {
      if (next >= positional.size()) throw Failure("not enough arguments for format string");
      arg = &positional[next++];
    }
    out += format_one(s, *arg, escape_args);
  }
  if (!used_mapping && !mapping_like && next < positional.size())
    throw Failure("not all arguments converted during string formatting");
  return out;
}

namespace {

struct FormatSpec {
  char fill = ' ';
  char align = 0;
  char sign = '-';
  bool alt = false;
  int width = -1;
  char grouping = 0;
  int precision = -1;
  char type = 0;
};

FormatSpec parse_spec(const std::string& sp) {
  FormatSpec f;
  size_t i = 0, n = sp.size();
  auto is_align = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
  if (n >= 2 && is_align(sp[1])) {
    f.fill = sp[0];
    f.align = sp[1];
    i = 2;
  } else if (n >= 1 && is_align(sp[0])) {
    f.align = sp[0];
    i = 1;
  }
  if (i < n && (sp[i] == '+' || sp[i] == '-' || sp[i] == ' ')) f.sign = sp[i++];
  if (i < n && sp[i] == '#') {
    f.alt = true;
    ++i;
  }
  if (i < n && sp[i] == '0') {
    if (!f.align) {
      f.fill = '0';
      f.align = '=';
    }
    ++i;
  }
  while (i < n && sp[i] >= '0' && sp[i] <= '9') {
    f.width = std::max(f.width, 0) * 10 + (sp[i++] - '0');
    if (f.width > 100000) throw Failure("format width too large");
  }
  if (i < n && (sp[i] == ',' || sp[i] == '_')) f.grouping = sp[i++];
  if (i < n && sp[i] == '.') {
    ++i;
    f.precision = 0;
    while (i < n && sp[i] >= '0' && sp[i] <= '9') {
      f.precision = f.precision * 10 + (sp[i++] - '0');
      if (f.precision > 1000) throw Failure("format precision too large");
    }
  }
  if (i < n) f.type = sp[i++];
  if (i != n) throw Failure("Invalid format specifier '" + sp + "'");
  return f;
}

std::string group_digits(const std::string& digits, char sep) {
  std::string out;
  int cnt = 0;
  for (size_t k = digits.size(); k-- > 0;) {
    out += digits[k];
    if (++cnt % 3 == 0 && k > 0) out += sep;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::string apply_spec(const Value& v, const std::string& spec_text) {
  if (spec_text.empty()) return py_str(v);
  FormatSpec f = parse_spec(spec_text);
  std::string sign_str, body;
  bool numeric = false;
  if (v.is_string()) {
    if (f.type && f.type != 's') throw Failure(std::string("Unknown format code '") + f.type + "' for object of type 'str'");
    body = v.str();
    if (f.precision >= 0) {
      auto cps = text::decode(body);
      if (cps.size() > static_cast<size_t>(f.precision)) body = text::encode(cps.substr(0, static_cast<size_t>(f.precision)));
    }
    if (!f.align) f.align = '<';
  } else if ((v.is_int() || v.is_bool()) && f.type != 'e' && f.type != 'E' && f.type != 'f' && f.type != 'F' &&
             f.type != 'g' && f.type != 'G' && f.type != '%') {
    numeric = true;
    int64_t i = v.as_int();
    uint64_t mag = i < 0 ? static_cast<uint64_t>(-(i + 1)) + 1 : static_cast<uint64_t>(i);
    char buf[80];
    std::string prefix;
    switch (f.type) {
      case 0:
      case 'd':
      case 'n': std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(mag)); break;
      case 'x': std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(mag)); prefix = "0x"; break;
      case 'X': std::snprintf(buf, sizeof buf, "%llX", static_cast<unsigned long long>(mag)); prefix = "0X"; break;
      case 'o': std::snprintf(buf, sizeof buf, "%llo", static_cast<unsigned long long>(mag)); prefix = "0o"; break;
      case 'b': {
        std::string bits;
        for (uint64_t m = mag; m; m >>= 1) bits += static_cast<char>('0' + (m & 1));
        if (bits.empty()) bits = "0";
        std::reverse(bits.begin(), bits.end());
        std::snprintf(buf, sizeof buf, "%s", bits.c_str());
        prefix = "0b";
        break;
      }
      default: throw Failure(std::string("Unknown format code '") + f.type + "' for object of type 'int'");
    }
    body = buf;
    if (f.grouping) body = group_digits(body, f.grouping);
    if (f.alt) body = prefix + body;
    sign_str = i < 0 ? "-" : f.sign == '+' ? "+" : f.sign == ' ' ? " " : "";
  } else if (v.is_number()) {
    numeric = true;
    double d = v.as_double();
    char type = f.type;
    bool percent = type == '%';
    if (percent) d *= 100.0;
    std::string cfmt = "%";
    if (f.alt) cfmt += '#';
    int prec = f.precision < 0 ? 6 : f.precision;
    if (type == 0) {
      if (f.precision < 0) {
        body = float_repr(std::fabs(d));
      } else {
        char buf[512];
        std::snprintf(buf, sizeof buf, "%.*g", std::max(prec, 1), std::fabs(d));
        body = buf;
        if (body.find_first_of(".en") == std::string::npos) body += ".0";
      }
    } else {
      char ct = percent ? 'f' : (type == 'n' ? 'g' : type);
      cfmt += ".*";
      cfmt += ct;
      char buf[512];
      std::snprintf(buf, sizeof buf, cfmt.c_str(), prec, std::fabs(d));
      body = buf;
      if (percent) body += '%';
    }
    if (f.grouping) {
      size_t end = body.find_first_not_of("0123456789");
      if (end == std::string::npos) end = body.size();
      body = group_digits(body.substr(0, end), f.grouping) + body.substr(end);
    }
    sign_str = std::signbit(d) && !std::isnan(d) ? "-" : f.sign == '+' ? "+" : f.sign == ' ' ? " " : "";
  } else {
    throw Failure("unsupported format string passed to " + v.type_name() + ".__format__");
  }
  if (!f.align) f.align = numeric ? '>' : '<';
  long len = static_cast<long>(text::length(sign_str) + text::length(body));
  if (f.width <= len) return sign_str + body;
  size_t fill = static_cast<size_t>(f.width - len);
  std::string fill_s(fill, f.fill);
  switch (f.align) {
    case '<': return sign_str + body + fill_s;
    case '>': return fill_s + sign_str + body;
    case '=': return sign_str + fill_s + body;
    default: {
      size_t l = fill / 2;
      return std::string(l, f.fill) + sign_str + body + std::string(fill - l, f.fill);
    }
  }
}

}  // namespace

std::string str_format(const std::string& fmt, const CallArgs& args, bool escape_args) {
  std::string out;
  size_t i = 0, n = fmt.size();
  size_t auto_index = 0;
  while (i < n) {
    char c = fmt[i];
    if (c == '}') {
      if (i + 1 < n && fmt[i + 1] == '}') {
        out += '}';
        i += 2;
        continue;
      }
      throw Failure("Single '}' encountered in format string");
    }
    if (c != '{') {
      out += c;
      ++i;
      continue;
    }
    if (i + 1 < n && fmt[i + 1] == '{') {
      out += '{';
      i += 2;
      continue;
    }
    size_t close = fmt.find('}', i);
    if (close == std::string::npos) throw Failure("Single '{' encountered in format string");
    std::string field = fmt.substr(i + 1, close - i - 1);
    i = close + 1;
    std::string spec, conv;
    size_t colon = field.find(':');
    if (colon != std::string::npos) {
      spec = field.substr(colon + 1);
      field.resize(colon);
    }
    size_t bang = field.find('!');
    if (bang != std::string::npos) {
      conv = field.substr(bang + 1);
      field.resize(bang);
    }
    if (field.find_first_of(".[") != std::string::npos)
      throw Failure("attribute or index access in str.format fields is not supported");
    const Value* arg = nullptr;
    if (field.empty()) {
      if (auto_index >= args.positional.size()) throw Failure("Replacement index " + std::to_string(auto_index) + " out of range for positional args tuple");
      arg = &args.positional[auto_index++];
    } else if (std::all_of(field.begin(), field.end(), [](char d) { return d >= '0' && d <= '9'; })) {
      size_t idx = std::stoul(field);
      if (idx >= args.positional.size()) throw Failure("Replacement index " + field + " out of range for positional args tuple");
      arg = &args.positional[idx];
    } else {
      for (const auto& [k, v] : args.keyword)
        if (k == field) arg = &v;
      if (!arg) throw Failure("KeyError: " + string_repr(field));
    }
    Value val = *arg;
    if (conv == "r" || conv == "a")
      val = Value::string(py_repr(*arg));
    else if (conv == "s")
      val = Value::string(py_str(*arg));
    else if (!conv.empty())
      throw Failure("Unknown conversion specifier " + conv);
    std::string piece = apply_spec(val, spec);
    out += (escape_args && !arg->is_safe()) ? html_escape(piece) : piece;
  }
  return out;
}

}  // namespace edgeinfer::jinja
