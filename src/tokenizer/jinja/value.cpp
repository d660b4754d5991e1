#include "tokenizer/jinja/value.h"

#include <cmath>
#include <limits>

#include "tokenizer/jinja/errors.h"
#include "tokenizer/jinja/pyformat.h"
#include "util/error.h"

namespace edgeinfer::jinja {

bool Object::set_attribute(std::string_view, const Value&) { return false; }
std::string Object::repr() const { return "<" + type_name() + " object>"; }

Value Value::undefined(std::string hint) {
  Value v;
  if (!hint.empty()) v.ptr_ = std::make_shared<const std::string>(std::move(hint));
  return v;
}
Value Value::none() {
  Value v;
  v.kind_ = Kind::None;
  return v;
}
Value Value::boolean(bool b) {
  Value v;
  v.kind_ = Kind::Bool;
  v.b_ = b;
  return v;
}
Value Value::integer(int64_t i) {
  Value v;
  v.kind_ = Kind::Int;
  v.i_ = i;
  return v;
}
Value Value::floating(double d) {
  Value v;
  v.kind_ = Kind::Float;
  v.f_ = d;
  return v;
}
Value Value::string(std::string s, bool safe) {
  Value v;
  v.kind_ = Kind::String;
  v.safe_ = safe;
  v.ptr_ = std::make_shared<const std::string>(std::move(s));
  return v;
}
Value Value::list(ValueList items) {
  Value v;
  v.kind_ = Kind::List;
  v.ptr_ = std::make_shared<const ValueList>(std::move(items));
  return v;
}
Value Value::tuple(ValueList items) {
  Value v = list(std::move(items));
  v.kind_ = Kind::Tuple;
  return v;
}
Value Value::iterator(ValueList items) {
  Value v = list(std::move(items));
  v.kind_ = Kind::Iterator;
  return v;
}
Value Value::dict(Dict d) {
  Value v;
  v.kind_ = Kind::Dict;
  v.ptr_ = std::make_shared<const Dict>(std::move(d));
  return v;
}
Value Value::function(std::string name, std::function<Value(Interpreter&, CallArgs&)> fn) {
  Value v;
  v.kind_ = Kind::Function;
  v.ptr_ = std::make_shared<const Function>(Function{std::move(name), std::move(fn)});
  return v;
}
Value Value::object(std::shared_ptr<Object> obj) {
  Value v;
  v.kind_ = Kind::Object;
  v.ptr_ = std::make_shared<const std::shared_ptr<Object>>(std::move(obj));
  return v;
}

double Value::as_double() const {
  switch (kind_) {
    case Kind::Bool: return b_ ? 1.0 : 0.0;
    case Kind::Int: return static_cast<double>(i_);
    default: return f_;
  }
}

const std::string& Value::str() const {
  static const std::string kEmpty;
  if (!ptr_) return kEmpty;
  return *static_cast<const std::string*>(ptr_.get());
}
const ValueList& Value::items() const { return *static_cast<const ValueList*>(ptr_.get()); }
const Dict& Value::dict() const { return *static_cast<const Dict*>(ptr_.get()); }
const Function& Value::function() const { return *static_cast<const Function*>(ptr_.get()); }
const std::shared_ptr<Object>& Value::object() const {
  return *static_cast<const std::shared_ptr<Object>*>(ptr_.get());
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::Undefined:
    case Kind::None: return false;
    case Kind::Bool: return b_;
    case Kind::Int: return i_ != 0;
    case Kind::Float: return f_ != 0.0;
    case Kind::String: return !str().empty();
    case Kind::List:
    case Kind::Tuple: return !items().empty();
    case Kind::Iterator: return true;  // a Python generator object is always true
    case Kind::Dict: return !dict().entries.empty();
    case Kind::Function:
    case Kind::Object: return true;
  }
  return false;
}

std::string Value::type_name() const {
  switch (kind_) {
    case Kind::Undefined: return "Undefined";
    case Kind::None: return "NoneType";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return safe_ ? "Markup" : "str";
    case Kind::List: return "list";
    case Kind::Tuple: return "tuple";
    case Kind::Iterator: return "generator";
    case Kind::Dict: return "dict";
    case Kind::Function: return "function";
    case Kind::Object: return object()->type_name();
  }
  return "object";
}

const Value* Dict::find(const Value& key) const {
  for (const auto& [k, v] : entries)
    if (equals(k, key)) return &v;
  return nullptr;
}

const Value* Dict::find(std::string_view key) const {
  for (const auto& [k, v] : entries)
    if (k.is_string() && k.str() == key) return &v;
  return nullptr;
}

void Dict::set(const Value& key, Value v) {
  for (auto& [k, old] : entries) {
    if (equals(k, key)) {
      old = std::move(v);
      return;
    }
  }
  entries.emplace_back(key, std::move(v));
}

bool equals(const Value& a, const Value& b, int depth) {
  using K = Value::Kind;
  if (depth > 512) throw Failure("maximum nesting depth exceeded while comparing values");
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case K::Undefined:
    case K::None: return true;
    case K::String: return a.str() == b.str();
    case K::List:
    case K::Tuple: {
      const auto& x = a.items();
      const auto& y = b.items();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i)
        if (!equals(x[i], y[i], depth + 1)) return false;
      return true;
    }
    case K::Dict: {
      const auto& x = a.dict().entries;
      const auto& y = b.dict();
      if (x.size() != y.entries.size()) return false;
      for (const auto& [k, v] : x) {
        const Value* other = y.find(k);
        if (!other || !equals(v, *other, depth + 1)) return false;
      }
      return true;
    }
    default: return a.identity() == b.identity();
  }
}

namespace {

template <class Json>
Value convert(const Json& j, int depth, int max_depth) {
  if (depth > max_depth) throw Error("template input: JSON nested deeper than " + std::to_string(max_depth) + " levels");
  switch (j.type()) {
    case nlohmann::json::value_t::null: return Value::none();
    case nlohmann::json::value_t::boolean: return Value::boolean(j.template get<bool>());
    case nlohmann::json::value_t::number_integer: return Value::integer(j.template get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      uint64_t u = j.template get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        throw Error("template input: integer " + std::to_string(u) + " is too large");
      return Value::integer(static_cast<int64_t>(u));
    }
    case nlohmann::json::value_t::number_float: return Value::floating(j.template get<double>());
    case nlohmann::json::value_t::string: return Value::string(j.template get<std::string>());
    case nlohmann::json::value_t::array: {
      ValueList items;
      items.reserve(j.size());
      for (const auto& e : j) items.push_back(convert(e, depth + 1, max_depth));
      return Value::list(std::move(items));
    }
    case nlohmann::json::value_t::object: {
      Dict d;
      d.entries.reserve(j.size());
      for (auto it = j.begin(); it != j.end(); ++it)
        d.entries.emplace_back(Value::string(it.key()), convert(it.value(), depth + 1, max_depth));
      return Value::dict(std::move(d));
    }
    case nlohmann::json::value_t::binary: throw Error("template input: binary JSON values are not supported");
    case nlohmann::json::value_t::discarded: break;
  }
  return Value::none();
}

}  // namespace

Value from_json(const nlohmann::json& j, int max_depth) { return convert(j, 0, max_depth); }
Value from_json(const nlohmann::ordered_json& j, int max_depth) { return convert(j, 0, max_depth); }

}  // namespace edgeinfer::jinja
