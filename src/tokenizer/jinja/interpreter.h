#pragma once
// Walks a parsed template and renders it. One Interpreter renders one template once: it
// owns that render's scopes, output buffer and budgets, so nothing is shared between
// renders (Template::render may run concurrently on one Template).
//
// Scoping follows jinja2: `if` adds no scope; every for-loop iteration, macro call and `with`
// gets a fresh child scope, so `set` inside a loop is invisible after it (namespace() is the
// way out); macros see their defining scope as it is when they are called.
#include <cstdint>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/pyformat.h"
#include "tokenizer/jinja/value.h"

namespace edgeinfer::jinja {

// Bounds that keep an untrusted template from exhausting the machine.
struct RenderLimits {
  size_t max_output_bytes = 16u << 20;    // also caps any single string built while rendering
  size_t max_sequence_items = 1u << 20;   // list / string repetition results
  uint64_t max_steps = 20'000'000;        // evaluated nodes
  int max_call_depth = 128;               // nested macro calls
};

// How the tojson filter serializes: jinja2's own (sorted keys, ASCII only, <>&' escaped,
// returns Markup) or Hugging Face transformers' override (insertion order, UTF-8 kept).
enum class JsonStyle { Jinja2, Transformers };

struct RenderConfig {
  RenderLimits limits;
  JsonStyle json_style = JsonStyle::Jinja2;
  std::tm now{};  // what strftime_now() formats
};

struct Scope {
  std::shared_ptr<Scope> parent;
  std::vector<std::pair<std::string, Value>> vars;

  const Value* find(std::string_view name) const;
  void set(std::string_view name, Value v);
};

class Interpreter {
 public:
  explicit Interpreter(const RenderConfig& config);
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // Renders `body` with `vars` as the template context. Throws Failure (with line()
  // telling where), RaisedError, or Error.
  std::string render(const Body& body, std::vector<std::pair<std::string, Value>> vars);
  int line() const { return line_; }

  // ---- services for filters, tests and methods -------------------------------------------
  const RenderConfig& config() const { return config_; }
  Value call(const Value& callee, CallArgs& args);
  Value get_attr(const Value& obj, std::string_view name);  // obj.name
  Value get_item(const Value& obj, const Value& key);       // obj[key]
  ValueList iterate(const Value& v);                        // for x in v
  bool contains(const Value& container, const Value& item); // item in container
  bool less(const Value& a, const Value& b);                // a < b (throws like Python)
  // a <op> b for ==, !=, <, <=, >, >=, in, notin.
  bool compare(const std::string& op, const Value& a, const Value& b);
  Value binary(const std::string& op, const Value& a, const Value& b);
  [[noreturn]] void fail_undefined(const Value& u);
  void check_size(size_t bytes);  // a string about to be built
  void check_items(size_t n);     // a sequence about to be built
  void step();                    // one unit of the evaluation budget
  Value make_namespace(const Dict& initial);

 private:
  enum class Flow { Normal, Break, Continue };

  Flow exec_body(const Body& body, const std::shared_ptr<Scope>& scope);
  Flow exec(const Stmt& s, const std::shared_ptr<Scope>& scope);
  void exec_for(const ForStmt& s, const std::shared_ptr<Scope>& scope);
  void assign(const Target& t, const Value& v, const std::shared_ptr<Scope>& scope);
  std::string capture(const Body& body, const std::shared_ptr<Scope>& scope);
  Value apply_filters(const std::vector<FilterCall>& chain, Value v, const std::shared_ptr<Scope>& scope);
  Value make_macro(const MacroStmt& m, const std::shared_ptr<Scope>& scope);
  Value call_macro(const MacroStmt& m, const std::shared_ptr<Scope>& closure, CallArgs& args);

  Value eval(const Expr& e, const std::shared_ptr<Scope>& scope);
  CallArgs eval_args(const Arguments& a, const std::shared_ptr<Scope>& scope);
  Value eval_slice(const SliceExpr& e, const std::shared_ptr<Scope>& scope);
  void write(std::string_view s);

  std::shared_ptr<Scope> globals();

  RenderConfig config_;
  std::string* out_ = nullptr;
  int line_ = 0;
  uint64_t steps_ = 0;
  int call_depth_ = 0;
  // Scopes captured by macros and namespaces created during the render: values can point
  // back at them (a macro stored in a namespace), so they are cleared when rendering ends to
  // break those reference cycles.
  std::vector<std::shared_ptr<Scope>> captured_;
  std::vector<std::shared_ptr<Object>> namespaces_;
};

}  // namespace edgeinfer::jinja
