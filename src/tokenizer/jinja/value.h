#pragma once
// The values a template computes with, modelled on the Python objects jinja2 sees: None,
// bool, int, float, str (optionally markupsafe.Markup), list, tuple, dict (insertion ordered),
// one-shot iterators (what jinja2's map/select/items filters return), callables, host objects
// (loop, namespace) and jinja2's default Undefined. Containers are immutable once built and
// shared by pointer, so copying a Value is cheap.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace edgeinfer::jinja {

class Value;
class Interpreter;
using ValueList = std::vector<Value>;

struct Dict;

// Positional and keyword arguments of one call.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

// A callable: macro, global function or bound method.
struct Function {
  std::string name;
  std::function<Value(Interpreter&, CallArgs&)> call;
};

// Host object with attributes (loop context, namespace, joiner, ...).
class Object {
 public:
  virtual ~Object() = default;
  virtual std::string type_name() const = 0;
  // The attribute, or nullopt when the object has none of that name.
  virtual std::optional<Value> attribute(std::string_view name) const = 0;
  // Attribute assignment (`{% set ns.x = ... %}`); false when the object does not allow it.
  virtual bool set_attribute(std::string_view name, const Value& v);
  virtual std::string repr() const;
};

class Value {
 public:
  enum class Kind { Undefined, None, Bool, Int, Float, String, List, Tuple, Iterator, Dict, Function, Object };

  Value() = default;  // Undefined
  static Value undefined(std::string hint = {});
  static Value none();
  static Value boolean(bool b);
  static Value integer(int64_t i);
  static Value floating(double d);
  static Value string(std::string s, bool safe = false);
  static Value list(ValueList items);
  static Value tuple(ValueList items);
  static Value iterator(ValueList items);
  static Value dict(Dict d);
  static Value function(std::string name, std::function<Value(Interpreter&, CallArgs&)> fn);
  static Value object(std::shared_ptr<Object> obj);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::Undefined; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_int() const { return kind_ == Kind::Int; }
  bool is_float() const { return kind_ == Kind::Float; }
  bool is_number() const { return kind_ == Kind::Int || kind_ == Kind::Float || kind_ == Kind::Bool; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_safe() const { return kind_ == Kind::String && safe_; }
  bool is_list() const { return kind_ == Kind::List; }
  bool is_tuple() const { return kind_ == Kind::Tuple; }
  bool is_iterator() const { return kind_ == Kind::Iterator; }
  bool is_sequence_like() const { return kind_ == Kind::List || kind_ == Kind::Tuple || kind_ == Kind::Iterator; }
  bool is_dict() const { return kind_ == Kind::Dict; }
  bool is_function() const { return kind_ == Kind::Function; }
  bool is_object() const { return kind_ == Kind::Object; }

  bool as_bool() const { return b_; }
  int64_t as_int() const { return kind_ == Kind::Bool ? (b_ ? 1 : 0) : i_; }  // Int or Bool
  double as_double() const;                                                  // any number
  const std::string& str() const;                                            // String; Undefined: hint
  const ValueList& items() const;                                            // List/Tuple/Iterator
  const Dict& dict() const;
  const Function& function() const;
  const std::shared_ptr<Object>& object() const;
  const void* identity() const { return ptr_.get(); }

  // Python truthiness.
  bool truthy() const;
  // Python's type name, for error messages ("str", "list", "dict object", ...).
  std::string type_name() const;

 private:
  Kind kind_ = Kind::Undefined;
  bool safe_ = false;
  bool b_ = false;
  int64_t i_ = 0;
  double f_ = 0.0;
  std::shared_ptr<const void> ptr_;
};

// dict with insertion order. Keys are compared with Python equality; lookups are linear,
// which suits the handful of keys a chat message or tool schema has.
struct Dict {
  std::vector<std::pair<Value, Value>> entries;
  const Value* find(const Value& key) const;
  const Value* find(std::string_view key) const;
  void set(const Value& key, Value v);
};

// Python `==` (never throws); `depth` guards self-nesting values.
bool equals(const Value& a, const Value& b, int depth = 0);

// Converts JSON (plain or insertion-ordered) into template values. Throws Error past
// `max_depth` levels of nesting or on integers Python would hold but int64 cannot.
Value from_json(const nlohmann::json& j, int max_depth = 256);
Value from_json(const nlohmann::ordered_json& j, int max_depth = 256);

}  // namespace edgeinfer::jinja
