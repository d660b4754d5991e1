#include "tokenizer/jinja/interpreter.h"

#include <cmath>
#include <limits>

#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/errors.h"
#include "tokenizer/jinja/text.h"

namespace edgeinfer::jinja {

// ---- scopes ---------------------------------------------------------------------------------

const Value* Scope::find(std::string_view name) const {
  for (const Scope* s = this; s; s = s->parent.get())
    for (auto it = s->vars.rbegin(); it != s->vars.rend(); ++it)
      if (it->first == name) return &it->second;
  return nullptr;
}

void Scope::set(std::string_view name, Value v) {
  for (auto& [k, old] : vars) {
    if (k == name) {
      old = std::move(v);
      return;
    }
  }
  vars.emplace_back(std::string(name), std::move(v));
}

namespace {

std::shared_ptr<Scope> child(const std::shared_ptr<Scope>& parent) {
  auto s = std::make_shared<Scope>();
  s->parent = parent;
  return s;
}

// How jinja2 names an object in "has no attribute" messages.
std::string object_type_repr(const Value& v) {
  if (v.is_none()) return "None";
  return v.type_name() + " object";
}

// ---- host objects -----------------------------------------------------------------------------

class LoopObject : public Object {
 public:
  LoopObject(std::shared_ptr<const ValueList> items, size_t index, std::shared_ptr<Value> last_changed)
      : items_(std::move(items)), index_(index), last_changed_(std::move(last_changed)) {}

  std::string type_name() const override { return "LoopContext"; }
  std::string repr() const override {
    return "<LoopContext " + std::to_string(index_ + 1) + "/" + std::to_string(items_->size()) + ">";
  }

  std::optional<Value> attribute(std::string_view name) const override {
    const int64_t i = static_cast<int64_t>(index_);
    const int64_t n = static_cast<int64_t>(items_->size());
    if (name == "index") return Value::integer(i + 1);
    if (name == "index0") return Value::integer(i);
    if (name == "revindex") return Value::integer(n - i);
    if (name == "revindex0") return Value::integer(n - i - 1);
    if (name == "first") return Value::boolean(i == 0);
    if (name == "last") return Value::boolean(i == n - 1);
    if (name == "length") return Value::integer(n);
    if (name == "depth") return Value::integer(1);
    if (name == "depth0") return Value::integer(0);
    if (name == "previtem") return i > 0 ? (*items_)[index_ - 1] : Value::undefined("there is no previous item");
    if (name == "nextitem") return i + 1 < n ? (*items_)[index_ + 1] : Value::undefined("there is no next item");
    if (name == "cycle") {
      size_t idx = index_;
      return Value::function("cycle", [idx](Interpreter&, CallArgs& a) -> Value {
        if (a.positional.empty()) throw Failure("no items for cycling given");
        return a.positional[idx % a.positional.size()];
      });
    }
    if (name == "changed") {
      auto last = last_changed_;
      return Value::function("changed", [last](Interpreter&, CallArgs& a) -> Value {
        Value now = Value::tuple(a.positional);
        if (!last->is_undefined() && equals(*last, now)) return Value::boolean(false);
        *last = now;
        return Value::boolean(true);
      });
    }
    return std::nullopt;
  }

 private:
  std::shared_ptr<const ValueList> items_;
  size_t index_;
  std::shared_ptr<Value> last_changed_;  // shared by all iterations of one loop
};

class NamespaceObject : public Object {
 public:
  explicit NamespaceObject(Dict attrs) : attrs_(std::move(attrs)) {}
  std::string type_name() const override { return "Namespace"; }
  std::string repr() const override { return "<Namespace " + py_str(Value::dict(attrs_)) + ">"; }
  std::optional<Value> attribute(std::string_view name) const override {
    if (const Value* v = attrs_.find(name)) return *v;
    return std::nullopt;
  }
  bool set_attribute(std::string_view name, const Value& v) override {
    attrs_.set(Value::string(std::string(name)), v);
    return true;
  }
  void clear() { attrs_.entries.clear(); }

 private:
  Dict attrs_;
};

// ---- arithmetic helpers -------------------------------------------------------------------

[[noreturn]] void overflow() { throw Failure("integer overflow (values beyond 64 bits are not supported)"); }

int64_t add_checked(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) overflow();
  return r;
}
int64_t sub_checked(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) overflow();
  return r;
}
int64_t mul_checked(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) overflow();
  return r;
}

double py_fmod(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0.0 && ((b < 0) != (m < 0))) m += b;
  if (m == 0.0) m = std::copysign(0.0, b);
  return m;
}

int64_t floor_div(int64_t a, int64_t b) {
  if (a == std::numeric_limits<int64_t>::min() && b == -1) throw Failure("integer overflow");
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

[[noreturn]] void unsupported_operands(const std::string& op, const Value& a, const Value& b) {
  throw Failure("unsupported operand type(s) for " + op + ": '" + a.type_name() + "' and '" + b.type_name() + "'");
}

}  // namespace

// ---- Interpreter ----------------------------------------------------------------------------

Interpreter::Interpreter(const RenderConfig& config) : config_(config) {}

Interpreter::~Interpreter() {
  for (auto& s : captured_) {
    s->vars.clear();
    s->parent.reset();
  }
  for (auto& ns : namespaces_) static_cast<NamespaceObject*>(ns.get())->clear();
}

void Interpreter::step() {
  if (++steps_ > config_.limits.max_steps) throw Failure("template exceeded its evaluation budget");
}

void Interpreter::check_size(size_t bytes) {
  if (bytes > config_.limits.max_output_bytes) throw Failure("template output exceeds the size limit");
}

void Interpreter::check_items(size_t n) {
  if (n > config_.limits.max_sequence_items) throw Failure("sequence exceeds the size limit");
}

void Interpreter::write(std::string_view s) {
  check_size(out_->size() + s.size());
  out_->append(s);
}

void Interpreter::fail_undefined(const Value& u) {
  throw Failure(u.str().empty() ? std::string("value is undefined") : u.str());
}

Value Interpreter::make_namespace(const Dict& initial) {
  auto ns = std::make_shared<NamespaceObject>(initial);
  namespaces_.push_back(ns);
  return Value::object(ns);
}

std::shared_ptr<Scope> Interpreter::globals() {
  auto g = std::make_shared<Scope>();
  g->set("range", Value::function("range", [](Interpreter& in, CallArgs& a) -> Value {
    if (!a.keyword.empty()) throw Failure("range() takes no keyword arguments");
    int64_t start = 0, stop = 0, stp = 1;
    auto as_int = [](const Value& v) {
      if (!v.is_int() && !v.is_bool()) throw Failure("'" + v.type_name() + "' object cannot be interpreted as an integer");
      return v.as_int();
    };
    switch (a.positional.size()) {
      case 1: stop = as_int(a.positional[0]); break;
      case 2: start = as_int(a.positional[0]); stop = as_int(a.positional[1]); break;
      case 3:
        start = as_int(a.positional[0]);
        stop = as_int(a.positional[1]);
        stp = as_int(a.positional[2]);
        break;
      default: throw Failure("range expected 1 to 3 arguments");
    }
    if (stp == 0) throw Failure("range() arg 3 must not be zero");
    long double span = stp > 0 ? static_cast<long double>(stop) - start : static_cast<long double>(start) - stop;
    long double len = span <= 0 ? 0 : std::ceil(span / std::abs(static_cast<long double>(stp)));
    // The same bound as jinja2's sandbox (MAX_RANGE).
    if (len > 100000) throw Failure("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
    in.check_items(static_cast<size_t>(len));
    ValueList out;
    for (int64_t k = 0; k < static_cast<int64_t>(len); ++k) out.push_back(Value::integer(start + k * stp));
    return Value::list(std::move(out));
  }));
  auto build_dict = [](CallArgs& a, const char* what) {
    Dict d;
    if (a.positional.size() > 1) throw Failure(std::string(what) + " expected at most 1 positional argument");
    if (!a.positional.empty()) {
      const Value& src = a.positional[0];
      if (src.is_dict()) {
        d = src.dict();
      } else if (src.is_sequence_like()) {
        for (const Value& pair : src.items()) {
          if (!pair.is_sequence_like() || pair.items().size() != 2)
            throw Failure(std::string(what) + ": sequence elements must be pairs");
          d.set(pair.items()[0], pair.items()[1]);
        }
      } else {
        throw Failure(std::string(what) + ": '" + src.type_name() + "' object is not iterable");
      }
    }
    for (auto& [k, v] : a.keyword) d.set(Value::string(k), v);
    return d;
  };
  g->set("dict", Value::function("dict", [build_dict](Interpreter&, CallArgs& a) { return Value::dict(build_dict(a, "dict")); }));
  g->set("namespace", Value::function("namespace", [build_dict](Interpreter& in, CallArgs& a) {
    return in.make_namespace(build_dict(a, "namespace"));
  }));
  g->set("joiner", Value::function("joiner", [](Interpreter&, CallArgs& a) -> Value {
    std::string sep = ", ";
    if (!a.positional.empty()) sep = py_str(a.positional[0]);
    for (auto& [k, v] : a.keyword)
      if (k == "sep") sep = py_str(v);
    auto used = std::make_shared<bool>(false);
    return Value::function("joiner", [sep, used](Interpreter&, CallArgs&) {
      if (!*used) {
        *used = true;
        return Value::string("");
      }
      return Value::string(sep);
    });
  }));
  for (const char* name : {"cycler", "lipsum"}) {
    std::string n = name;
    g->set(n, Value::function(n, [n](Interpreter&, CallArgs&) -> Value {
      throw Failure("unsupported template construct: global function " + n + "()");
    }));
  }
  g->set("raise_exception", Value::function("raise_exception", [](Interpreter&, CallArgs& a) -> Value {
    std::string msg = a.positional.empty() ? std::string() : py_str(a.positional[0]);
    throw RaisedError(msg);
  }));
  g->set("strftime_now", Value::function("strftime_now", [](Interpreter& in, CallArgs& a) -> Value {
    if (a.positional.size() != 1 || !a.positional[0].is_string()) throw Failure("strftime_now() expects one format string");
    const std::string& fmt = a.positional[0].str();
    if (fmt.empty()) return Value::string("");
    std::tm tm = in.config().now;
    for (size_t cap = 256; cap <= (1u << 16); cap *= 4) {
      std::string buf(cap, '\0');
      size_t n = std::strftime(buf.data(), buf.size(), fmt.c_str(), &tm);
      if (n > 0) {
        buf.resize(n);
        return Value::string(std::move(buf));
      }
    }
    return Value::string("");
  }));
  return g;
}

std::string Interpreter::render(const Body& body, std::vector<std::pair<std::string, Value>> vars) {
  auto root = child(globals());
  for (auto& [k, v] : vars) root->set(k, std::move(v));
  std::string out;
  out_ = &out;
  exec_body(body, root);
  out_ = nullptr;
  return out;
}

Interpreter::Flow Interpreter::exec_body(const Body& body, const std::shared_ptr<Scope>& scope) {
  for (const auto& s : body) {
    Flow f = exec(*s, scope);
    if (f != Flow::Normal) return f;
  }
  return Flow::Normal;
}

std::string Interpreter::capture(const Body& body, const std::shared_ptr<Scope>& scope) {
  std::string buf;
  std::string* saved = out_;
  out_ = &buf;
  struct Restore {
    std::string*& slot;
    std::string* value;
    ~Restore() { slot = value; }
  } restore{out_, saved};
  exec_body(body, scope);
  return buf;
}

Value Interpreter::apply_filters(const std::vector<FilterCall>& chain, Value v, const std::shared_ptr<Scope>& scope) {
  for (const FilterCall& f : chain) {
    line_ = f.line;
    CallArgs args = eval_args(f.args, scope);
    v = f.fn(*this, v, args);
  }
  return v;
}

Interpreter::Flow Interpreter::exec(const Stmt& s, const std::shared_ptr<Scope>& scope) {
  step();
  line_ = s.line;
  switch (s.kind) {
    case Stmt::Kind::Data: write(static_cast<const DataStmt&>(s).text); return Flow::Normal;
    case Stmt::Kind::Print: {
      Value v = eval(*static_cast<const PrintStmt&>(s).expr, scope);
      write(py_str(v));
      return Flow::Normal;
    }
    case Stmt::Kind::If: {
      const auto& n = static_cast<const IfStmt&>(s);
      for (const auto& [cond, body] : n.branches)
        if (eval(*cond, scope).truthy()) return exec_body(body, scope);
      return exec_body(n.otherwise, scope);
    }
    case Stmt::Kind::For: exec_for(static_cast<const ForStmt&>(s), scope); return Flow::Normal;
    case Stmt::Kind::Set: {
      const auto& n = static_cast<const SetStmt&>(s);
      assign(n.target, eval(*n.value, scope), scope);
      return Flow::Normal;
    }
    case Stmt::Kind::SetBlock: {
      const auto& n = static_cast<const SetBlockStmt&>(s);
      Value v = Value::string(capture(n.body, child(scope)));
      assign(n.target, apply_filters(n.filters, std::move(v), scope), scope);
      return Flow::Normal;
    }
    case Stmt::Kind::Macro: {
      const auto& m = static_cast<const MacroStmt&>(s);
      scope->set(m.name, make_macro(m, scope));
      return Flow::Normal;
    }
    case Stmt::Kind::CallBlock: {
      const auto& n = static_cast<const CallBlockStmt&>(s);
      Value callee = eval(*n.call->callee, scope);
      CallArgs args = eval_args(n.call->args, scope);
      args.keyword.emplace_back("caller", make_macro(n.caller, scope));
      line_ = n.line;
      write(py_str(call(callee, args)));
      return Flow::Normal;
    }
    case Stmt::Kind::FilterBlock: {
      const auto& n = static_cast<const FilterBlockStmt&>(s);
      Value v = Value::string(capture(n.body, child(scope)));
      write(py_str(apply_filters(n.filters, std::move(v), scope)));
      return Flow::Normal;
    }
    case Stmt::Kind::With: {
      const auto& n = static_cast<const WithStmt&>(s);
      std::vector<Value> values;
      for (const auto& [t, e] : n.assignments) values.push_back(eval(*e, scope));
      auto inner = child(scope);
      for (size_t i = 0; i < values.size(); ++i) assign(n.assignments[i].first, values[i], inner);
      return exec_body(n.body, inner);
    }
    case Stmt::Kind::Scope: {
      // transformers renders {% generation %} bodies through a caller(), i.e. a child scope.
      write(capture(static_cast<const ScopeStmt&>(s).body, child(scope)));
      return Flow::Normal;
    }
    case Stmt::Kind::Break: return Flow::Break;
    case Stmt::Kind::Continue: return Flow::Continue;
  }
  return Flow::Normal;
}

void Interpreter::exec_for(const ForStmt& s, const std::shared_ptr<Scope>& scope) {
  ValueList items = iterate(eval(*s.iter, scope));
  if (s.filter) {
    ValueList kept;
    for (Value& item : items) {
      auto probe = child(scope);
      assign(s.target, item, probe);
      if (eval(*s.filter, probe).truthy()) kept.push_back(std::move(item));
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    exec_body(s.otherwise, child(scope));
    return;
  }
  auto shared = std::make_shared<const ValueList>(std::move(items));
  auto last_changed = std::make_shared<Value>();
  for (size_t i = 0; i < shared->size(); ++i) {
    line_ = s.line;
    step();
    auto it = child(scope);
    assign(s.target, (*shared)[i], it);
    it->set("loop", Value::object(std::make_shared<LoopObject>(shared, i, last_changed)));
    if (exec_body(s.body, it) == Flow::Break) break;
  }
}

void Interpreter::assign(const Target& t, const Value& v, const std::shared_ptr<Scope>& scope) {
  if (!t.attr.empty()) {
    const Value* ns = scope->find(t.names[0]);
    if (!ns || !ns->is_object() || !ns->object()->set_attribute(t.attr, v))
      throw Failure("cannot assign attribute on non-namespace object");
    return;
  }
  if (!t.is_tuple) {
    scope->set(t.names[0], v);
    return;
  }
  ValueList parts = iterate(v);
  if (parts.size() != t.names.size())
    throw Failure(parts.size() > t.names.size()
                      ? "too many values to unpack (expected " + std::to_string(t.names.size()) + ")"
                      : "not enough values to unpack (expected " + std::to_string(t.names.size()) + ", got " +
                            std::to_string(parts.size()) + ")");
  for (size_t i = 0; i < parts.size(); ++i) scope->set(t.names[i], parts[i]);
}

Value Interpreter::make_macro(const MacroStmt& m, const std::shared_ptr<Scope>& scope) {
  captured_.push_back(scope);
  const MacroStmt* node = &m;
  std::shared_ptr<Scope> closure = scope;
  return Value::function(m.name, [node, closure](Interpreter& in, CallArgs& args) {
    return in.call_macro(*node, closure, args);
  });
}

Value Interpreter::call_macro(const MacroStmt& m, const std::shared_ptr<Scope>& closure, CallArgs& args) {
  if (call_depth_ >= config_.limits.max_call_depth) throw Failure("macro calls nested too deeply");
  struct DepthGuard {
    int& d;
    explicit DepthGuard(int& depth) : d(depth) { ++d; }
    ~DepthGuard() { --d; }
  } guard(call_depth_);
  int saved_line = line_;
  auto scope = child(closure);
  const size_t np = m.params.size();
  if (args.positional.size() > np && !m.uses_varargs)
    throw Failure("macro '" + m.name + "' takes not more than " + std::to_string(np) + " argument(s)");
  std::vector<std::optional<Value>> bound(np);
  for (size_t i = 0; i < np && i < args.positional.size(); ++i) bound[i] = args.positional[i];
  Dict extra_kwargs;
  Value caller;
  for (auto& [k, v] : args.keyword) {
    bool matched = false;
    for (size_t i = 0; i < np; ++i) {
      if (m.params[i].name == k) {
        if (bound[i]) throw Failure("macro '" + m.name + "' got multiple values for argument '" + k + "'");
        bound[i] = v;
        matched = true;
      }
    }
    if (matched) continue;
    if (k == "caller" && m.uses_caller) {
      caller = v;
    } else if (m.uses_kwargs) {
      extra_kwargs.set(Value::string(k), v);
    } else {
      throw Failure("macro '" + m.name + "' takes no keyword argument '" + k + "'");
    }
  }
  for (size_t i = 0; i < np; ++i) {
    if (bound[i]) {
      scope->set(m.params[i].name, *bound[i]);
    } else if (m.params[i].default_value) {
      scope->set(m.params[i].name, eval(*m.params[i].default_value, scope));
    } else {
      scope->set(m.params[i].name, Value::undefined("parameter '" + m.params[i].name + "' was not provided"));
    }
  }
  if (m.uses_varargs) {
    ValueList rest;
    for (size_t i = np; i < args.positional.size(); ++i) rest.push_back(args.positional[i]);
    scope->set("varargs", Value::tuple(std::move(rest)));
  }
  if (m.uses_kwargs) scope->set("kwargs", Value::dict(std::move(extra_kwargs)));
  if (m.uses_caller && !caller.is_undefined()) scope->set("caller", caller);
  std::string out = capture(m.body, scope);
  line_ = saved_line;
  return Value::string(std::move(out));
}

Value Interpreter::call(const Value& callee, CallArgs& args) {
  if (callee.is_undefined()) fail_undefined(callee);
  if (!callee.is_function()) throw Failure("'" + callee.type_name() + "' object is not callable");
  return callee.function().call(*this, args);
}

CallArgs Interpreter::eval_args(const Arguments& a, const std::shared_ptr<Scope>& scope) {
  CallArgs out;
  out.positional.reserve(a.positional.size());
  for (const auto& e : a.positional) out.positional.push_back(eval(*e, scope));
  for (const auto& [k, e] : a.keyword) out.keyword.emplace_back(k, eval(*e, scope));
  return out;
}

// ---- attribute / item access ----------------------------------------------------------------

Value Interpreter::get_attr(const Value& obj, std::string_view name) {
  if (obj.is_undefined()) fail_undefined(obj);
  if (obj.is_object()) {
    if (auto v = obj.object()->attribute(name)) return *v;
  } else if (obj.is_dict() || obj.is_string() || obj.is_list() || obj.is_tuple()) {
    // jinja2 tries the Python attribute first, so `d.items` is the method even when the
    // dict has an "items" key; only then the item.
    if (auto m = find_method(obj, name)) return *m;
    if (obj.is_dict())
      if (const Value* v = obj.dict().find(name)) return *v;
  } else if (obj.is_number()) {
    if (name == "real") return obj.is_float() ? obj : Value::integer(obj.as_int());
    if (name == "imag") return obj.is_float() ? Value::floating(0.0) : Value::integer(0);
  }
  return Value::undefined("'" + object_type_repr(obj) + "' has no attribute '" + std::string(name) + "'");
}

Value Interpreter::get_item(const Value& obj, const Value& key) {
  if (obj.is_undefined()) fail_undefined(obj);
  if (obj.is_dict()) {
    if (const Value* v = obj.dict().find(key)) return *v;
  } else if ((obj.is_list() || obj.is_tuple() || obj.is_string()) && (key.is_int() || key.is_bool())) {
    int64_t i = key.as_int();
    if (obj.is_string()) {
      std::u32string cps = text::decode(obj.str());
      int64_t n = static_cast<int64_t>(cps.size());
      if (i < 0) i += n;
      if (i >= 0 && i < n) return Value::string(text::encode(std::u32string_view(cps).substr(static_cast<size_t>(i), 1)), obj.is_safe());
    } else {
      const auto& items = obj.items();
      int64_t n = static_cast<int64_t>(items.size());
      if (i < 0) i += n;
      if (i >= 0 && i < n) return items[static_cast<size_t>(i)];
    }
    return Value::undefined("'" + object_type_repr(obj) + "' has no element " + std::to_string(key.as_int()));
  }
  if (key.is_string()) {
    // Python's obj[key] failed; jinja2 falls back to the attribute of that name.
    if (obj.is_dict()) {
      if (auto m = find_method(obj, key.str())) return *m;
    } else {
      Value v = get_attr(obj, key.str());
      if (!v.is_undefined()) return v;
    }
    return Value::undefined("'" + object_type_repr(obj) + "' has no attribute '" + key.str() + "'");
  }
  return Value::undefined("'" + object_type_repr(obj) + "' has no element " + py_repr(key));
}

ValueList Interpreter::iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined: return {};
    case Value::Kind::List:
    case Value::Kind::Tuple:
    case Value::Kind::Iterator: return v.items();
    case Value::Kind::Dict: {
      ValueList keys;
      keys.reserve(v.dict().entries.size());
      for (const auto& [k, val] : v.dict().entries) keys.push_back(k);
      return keys;
    }
    case Value::Kind::String: {
      ValueList chars;
      std::string cur;
      for (char32_t c : text::decode(v.str())) {
        cur.clear();
        text::append_utf8(cur, c);
        chars.push_back(Value::string(cur));
      }
      return chars;
    }
    default: throw Failure("'" + v.type_name() + "' object is not iterable");
  }
}

bool Interpreter::contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::String:
      if (!item.is_string())
        throw Failure("'in <string>' requires string as left operand, not " + item.type_name());
      return container.str().find(item.str()) != std::string::npos;
    case Value::Kind::List:
    case Value::Kind::Tuple:
    case Value::Kind::Iterator:
      for (const Value& x : container.items())
        if (equals(x, item)) return true;
      return false;
    case Value::Kind::Dict:
      if (item.is_list() || item.is_dict()) throw Failure("unhashable type: '" + item.type_name() + "'");
      return container.dict().find(item) != nullptr;
    case Value::Kind::Undefined: return false;
    default: throw Failure("argument of type '" + container.type_name() + "' is not iterable");
  }
}

namespace {

// Python rich comparison for <, <=, >, >= between numbers, strings and same-kind sequences.
bool ordered(Interpreter& in, const std::string& op, const Value& a, const Value& b) {
  if (a.is_undefined()) in.fail_undefined(a);
  if (b.is_undefined()) in.fail_undefined(b);
  auto apply = [&op](auto x, auto y) {
    if (op == "<") return x < y;
    if (op == "<=") return x <= y;
    if (op == ">") return x > y;
    return x >= y;
  };
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return apply(a.as_double(), b.as_double());
    return apply(a.as_int(), b.as_int());
  }
  if (a.is_string() && b.is_string()) return apply(a.str(), b.str());
  if ((a.is_list() && b.is_list()) || (a.is_tuple() && b.is_tuple())) {
    const auto& x = a.items();
    const auto& y = b.items();
    size_t n = std::min(x.size(), y.size());
    for (size_t i = 0; i < n; ++i)
      if (!equals(x[i], y[i])) return ordered(in, op, x[i], y[i]);
    return apply(x.size(), y.size());
  }
  throw Failure("'" + op + "' not supported between instances of '" + a.type_name() + "' and '" + b.type_name() + "'");
}

}  // namespace

bool Interpreter::less(const Value& a, const Value& b) { return ordered(*this, "<", a, b); }

bool Interpreter::compare(const std::string& op, const Value& a, const Value& b) {
  if (op == "==") return equals(a, b);
  if (op == "!=") return !equals(a, b);
  if (op == "in") return contains(b, a);
  if (op == "notin") return !contains(b, a);
  return ordered(*this, op, a, b);
}

Value Interpreter::binary(const std::string& op, const Value& a, const Value& b) {
  if (op == "%" && a.is_string()) {
    // str.__mod__ runs first and accepts an Undefined argument as a mapping.
    std::string s = percent_format(a.str(), b, a.is_safe());
    check_size(s.size());
    return Value::string(std::move(s), a.is_safe());
  }
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  const bool ints = (a.is_int() || a.is_bool()) && (b.is_int() || b.is_bool());
  const bool nums = a.is_number() && b.is_number();
  if (op == "+") {
    if (ints) return Value::integer(add_checked(a.as_int(), b.as_int()));
    if (nums) return Value::floating(a.as_double() + b.as_double());
    if (a.is_string() && b.is_string()) {
      check_size(a.str().size() + b.str().size());
      // markupsafe: concatenating with Markup escapes the plain side.
      if (a.is_safe() || b.is_safe()) {
        std::string l = a.is_safe() ? a.str() : html_escape(a.str());
        std::string r = b.is_safe() ? b.str() : html_escape(b.str());
        check_size(l.size() + r.size());
        return Value::string(l + r, true);
      }
      return Value::string(a.str() + b.str());
    }
    if ((a.is_list() && b.is_list()) || (a.is_tuple() && b.is_tuple())) {
      check_items(a.items().size() + b.items().size());
      ValueList out = a.items();
      out.insert(out.end(), b.items().begin(), b.items().end());
      return a.is_list() ? Value::list(std::move(out)) : Value::tuple(std::move(out));
    }
    if (a.is_list() || b.is_list()) throw Failure("can only concatenate list (not \"" + (a.is_list() ? b : a).type_name() + "\") to list");
    if (a.is_string() || b.is_string()) throw Failure("can only concatenate str (not \"" + (a.is_string() ? b : a).type_name() + "\") to str");
    unsupported_operands("+", a, b);
  }
  if (op == "-") {
    if (ints) return Value::integer(sub_checked(a.as_int(), b.as_int()));
    if (nums) return Value::floating(a.as_double() - b.as_double());
    unsupported_operands("-", a, b);
  }
  if (op == "*") {
    if (ints) return Value::integer(mul_checked(a.as_int(), b.as_int()));
    if (nums) return Value::floating(a.as_double() * b.as_double());
    const Value* seq = nullptr;
    const Value* count = nullptr;
    if ((a.is_string() || a.is_list() || a.is_tuple()) && (b.is_int() || b.is_bool())) {
      seq = &a;
      count = &b;
    } else if ((b.is_string() || b.is_list() || b.is_tuple()) && (a.is_int() || a.is_bool())) {
      seq = &b;
      count = &a;
    }
    if (!seq) unsupported_operands("*", a, b);
    int64_t times = std::max<int64_t>(count->as_int(), 0);
    size_t unit = seq->is_string() ? seq->str().size() : seq->items().size();
    size_t cap = seq->is_string() ? config_.limits.max_output_bytes : config_.limits.max_sequence_items;
    if (unit == 0) times = 0;
    if (times > 0 && static_cast<uint64_t>(times) > cap / unit) throw Failure("sequence repetition exceeds the size limit");
    if (seq->is_string()) {
      std::string out;
      out.reserve(unit * static_cast<size_t>(times));
      for (int64_t i = 0; i < times; ++i) out += seq->str();
      return Value::string(std::move(out), seq->is_safe());
    }
    ValueList out;
    for (int64_t i = 0; i < times; ++i) out.insert(out.end(), seq->items().begin(), seq->items().end());
    return seq->is_list() ? Value::list(std::move(out)) : Value::tuple(std::move(out));
  }
  if (op == "/") {
    if (!nums) unsupported_operands("/", a, b);
    if (b.as_double() == 0.0) throw Failure("division by zero");
    return Value::floating(a.as_double() / b.as_double());
  }
  if (op == "//") {
    if (!nums) unsupported_operands("//", a, b);
    if (ints) {
      if (b.as_int() == 0) throw Failure("integer division or modulo by zero");
      return Value::integer(floor_div(a.as_int(), b.as_int()));
    }
    if (b.as_double() == 0.0) throw Failure("float floor division by zero");
    return Value::floating(std::floor(a.as_double() / b.as_double()));
  }
  if (op == "%") {
    if (!nums) unsupported_operands("%", a, b);
    if (ints) {
      if (b.as_int() == 0) throw Failure("integer division or modulo by zero");
      if (b.as_int() == -1) return Value::integer(0);
      int64_t m = a.as_int() % b.as_int();
      if (m != 0 && ((m < 0) != (b.as_int() < 0))) m += b.as_int();
      return Value::integer(m);
    }
    if (b.as_double() == 0.0) throw Failure("float modulo");
    return Value::floating(py_fmod(a.as_double(), b.as_double()));
  }
  if (op == "**") {
    if (!nums) unsupported_operands("** or pow()", a, b);
    if (ints && b.as_int() >= 0) {
      int64_t base = a.as_int(), e = b.as_int(), r = 1;
      while (e > 0) {
        if (e & 1) r = mul_checked(r, base);
        e >>= 1;
        if (e > 0) base = mul_checked(base, base);
      }
      return Value::integer(r);
    }
    if (a.as_double() == 0.0 && b.as_double() < 0) throw Failure("0.0 cannot be raised to a negative power");
    double r = std::pow(a.as_double(), b.as_double());
    if (std::isnan(r) && a.as_double() < 0) throw Failure("negative number cannot be raised to a fractional power");
    return Value::floating(r);
  }
  throw Failure("unknown operator " + op);
}

Value Interpreter::eval_slice(const SliceExpr& e, const std::shared_ptr<Scope>& scope) {
  Value obj = eval(*e.object, scope);
  if (obj.is_undefined()) fail_undefined(obj);
  std::optional<int64_t> bounds[3];
  const ExprPtr* parts[3] = {&e.start, &e.stop, &e.step};
  for (int k = 0; k < 3; ++k) {
    if (!*parts[k]) continue;
    Value b = eval(**parts[k], scope);
    if (b.is_none()) continue;
    if (!b.is_int() && !b.is_bool()) throw Failure("slice indices must be integers or None or have an __index__ method");
    bounds[k] = b.as_int();
  }
  // jinja2 compiles slicing to a plain Python subscript (not its forgiving getitem), so
  // anything but str/list/tuple fails.
  if (!(obj.is_string() || obj.is_list() || obj.is_tuple()))
    throw Failure("'" + obj.type_name() + "' object is not subscriptable");
  int64_t stp = bounds[2].value_or(1);
  if (stp == 0) throw Failure("slice step cannot be zero");
  std::u32string cps;
  int64_t n;
  if (obj.is_string()) {
    cps = text::decode(obj.str());
    n = static_cast<int64_t>(cps.size());
  } else {
    n = static_cast<int64_t>(obj.items().size());
  }
  // CPython's PySlice_AdjustIndices.
  auto adjust = [&](std::optional<int64_t> v, int64_t dflt_pos, int64_t dflt_neg) {
    if (!v) return stp > 0 ? dflt_pos : dflt_neg;
    int64_t x = *v;
    if (x < 0) {
      x += n;
      if (x < 0) x = stp < 0 ? -1 : 0;
    } else if (x >= n) {
      x = stp < 0 ? n - 1 : n;
    }
    return x;
  };
  int64_t start = adjust(bounds[0], 0, n - 1);
  int64_t stop = adjust(bounds[1], n, -1);
  std::vector<size_t> picks;
  if (stp > 0) {
    for (int64_t i = start; i < stop; i += stp) picks.push_back(static_cast<size_t>(i));
  } else {
    for (int64_t i = start; i > stop; i += stp) picks.push_back(static_cast<size_t>(i));
  }
  if (obj.is_string()) {
    std::u32string out;
    for (size_t i : picks) out.push_back(cps[i]);
    return Value::string(text::encode(out), obj.is_safe());
  }
  ValueList out;
  for (size_t i : picks) out.push_back(obj.items()[i]);
  return obj.is_list() ? Value::list(std::move(out)) : Value::tuple(std::move(out));
}

Value Interpreter::eval(const Expr& e, const std::shared_ptr<Scope>& scope) {
  step();
  line_ = e.line;
  switch (e.kind) {
    case Expr::Kind::Const: return static_cast<const ConstExpr&>(e).value;
    case Expr::Kind::Name: {
      const auto& n = static_cast<const NameExpr&>(e);
      if (const Value* v = scope->find(n.name)) return *v;
      return Value::undefined("'" + n.name + "' is undefined");
    }
    case Expr::Kind::List:
    case Expr::Kind::Tuple: {
      const auto& n = static_cast<const SeqExpr&>(e);
      ValueList items;
      items.reserve(n.items.size());
      for (const auto& item : n.items) items.push_back(eval(*item, scope));
      return e.kind == Expr::Kind::List ? Value::list(std::move(items)) : Value::tuple(std::move(items));
    }
    case Expr::Kind::Dict: {
      Dict d;
      for (const auto& [k, v] : static_cast<const DictExpr&>(e).items) {
        Value key = eval(*k, scope);
        if (key.is_list() || key.is_dict() || key.is_iterator()) throw Failure("unhashable type: '" + key.type_name() + "'");
        d.set(key, eval(*v, scope));
      }
      return Value::dict(std::move(d));
    }
    case Expr::Kind::Attr: {
      const auto& n = static_cast<const AttrExpr&>(e);
      Value obj = eval(*n.object, scope);
      line_ = e.line;
      return get_attr(obj, n.name);
    }
    case Expr::Kind::Item: {
      const auto& n = static_cast<const ItemExpr&>(e);
      Value obj = eval(*n.object, scope);
      Value key = eval(*n.key, scope);
      line_ = e.line;
      return get_item(obj, key);
    }
    case Expr::Kind::Slice: return eval_slice(static_cast<const SliceExpr&>(e), scope);
    case Expr::Kind::Call: {
      const auto& n = static_cast<const CallExpr&>(e);
      Value callee = eval(*n.callee, scope);
      CallArgs args = eval_args(n.args, scope);
      line_ = e.line;
      return call(callee, args);
    }
    case Expr::Kind::Filter: {
      const auto& n = static_cast<const FilterExpr&>(e);
      Value input = eval(*n.target, scope);
      CallArgs args = eval_args(n.filter.args, scope);
      line_ = e.line;
      return n.filter.fn(*this, input, args);
    }
    case Expr::Kind::Test: {
      const auto& n = static_cast<const TestExpr&>(e);
      Value input = eval(*n.target, scope);
      CallArgs args = eval_args(n.args, scope);
      line_ = e.line;
      return Value::boolean(n.fn(*this, input, args) != n.negated);
    }
    case Expr::Kind::Neg:
    case Expr::Kind::Pos: {
      Value v = eval(*static_cast<const UnaryExpr&>(e).operand, scope);
      if (v.is_undefined()) fail_undefined(v);
      bool neg = e.kind == Expr::Kind::Neg;
      if (v.is_int() || v.is_bool()) return Value::integer(neg ? sub_checked(0, v.as_int()) : v.as_int());
      if (v.is_float()) return Value::floating(neg ? -v.as_double() : v.as_double());
      throw Failure(std::string("bad operand type for unary ") + (neg ? "-" : "+") + ": '" + v.type_name() + "'");
    }
    case Expr::Kind::Not: return Value::boolean(!eval(*static_cast<const UnaryExpr&>(e).operand, scope).truthy());
    case Expr::Kind::Binary: {
      const auto& n = static_cast<const BinaryExpr&>(e);
      Value a = eval(*n.left, scope);
      Value b = eval(*n.right, scope);
      line_ = e.line;
      return binary(n.op, a, b);
    }
    case Expr::Kind::And:
    case Expr::Kind::Or: {
      const auto& n = static_cast<const BinaryExpr&>(e);
      Value a = eval(*n.left, scope);
      if (a.truthy() == (e.kind == Expr::Kind::Or)) return a;
      return eval(*n.right, scope);
    }
    case Expr::Kind::Compare: {
      const auto& n = static_cast<const CompareExpr&>(e);
      Value left = eval(*n.first, scope);
      for (const auto& [op, expr] : n.rest) {
        Value right = eval(*expr, scope);
        line_ = e.line;
        if (!compare(op, left, right)) return Value::boolean(false);
        left = std::move(right);
      }
      return Value::boolean(true);
    }
    case Expr::Kind::Concat: {
      std::string out;
      for (const auto& item : static_cast<const ConcatExpr&>(e).items) {
        out += py_str(eval(*item, scope));
        check_size(out.size());
      }
      return Value::string(std::move(out));
    }
    case Expr::Kind::Cond: {
      const auto& n = static_cast<const CondExpr&>(e);
      if (eval(*n.test, scope).truthy()) return eval(*n.then, scope);
      if (n.otherwise) return eval(*n.otherwise, scope);
      return Value::undefined("the inline if-expression evaluated to false and no else section was defined");
    }
  }
  return Value();
}

}  // namespace edgeinfer::jinja
