#include "gguf/gguf_value.h"

#include <charconv>
#include <limits>
#include <string>

#include "util/error.h"

namespace edgeinfer {

namespace {

bool is_unsigned_type(GgufValueType t) {
  return t == GgufValueType::UINT8 || t == GgufValueType::UINT16 || t == GgufValueType::UINT32 ||
         t == GgufValueType::UINT64;
}

bool is_signed_type(GgufValueType t) {
  return t == GgufValueType::INT8 || t == GgufValueType::INT16 || t == GgufValueType::INT32 ||
         t == GgufValueType::INT64;
}

bool is_float_type(GgufValueType t) {
  return t == GgufValueType::FLOAT32 || t == GgufValueType::FLOAT64;
}

// Largest value an unsigned GGUF integer type holds.
uint64_t unsigned_max(GgufValueType t) {
  switch (t) {
    case GgufValueType::UINT8: return std::numeric_limits<uint8_t>::max();
    case GgufValueType::UINT16: return std::numeric_limits<uint16_t>::max();
    case GgufValueType::UINT32: return std::numeric_limits<uint32_t>::max();
    default: return std::numeric_limits<uint64_t>::max();
  }
}

// Range [min, max] of a signed GGUF integer type.
std::pair<int64_t, int64_t> signed_range(GgufValueType t) {
  switch (t) {
    case GgufValueType::INT8: return {std::numeric_limits<int8_t>::min(), std::numeric_limits<int8_t>::max()};
    case GgufValueType::INT16:
      return {std::numeric_limits<int16_t>::min(), std::numeric_limits<int16_t>::max()};
    case GgufValueType::INT32:
      return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    default: return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  }
}

std::string type_label(GgufValueType t) { return std::string(gguf_value_type_name(t)); }

// What a value is, for "expected ..., got ..." messages: "uint32", "array of string".
std::string kind_label(const GgufValue& v) {
  if (v.is_array()) return "array of " + type_label(v.array_type());
  return type_label(v.type());
}

// Converts an integer to the canonical storage of type t (uint64 for unsigned types, int64 for
// signed ones), checking that it fits the type's width.
GgufValue::Storage int_storage(GgufValueType t, bool negative, uint64_t magnitude_or_value,
                               int64_t signed_value) {
  if (is_unsigned_type(t)) {
    if (negative) throw Error("value " + std::to_string(signed_value) + " out of range for " + type_label(t));
    if (magnitude_or_value > unsigned_max(t))
      throw Error("value " + std::to_string(magnitude_or_value) + " out of range for " + type_label(t));
    return magnitude_or_value;
  }
  if (is_signed_type(t)) {
    auto [lo, hi] = signed_range(t);
    if (!negative && magnitude_or_value > static_cast<uint64_t>(hi))
      throw Error("value " + std::to_string(magnitude_or_value) + " out of range for " + type_label(t));
    if (negative && (signed_value < lo || signed_value > hi))
      throw Error("value " + std::to_string(signed_value) + " out of range for " + type_label(t));
    return negative ? signed_value : static_cast<int64_t>(magnitude_or_value);
  }
  throw Error("type " + type_label(t) + " is not an integer type");
}

std::string format_double(double v, bool is_f32) {
  char buf[64];
  std::to_chars_result r = is_f32 ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(v))
                                  : std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// Quoted, with control characters escaped and long strings shortened (display only).
std::string quote(const std::string& s, size_t max_chars = 80) {
  std::string out = "\"";
  size_t n = s.size() < max_chars ? s.size() : max_chars;
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += "\"";
  if (n < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

}  // namespace

std::string_view gguf_value_type_name(GgufValueType t) {
  switch (t) {
    case GgufValueType::UINT8: return "uint8";
    case GgufValueType::INT8: return "int8";
    case GgufValueType::UINT16: return "uint16";
    case GgufValueType::INT16: return "int16";
    case GgufValueType::UINT32: return "uint32";
    case GgufValueType::INT32: return "int32";
    case GgufValueType::FLOAT32: return "float32";
    case GgufValueType::BOOL: return "bool";
    case GgufValueType::STRING: return "string";
    case GgufValueType::ARRAY: return "array";
    case GgufValueType::UINT64: return "uint64";
    case GgufValueType::INT64: return "int64";
    case GgufValueType::FLOAT64: return "float64";
  }
  return "invalid";
}

bool gguf_value_type_is_integer(GgufValueType t) { return is_unsigned_type(t) || is_signed_type(t); }

// --- construction ------------------------------------------------------------------------------

GgufValue GgufValue::from_uint(GgufValueType t, uint64_t v) {
  return GgufValue(t, GgufValueType::UINT8, int_storage(t, false, v, 0));
}

GgufValue GgufValue::from_int(GgufValueType t, int64_t v) {
  bool neg = v < 0;
  return GgufValue(t, GgufValueType::UINT8, int_storage(t, neg, neg ? 0 : static_cast<uint64_t>(v), v));
}

GgufValue GgufValue::from_float(GgufValueType t, double v) {
  if (!is_float_type(t)) throw Error("type " + type_label(t) + " is not a float type");
  // Held exactly as the file will hold it, so a written-then-read value compares equal.
  if (t == GgufValueType::FLOAT32) v = static_cast<double>(static_cast<float>(v));
  return GgufValue(t, GgufValueType::UINT8, v);
}

GgufValue GgufValue::from_bool(bool v) { return GgufValue(GgufValueType::BOOL, GgufValueType::UINT8, v); }

GgufValue GgufValue::from_string(std::string v) {
  return GgufValue(GgufValueType::STRING, GgufValueType::UINT8, std::move(v));
}

GgufValue GgufValue::from_string_array(std::vector<std::string> v) {
  return GgufValue(GgufValueType::ARRAY, GgufValueType::STRING, std::move(v));
}

GgufValue GgufValue::from_int_array(GgufValueType elem, std::vector<int64_t> v) {
  if (is_signed_type(elem)) {
    auto [lo, hi] = signed_range(elem);
    for (int64_t x : v)
      if (x < lo || x > hi) throw Error("value " + std::to_string(x) + " out of range for " + type_label(elem));
    return GgufValue(GgufValueType::ARRAY, elem, std::move(v));
  }
  if (is_unsigned_type(elem)) {
    std::vector<uint64_t> u;
    u.reserve(v.size());
    for (int64_t x : v) u.push_back(std::get<uint64_t>(int_storage(elem, x < 0, x < 0 ? 0 : static_cast<uint64_t>(x), x)));
    return GgufValue(GgufValueType::ARRAY, elem, std::move(u));
  }
  throw Error("type " + type_label(elem) + " is not an integer type");
}

GgufValue GgufValue::from_uint_array(GgufValueType elem, std::vector<uint64_t> v) {
  if (is_unsigned_type(elem)) {
    uint64_t hi = unsigned_max(elem);
    for (uint64_t x : v)
      if (x > hi) throw Error("value " + std::to_string(x) + " out of range for " + type_label(elem));
    return GgufValue(GgufValueType::ARRAY, elem, std::move(v));
  }
  if (is_signed_type(elem)) {
    std::vector<int64_t> s;
    s.reserve(v.size());
    for (uint64_t x : v) s.push_back(std::get<int64_t>(int_storage(elem, false, x, 0)));
    return GgufValue(GgufValueType::ARRAY, elem, std::move(s));
  }
  throw Error("type " + type_label(elem) + " is not an integer type");
}

GgufValue GgufValue::from_float_array(GgufValueType elem, std::vector<double> v) {
  if (!is_float_type(elem)) throw Error("type " + type_label(elem) + " is not a float type");
  if (elem == GgufValueType::FLOAT32)
    for (double& x : v) x = static_cast<double>(static_cast<float>(x));
  return GgufValue(GgufValueType::ARRAY, elem, std::move(v));
}

GgufValue GgufValue::from_bool_array(std::vector<uint8_t> v) {
  for (uint8_t& b : v) b = b ? 1 : 0;
  return GgufValue(GgufValueType::ARRAY, GgufValueType::BOOL, std::move(v));
}

GgufValue GgufValue::from_nested_array(GgufValueType elem, Array v) {
  if (elem != GgufValueType::ARRAY)
    throw Error("nested array: element type must be array, got " + type_label(elem));
  for (const GgufValue& x : v)
    if (!x.is_array()) throw Error("nested array: element is " + kind_label(x) + ", not an array");
  return GgufValue(GgufValueType::ARRAY, GgufValueType::ARRAY, std::move(v));
}

// --- scalar access -----------------------------------------------------------------------------

int64_t GgufValue::as_int() const {
  if (const auto* s = std::get_if<int64_t>(&storage_); s && is_signed_type(type_)) return *s;
  if (const auto* u = std::get_if<uint64_t>(&storage_); u && is_unsigned_type(type_)) {
    if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      throw Error("value " + std::to_string(*u) + " out of range");
    return static_cast<int64_t>(*u);
  }
  throw Error("expected an integer, got " + kind_label(*this));
}

uint64_t GgufValue::as_uint() const {
  if (const auto* u = std::get_if<uint64_t>(&storage_); u && is_unsigned_type(type_)) return *u;
  if (const auto* s = std::get_if<int64_t>(&storage_); s && is_signed_type(type_)) {
    if (*s < 0) throw Error("value " + std::to_string(*s) + " out of range (negative)");
    return static_cast<uint64_t>(*s);
  }
  throw Error("expected an unsigned integer, got " + kind_label(*this));
}

double GgufValue::as_float() const {
  if (const auto* d = std::get_if<double>(&storage_); d && is_float_type(type_)) return *d;
  if (const auto* s = std::get_if<int64_t>(&storage_); s && is_signed_type(type_)) return static_cast<double>(*s);
  if (const auto* u = std::get_if<uint64_t>(&storage_); u && is_unsigned_type(type_))
    return static_cast<double>(*u);
  throw Error("expected a number, got " + kind_label(*this));
}

bool GgufValue::as_bool() const {
  if (const auto* b = std::get_if<bool>(&storage_); b && type_ == GgufValueType::BOOL) return *b;
  throw Error("expected a bool, got " + kind_label(*this));
}

const std::string& GgufValue::as_string() const {
  if (const auto* s = std::get_if<std::string>(&storage_); s && type_ == GgufValueType::STRING) return *s;
  throw Error("expected a string, got " + kind_label(*this));
}

// --- array access ------------------------------------------------------------------------------

size_t GgufValue::array_size() const {
  if (!is_array()) throw Error("expected an array, got " + kind_label(*this));
  return std::visit(
      [](const auto& x) -> size_t {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::vector<uint64_t>> || std::is_same_v<T, std::vector<int64_t>> ||
                      std::is_same_v<T, std::vector<double>> || std::is_same_v<T, std::vector<uint8_t>> ||
                      std::is_same_v<T, std::vector<std::string>> || std::is_same_v<T, Array>) {
          return x.size();
        } else {
          throw Error("array value holds scalar storage");
        }
      },
      storage_);
}

const std::vector<std::string>& GgufValue::as_string_array() const {
  if (is_array() && array_type_ == GgufValueType::STRING)
    if (const auto* v = std::get_if<std::vector<std::string>>(&storage_)) return *v;
  throw Error("expected an array of string, got " + kind_label(*this));
}

std::vector<int64_t> GgufValue::as_int_array() const {
  if (is_array() && is_signed_type(array_type_))
    if (const auto* v = std::get_if<std::vector<int64_t>>(&storage_)) return *v;
  if (is_array() && is_unsigned_type(array_type_)) {
    if (const auto* v = std::get_if<std::vector<uint64_t>>(&storage_)) {
      std::vector<int64_t> out;
      out.reserve(v->size());
      for (uint64_t x : *v) {
        if (x > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
          throw Error("array element " + std::to_string(x) + " out of range");
        out.push_back(static_cast<int64_t>(x));
      }
      return out;
    }
  }
  throw Error("expected an array of integers, got " + kind_label(*this));
}

std::vector<float> GgufValue::as_float_array() const {
  if (is_array()) {
    if (const auto* d = std::get_if<std::vector<double>>(&storage_); d && is_float_type(array_type_))
      return std::vector<float>(d->begin(), d->end());
    if (const auto* s = std::get_if<std::vector<int64_t>>(&storage_); s && is_signed_type(array_type_)) {
      std::vector<float> out;
      out.reserve(s->size());
      for (int64_t x : *s) out.push_back(static_cast<float>(x));
      return out;
    }
    if (const auto* u = std::get_if<std::vector<uint64_t>>(&storage_); u && is_unsigned_type(array_type_)) {
      std::vector<float> out;
      out.reserve(u->size());
      for (uint64_t x : *u) out.push_back(static_cast<float>(x));
      return out;
    }
  }
  throw Error("expected an array of numbers, got " + kind_label(*this));
}

const GgufValue::Array& GgufValue::as_nested_array() const {
  if (is_array() && array_type_ == GgufValueType::ARRAY)
    if (const auto* v = std::get_if<Array>(&storage_)) return *v;
  throw Error("expected an array of arrays, got " + kind_label(*this));
}

// --- display -----------------------------------------------------------------------------------

std::string GgufValue::to_display_string(size_t max_items) const {
  if (!is_array()) {
    return std::visit(
        [&](const auto& x) -> std::string {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, uint64_t> || std::is_same_v<T, int64_t>) {
            return std::to_string(x);
          } else if constexpr (std::is_same_v<T, double>) {
            return format_double(x, type_ == GgufValueType::FLOAT32);
          } else if constexpr (std::is_same_v<T, bool>) {
            return x ? "true" : "false";
          } else if constexpr (std::is_same_v<T, std::string>) {
            return quote(x);
          } else {
            return "<invalid scalar>";
          }
        },
        storage_);
  }
  const bool f32 = array_type_ == GgufValueType::FLOAT32;
  std::string items;
  size_t n = 0;
  size_t shown = 0;
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::vector<uint64_t>> || std::is_same_v<T, std::vector<int64_t>> ||
                      std::is_same_v<T, std::vector<double>> || std::is_same_v<T, std::vector<uint8_t>> ||
                      std::is_same_v<T, std::vector<std::string>> || std::is_same_v<T, Array>) {
          n = v.size();
          for (shown = 0; shown < n && shown < max_items; ++shown) {
            if (shown) items += ", ";
            const auto& x = v[shown];
            using E = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<E, double>) {
              items += format_double(x, f32);
            } else if constexpr (std::is_same_v<E, uint8_t>) {
              items += x ? "true" : "false";
            } else if constexpr (std::is_same_v<E, std::string>) {
              items += quote(x, 40);
            } else if constexpr (std::is_same_v<E, GgufValue>) {
              items += x.to_display_string(max_items);
            } else {
              items += std::to_string(x);
            }
          }
        } else {
          items = "<invalid array>";
        }
      },
      storage_);
  std::string out = "[";
  if (shown < n) {
    // Abbreviated: "[string × 512] ["<unk>", "<s>", ...]"
    out.append(gguf_value_type_name(array_type_));
    out.append(" \u00d7 ");
    out.append(std::to_string(n));
    out.append("] [");
  }
  out.append(items);
  if (shown < n) out.append(shown ? ", ..." : "...");
  out.append("]");
  return out;
}

}  // namespace edgeinfer
