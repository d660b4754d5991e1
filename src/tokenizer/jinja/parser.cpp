#include "tokenizer/jinja/parser.h"

#include <initializer_list>
#include <set>

#include "tokenizer/jinja/builtins.h"
#include "util/error.h"

namespace edgeinfer::jinja {

namespace {

class Parser {
 public:
  Parser(const std::vector<Token>& toks, const std::string& name, const ParseLimits& limits)
      : t_(toks), name_(name), limits_(limits) {}

  Body parse_template() {
    Body body = subparse({});
    if (cur().type != Tok::Eof) fail("unexpected tag '" + cur().text + "'");
    return body;
  }

 private:
  // ---- token helpers -----------------------------------------------------------------------
  const Token& cur() const { return t_[pos_]; }
  const Token& look(size_t k = 1) const { return t_[std::min(pos_ + k, t_.size() - 1)]; }
  const Token& next() {
    const Token& t = t_[pos_];
    if (pos_ + 1 < t_.size()) ++pos_;
    return t;
  }
  bool is_op(const char* op) const { return cur().type == Tok::Op && cur().text == op; }
  bool is_name(const char* n) const { return cur().type == Tok::Name && cur().text == n; }
  bool skip_op(const char* op) {
    if (!is_op(op)) return false;
    next();
    return true;
  }
  bool skip_name(const char* n) {
    if (!is_name(n)) return false;
    next();
    return true;
  }

  [[noreturn]] void fail(const std::string& msg, int line = -1) const {
    throw Error(name_ + ":" + std::to_string(line < 0 ? cur().line : line) + ": " + msg);
  }

  std::string describe(const Token& t) const {
    switch (t.type) {
      case Tok::Data: return "template data";
      case Tok::VarBegin: return "'{{'";
      case Tok::VarEnd: return "end of print statement";
      case Tok::BlockBegin: return "'{%'";
      case Tok::BlockEnd: return "end of statement block";
      case Tok::Name: return "'" + t.text + "'";
      case Tok::String: return "string";
      case Tok::Int: return "integer";
      case Tok::Float: return "float";
      case Tok::Op: return "'" + t.text + "'";
      case Tok::Eof: return "end of template";
    }
    return "token";
  }

  void expect_op(const char* op) {
    if (!skip_op(op)) fail(std::string("expected '") + op + "', got " + describe(cur()));
  }
  std::string expect_name() {
    if (cur().type != Tok::Name) fail("expected a name, got " + describe(cur()));
    return next().text;
  }
  void expect_block_end() {
    if (cur().type != Tok::BlockEnd) fail("expected end of statement block, got " + describe(cur()));
    next();
  }

  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser) : p(parser) {
      if (++p.depth_ > p.limits_.max_nesting) p.fail("template nested too deeply");
    }
    ~DepthGuard() { --p.depth_; }
  };

  // ---- statements --------------------------------------------------------------------------

  // Parses until `{% <one of end> ...`; leaves the end name as the current token.
  Body subparse(std::initializer_list<const char*> end) {
    DepthGuard guard(*this);
    Body body;
    while (cur().type != Tok::Eof) {
      const Token& t = cur();
      if (t.type == Tok::Data) {
        body.push_back(std::make_unique<DataStmt>(t.text, t.line));
        next();
      } else if (t.type == Tok::VarBegin) {
        int line = t.line;
        next();
        ExprPtr e = parse_tuple(false, true, {}, false);
        if (cur().type != Tok::VarEnd) fail("expected end of print statement, got " + describe(cur()));
        next();
        body.push_back(std::make_unique<PrintStmt>(std::move(e), line));
      } else if (t.type == Tok::BlockBegin) {
        next();
        if (cur().type == Tok::Name)
          for (const char* e : end)
            if (cur().text == e) return body;
        body.push_back(parse_statement());
        expect_block_end();
      } else {
        fail("unexpected " + describe(t));
      }
    }
    return body;
  }

  // Called with the opening tag's `%}` as current token; consumes the end name when drop.
  Body parse_statements(std::initializer_list<const char*> end, bool drop_needle) {
    expect_block_end();
    Body body = subparse(end);
    if (cur().type == Tok::Eof) {
      std::string names;
      for (const char* e : end) names += std::string(names.empty() ? "" : " or ") + "'" + e + "'";
      fail("unexpected end of template, expected " + names);
    }
    if (drop_needle) next();
    return body;
  }

  StmtPtr parse_statement() {
    if (cur().type != Tok::Name) fail("tag name expected");
    const std::string tag = cur().text;
    int line = cur().line;
    if (tag == "if") return parse_if();
    if (tag == "for") return parse_for();
    if (tag == "set") return parse_set();
    if (tag == "macro") return parse_macro();
    if (tag == "call") return parse_call_block();
    if (tag == "filter") return parse_filter_block();
    if (tag == "with") return parse_with();
    if (tag == "print") {
      next();
      // {% print a, b %} writes each expression in turn.
      auto concat = std::make_unique<ConcatExpr>(line);
      while (cur().type != Tok::BlockEnd) {
        if (!concat->items.empty()) expect_op(",");
        concat->items.push_back(parse_expression(true));
      }
      return std::make_unique<PrintStmt>(std::move(concat), line);
    }
    if (tag == "break" || tag == "continue") {
      if (loop_depth_ == 0) fail("'" + tag + "' outside of a for loop");
      next();
      return std::make_unique<LoopControlStmt>(tag == "break" ? Stmt::Kind::Break : Stmt::Kind::Continue, line);
    }
    if (tag == "generation") {
      next();
      auto s = std::make_unique<ScopeStmt>(line);
      s->body = parse_statements({"endgeneration"}, true);
      return s;
    }
    static const std::set<std::string> kUnsupported = {"extends", "block", "include", "import", "from",
                                                       "autoescape", "do", "trans", "pluralize", "debug"};
    if (kUnsupported.count(tag)) fail("unsupported template construct '{% " + tag + " %}'");
    fail("unknown tag '" + tag + "'");
  }

  StmtPtr parse_if() {
    auto node = std::make_unique<IfStmt>(cur().line);
    next();
    while (true) {
      ExprPtr test = parse_tuple(false, false, {}, false);
      Body body = parse_statements({"elif", "else", "endif"}, false);
      node->branches.emplace_back(std::move(test), std::move(body));
      std::string needle = next().text;
      if (needle == "elif") continue;
      if (needle == "else") node->otherwise = parse_statements({"endif"}, true);
      break;
    }
    return node;
  }

  StmtPtr parse_for() {
    auto node = std::make_unique<ForStmt>(cur().line);
    next();
    node->target = parse_assign_target(true, false, {"in"}, false);
    if (!skip_name("in")) fail("expected 'in' in for loop, got " + describe(cur()));
    node->iter = parse_tuple(false, false, {"recursive"}, false);
    if (skip_name("if")) node->filter = parse_expression(true);
    if (is_name("recursive")) fail("unsupported template construct: recursive for loops");
    ++loop_depth_;
    node->body = parse_statements({"endfor", "else"}, false);
    --loop_depth_;
    if (next().text == "else") node->otherwise = parse_statements({"endfor"}, true);
    return node;
  }

  StmtPtr parse_set() {
    int line = cur().line;
    next();
    Target target = parse_assign_target(true, false, {}, true);
    if (skip_op("=")) {
      auto node = std::make_unique<SetStmt>(line);
      node->target = std::move(target);
      node->value = parse_tuple(false, true, {}, false);
      return node;
    }
    auto node = std::make_unique<SetBlockStmt>(line);
    node->target = std::move(target);
    if (is_op("|")) node->filters = parse_filter_chain(false);
    node->body = parse_statements({"endset"}, true);
    return node;
  }

  void parse_signature(MacroStmt& m) {
    expect_op("(");
    bool seen_default = false;
    while (!is_op(")")) {
      if (!m.params.empty()) expect_op(",");
      if (is_op(")")) break;
      MacroParam p;
      p.name = expect_name();
      if (skip_op("=")) {
        p.default_value = parse_expression(true);
        seen_default = true;
      } else if (seen_default) {
        fail("non-default argument follows default argument");
      }
      m.params.push_back(std::move(p));
    }
    expect_op(")");
  }

  // Records which of varargs / kwargs / caller a macro body mentions.
  void note_name(const std::string& n) {
    if (n != "varargs" && n != "kwargs" && n != "caller") return;
    for (MacroStmt* m : open_macros_) {
      if (n == "varargs") m->uses_varargs = true;
      if (n == "kwargs") m->uses_kwargs = true;
      if (n == "caller") m->uses_caller = true;
    }
  }

  void parse_macro_body(MacroStmt& m, const char* end) {
    open_macros_.push_back(&m);
    int saved_loops = loop_depth_;
    loop_depth_ = 0;
    m.body = parse_statements({end}, true);
    loop_depth_ = saved_loops;
    open_macros_.pop_back();
  }

  StmtPtr parse_macro() {
    auto node = std::make_unique<MacroStmt>(cur().line);
    next();
    node->name = expect_name();
    parse_signature(*node);
    parse_macro_body(*node, "endmacro");
    return node;
  }

  StmtPtr parse_call_block() {
    auto node = std::make_unique<CallBlockStmt>(cur().line);
    next();
    if (is_op("(")) parse_signature(node->caller);
    ExprPtr call = parse_expression(true);
    if (call->kind != Expr::Kind::Call) fail("expected a call after {% call %}");
    node->call.reset(static_cast<CallExpr*>(call.release()));
    node->caller.name = "caller";
    parse_macro_body(node->caller, "endcall");
    return node;
  }

  StmtPtr parse_filter_block() {
    auto node = std::make_unique<FilterBlockStmt>(cur().line);
    next();
    node->filters = parse_filter_chain(true);
    node->body = parse_statements({"endfilter"}, true);
    return node;
  }

  StmtPtr parse_with() {
    auto node = std::make_unique<WithStmt>(cur().line);
    next();
    while (cur().type != Tok::BlockEnd) {
      if (!node->assignments.empty()) expect_op(",");
      Target t = parse_assign_target(true, false, {}, false);
      expect_op("=");
      node->assignments.emplace_back(std::move(t), parse_expression(true));
    }
    node->body = parse_statements({"endwith"}, true);
    return node;
  }

  Target parse_assign_target(bool with_tuple, bool name_only, std::initializer_list<const char*> extra_end,
                             bool with_namespace) {
    Target t;
    if (with_namespace && cur().type == Tok::Name && look().type == Tok::Op && look().text == "." &&
        look(2).type == Tok::Name) {
      t.names.push_back(next().text);
      next();
      t.attr = next().text;
      return t;
    }
    if (name_only || !with_tuple) {
      t.names.push_back(expect_name());
      return t;
    }
    // A simplified tuple: names separated by commas, optionally parenthesized.
    bool paren = skip_op("(");
    while (true) {
      if (!t.names.empty()) {
        if (!skip_op(",")) break;
        t.is_tuple = true;
      }
      if (tuple_end(extra_end) || (paren && is_op(")"))) break;
      if (cur().type != Tok::Name) fail("can't assign to " + describe(cur()));
      std::string n = next().text;
      if (n == "true" || n == "false" || n == "none" || n == "True" || n == "False" || n == "None")
        fail("can't assign to constant '" + n + "'");
      t.names.push_back(n);
    }
    if (paren) {
      expect_op(")");
      t.is_tuple = true;
    }
    if (t.names.empty()) fail("expected an assignment target");
    return t;
  }

  // ---- expressions -------------------------------------------------------------------------

  bool tuple_end(std::initializer_list<const char*> extra_end) const {
    const Token& t = cur();
    if (t.type == Tok::VarEnd || t.type == Tok::BlockEnd || t.type == Tok::Eof) return true;
    if (t.type == Tok::Op && t.text == ")") return true;
    if (t.type == Tok::Name)
      for (const char* e : extra_end)
        if (t.text == e) return true;
    return false;
  }

  ExprPtr parse_tuple(bool simplified, bool with_condexpr, std::initializer_list<const char*> extra_end,
                      bool explicit_parens) {
    int line = cur().line;
    std::vector<ExprPtr> items;
    bool is_tuple = false;
    while (true) {
      if (!items.empty()) expect_op(",");
      if (tuple_end(extra_end)) break;
      if (simplified)
        items.push_back(parse_postfix(parse_primary()));
      else
        items.push_back(parse_expression(with_condexpr));
      if (is_op(","))
        is_tuple = true;
      else
        break;
    }
    if (!is_tuple) {
      if (!items.empty()) return std::move(items[0]);
      if (!explicit_parens) fail("expected an expression, got " + describe(cur()));
    }
    auto t = std::make_unique<SeqExpr>(Expr::Kind::Tuple, line);
    t->items = std::move(items);
    return t;
  }

  ExprPtr parse_expression(bool with_condexpr) {
    DepthGuard guard(*this);
    return with_condexpr ? parse_condexpr() : parse_or();
  }

  ExprPtr parse_condexpr() {
    int line = cur().line;
    ExprPtr expr = parse_or();
    while (skip_name("if")) {
      auto c = std::make_unique<CondExpr>(line);
      c->test = parse_or();
      c->then = std::move(expr);
      if (skip_name("else")) c->otherwise = parse_condexpr();
      expr = std::move(c);
    }
    return expr;
  }

  ExprPtr parse_or() {
    ExprPtr left = parse_and();
    while (is_name("or")) {
      int line = next().line;
      left = std::make_unique<BinaryExpr>(Expr::Kind::Or, "or", std::move(left), parse_and(), line);
    }
    return left;
  }

  ExprPtr parse_and() {
    ExprPtr left = parse_not();
    while (is_name("and")) {
      int line = next().line;
      left = std::make_unique<BinaryExpr>(Expr::Kind::And, "and", std::move(left), parse_not(), line);
    }
    return left;
  }

  ExprPtr parse_not() {
    if (is_name("not")) {
      DepthGuard guard(*this);
      int line = next().line;
      return std::make_unique<UnaryExpr>(Expr::Kind::Not, parse_not(), line);
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    int line = cur().line;
    ExprPtr expr = parse_math1();
    std::vector<std::pair<std::string, ExprPtr>> ops;
    while (true) {
      const Token& t = cur();
      if (t.type == Tok::Op && (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == "<=" ||
                                t.text == ">" || t.text == ">=")) {
        std::string op = next().text;
        ops.emplace_back(op, parse_math1());
      } else if (skip_name("in")) {
        ops.emplace_back("in", parse_math1());
      } else if (is_name("not") && look().type == Tok::Name && look().text == "in") {
        next();
        next();
        ops.emplace_back("notin", parse_math1());
      } else {
        break;
      }
    }
    if (ops.empty()) return expr;
    auto c = std::make_unique<CompareExpr>(line);
    c->first = std::move(expr);
    c->rest = std::move(ops);
    return c;
  }

  ExprPtr parse_math1() {
    ExprPtr left = parse_concat();
    while (is_op("+") || is_op("-")) {
      const Token& t = next();
      left = std::make_unique<BinaryExpr>(Expr::Kind::Binary, t.text, std::move(left), parse_concat(), t.line);
    }
    return left;
  }

  ExprPtr parse_concat() {
    int line = cur().line;
    ExprPtr first = parse_math2();
    if (!is_op("~")) return first;
    auto c = std::make_unique<ConcatExpr>(line);
    c->items.push_back(std::move(first));
    while (skip_op("~")) c->items.push_back(parse_math2());
    return c;
  }

  ExprPtr parse_math2() {
    ExprPtr left = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Token& t = next();
      left = std::make_unique<BinaryExpr>(Expr::Kind::Binary, t.text, std::move(left), parse_pow(), t.line);
    }
    return left;
  }

  ExprPtr parse_pow() {
    ExprPtr left = parse_unary(true);
    while (is_op("**")) {
      const Token& t = next();
      left = std::make_unique<BinaryExpr>(Expr::Kind::Binary, "**", std::move(left), parse_unary(true), t.line);
    }
    return left;
  }

  ExprPtr parse_unary(bool with_filter) {
    DepthGuard guard(*this);
    int line = cur().line;
    ExprPtr node;
    if (skip_op("-")) {
      node = std::make_unique<UnaryExpr>(Expr::Kind::Neg, parse_unary(false), line);
    } else if (skip_op("+")) {
      node = std::make_unique<UnaryExpr>(Expr::Kind::Pos, parse_unary(false), line);
    } else {
      node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    if (with_filter) node = parse_filter_expr(std::move(node));
    return node;
  }

  ExprPtr parse_primary() {
    const Token& t = cur();
    int line = t.line;
    switch (t.type) {
      case Tok::Name: {
        next();
        const std::string& n = t.text;
        if (n == "true" || n == "True") return std::make_unique<ConstExpr>(Value::boolean(true), line);
        if (n == "false" || n == "False") return std::make_unique<ConstExpr>(Value::boolean(false), line);
        if (n == "none" || n == "None") return std::make_unique<ConstExpr>(Value::none(), line);
        note_name(n);
        return std::make_unique<NameExpr>(n, line);
      }
      case Tok::String: {
        std::string s;
        while (cur().type == Tok::String) s += next().text;
        return std::make_unique<ConstExpr>(Value::string(std::move(s)), line);
      }
      case Tok::Int: next(); return std::make_unique<ConstExpr>(Value::integer(t.int_value), line);
      case Tok::Float: next(); return std::make_unique<ConstExpr>(Value::floating(t.float_value), line);
      case Tok::Op:
        if (t.text == "(") {
          next();
          ExprPtr e = parse_tuple(false, true, {}, true);
          expect_op(")");
          return e;
        }
        if (t.text == "[") return parse_list();
        if (t.text == "{") return parse_dict();
        break;
      default: break;
    }
    fail("unexpected " + describe(t));
  }

  ExprPtr parse_list() {
    auto node = std::make_unique<SeqExpr>(Expr::Kind::List, cur().line);
    expect_op("[");
    while (!is_op("]")) {
      if (!node->items.empty()) expect_op(",");
      if (is_op("]")) break;
      node->items.push_back(parse_expression(true));
    }
    expect_op("]");
    return node;
  }

  ExprPtr parse_dict() {
    auto node = std::make_unique<DictExpr>(cur().line);
    expect_op("{");
    while (!is_op("}")) {
      if (!node->items.empty()) expect_op(",");
      if (is_op("}")) break;
      ExprPtr key = parse_expression(true);
      expect_op(":");
      node->items.emplace_back(std::move(key), parse_expression(true));
    }
    expect_op("}");
    return node;
  }

  ExprPtr parse_postfix(ExprPtr node) {
    while (true) {
      if (is_op(".") || is_op("[")) {
        node = parse_subscript(std::move(node));
      } else if (is_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_filter_expr(ExprPtr node) {
    while (true) {
      if (is_op("|")) {
        for (FilterCall& f : parse_filter_chain(false)) {
          auto fe = std::make_unique<FilterExpr>(f.line);
          fe->target = std::move(node);
          fe->filter = std::move(f);
          node = std::move(fe);
        }
      } else if (is_name("is")) {
        node = parse_test(std::move(node));
      } else if (is_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr node) {
    const Token& t = next();
    int line = t.line;
    if (t.text == ".") {
      const Token& attr = next();
      if (attr.type == Tok::Name) return std::make_unique<AttrExpr>(std::move(node), attr.text, line);
      if (attr.type == Tok::Int)
        return std::make_unique<ItemExpr>(std::move(node), std::make_unique<ConstExpr>(Value::integer(attr.int_value), line), line);
      fail("expected name or number after '.'", line);
    }
    // '['
    std::vector<ExprPtr> args;
    while (!is_op("]")) {
      if (!args.empty()) expect_op(",");
      args.push_back(parse_subscribed(node, line));
      if (args.back() && args.back()->kind == Expr::Kind::Slice) {
        expect_op("]");
        return std::move(args.back());
      }
    }
    expect_op("]");
    if (args.empty()) fail("expected a subscript", line);
    ExprPtr key;
    if (args.size() == 1) {
      key = std::move(args[0]);
    } else {
      auto tup = std::make_unique<SeqExpr>(Expr::Kind::Tuple, line);
      tup->items = std::move(args);
      key = std::move(tup);
    }
    return std::make_unique<ItemExpr>(std::move(node), std::move(key), line);
  }

  // One subscript: an expression, or a slice (returned as a SliceExpr owning `node`).
  ExprPtr parse_subscribed(ExprPtr& node, int line) {
    ExprPtr start;
    if (!is_op(":")) {
      start = parse_expression(true);
      if (!is_op(":")) return start;
    }
    next();  // ':'
    auto s = std::make_unique<SliceExpr>(line);
    s->start = std::move(start);
    if (!is_op("]") && !is_op(",") && !is_op(":")) s->stop = parse_expression(true);
    if (skip_op(":")) {
      if (!is_op("]") && !is_op(",")) s->step = parse_expression(true);
    }
    if (!is_op("]")) fail("slices inside tuple subscripts are not supported", line);
    s->object = std::move(node);
    return s;
  }

  Arguments parse_call_args() {
    Arguments a;
    expect_op("(");
    while (!is_op(")")) {
      if (!a.positional.empty() || !a.keyword.empty()) {
        expect_op(",");
        if (is_op(")")) break;
      }
      if (is_op("*") || is_op("**")) fail("unsupported template construct: *args / **kwargs in calls");
      if (cur().type == Tok::Name && look().type == Tok::Op && look().text == "=") {
        std::string key = next().text;
        next();
        a.keyword.emplace_back(std::move(key), parse_expression(true));
      } else {
        if (!a.keyword.empty()) fail("positional argument follows keyword argument");
        a.positional.push_back(parse_expression(true));
      }
    }
    expect_op(")");
    return a;
  }

  ExprPtr parse_call(ExprPtr node) {
    auto c = std::make_unique<CallExpr>(cur().line);
    c->callee = std::move(node);
    c->args = parse_call_args();
    return c;
  }

  std::string parse_dotted_name() {
    std::string n = expect_name();
    while (is_op(".") && look().type == Tok::Name) {
      next();
      n += "." + next().text;
    }
    return n;
  }

  // `| f(args) | g ...`; with start_inline the first filter has no leading '|'.
  std::vector<FilterCall> parse_filter_chain(bool start_inline) {
    std::vector<FilterCall> chain;
    while (is_op("|") || start_inline) {
      if (!start_inline) next();
      start_inline = false;
      FilterCall f;
      f.line = cur().line;
      f.name = parse_dotted_name();
      f.fn = find_filter(f.name);
      if (!f.fn) {
        if (is_unsupported_filter(f.name)) fail("unsupported filter '" + f.name + "'", f.line);
        fail("no filter named '" + f.name + "'", f.line);
      }
      if (is_op("(")) f.args = parse_call_args();
      chain.push_back(std::move(f));
    }
    return chain;
  }

  ExprPtr parse_test(ExprPtr node) {
    auto t = std::make_unique<TestExpr>(cur().line);
    next();  // 'is'
    if (skip_name("not")) t->negated = true;
    t->name = parse_dotted_name();
    t->fn = find_test(t->name);
    if (!t->fn) fail("no test named '" + t->name + "'", t->line);
    const Token& c = cur();
    if (c.type == Tok::Op && c.text == "(") {
      t->args = parse_call_args();
    } else if ((c.type == Tok::Name || c.type == Tok::String || c.type == Tok::Int || c.type == Tok::Float ||
                (c.type == Tok::Op && (c.text == "[" || c.text == "{"))) &&
               !(c.type == Tok::Name && (c.text == "else" || c.text == "or" || c.text == "and"))) {
      if (c.type == Tok::Name && c.text == "is") fail("you cannot chain multiple tests with is");
      t->args.positional.push_back(parse_postfix(parse_primary()));
    }
    t->target = std::move(node);
    return t;
  }

  const std::vector<Token>& t_;
  const std::string& name_;
  ParseLimits limits_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
  std::vector<MacroStmt*> open_macros_;
};

}  // namespace

Body parse(const std::vector<Token>& tokens, const std::string& name, const ParseLimits& limits) {
  return Parser(tokens, name, limits).parse_template();
}

}  // namespace edgeinfer::jinja
