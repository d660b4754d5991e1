#pragma once
// Syntax tree of a parsed template. Nodes are immutable after parsing; the interpreter walks
// them with a switch on `kind`. Filters and tests are resolved to function pointers at parse
// time, so an unknown name fails when the template is loaded, as in jinja2.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/jinja/value.h"

namespace edgeinfer::jinja {

using FilterFn = Value (*)(Interpreter&, const Value& input, CallArgs& args);
using TestFn = bool (*)(Interpreter&, const Value& input, CallArgs& args);

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Arguments {
  std::vector<ExprPtr> positional;
  std::vector<std::pair<std::string, ExprPtr>> keyword;
};

struct Expr {
  enum class Kind {
    Const, Name, List, Tuple, Dict, Attr, Item, Slice, Call, Filter, Test,
    Neg, Pos, Not, Binary, And, Or, Compare, Concat, Cond
  };
  Kind kind;
  int line;
  Expr(Kind k, int l) : kind(k), line(l) {}
  virtual ~Expr() = default;
};

struct ConstExpr : Expr {
  Value value;
  ConstExpr(Value v, int l) : Expr(Kind::Const, l), value(std::move(v)) {}
};

struct NameExpr : Expr {
  std::string name;
  NameExpr(std::string n, int l) : Expr(Kind::Name, l), name(std::move(n)) {}
};

// List, Tuple literals.
struct SeqExpr : Expr {
  std::vector<ExprPtr> items;
  SeqExpr(Kind k, int l) : Expr(k, l) {}
};

struct DictExpr : Expr {
  std::vector<std::pair<ExprPtr, ExprPtr>> items;
  explicit DictExpr(int l) : Expr(Kind::Dict, l) {}
};

struct AttrExpr : Expr {
  ExprPtr object;
  std::string name;
  AttrExpr(ExprPtr o, std::string n, int l) : Expr(Kind::Attr, l), object(std::move(o)), name(std::move(n)) {}
};

struct ItemExpr : Expr {
  ExprPtr object, key;
  ItemExpr(ExprPtr o, ExprPtr k, int l) : Expr(Kind::Item, l), object(std::move(o)), key(std::move(k)) {}
};

struct SliceExpr : Expr {
  ExprPtr object, start, stop, step;  // bounds may be null
  explicit SliceExpr(int l) : Expr(Kind::Slice, l) {}
};

struct CallExpr : Expr {
  ExprPtr callee;
  Arguments args;
  explicit CallExpr(int l) : Expr(Kind::Call, l) {}
};

struct FilterCall {
  std::string name;
  FilterFn fn = nullptr;
  Arguments args;
  int line = 0;
};

struct FilterExpr : Expr {
  ExprPtr target;
  FilterCall filter;
  explicit FilterExpr(int l) : Expr(Kind::Filter, l) {}
};

struct TestExpr : Expr {
  ExprPtr target;
  std::string name;
  TestFn fn = nullptr;
  Arguments args;
  bool negated = false;
  explicit TestExpr(int l) : Expr(Kind::Test, l) {}
};

struct UnaryExpr : Expr {
  ExprPtr operand;
  UnaryExpr(Kind k, ExprPtr o, int l) : Expr(k, l), operand(std::move(o)) {}
};

// Binary arithmetic (op is "+", "-", "*", "/", "//", "%", "**") and And / Or.
struct BinaryExpr : Expr {
  std::string op;
  ExprPtr left, right;
  BinaryExpr(Kind k, std::string o, ExprPtr a, ExprPtr b, int l)
      : Expr(k, l), op(std::move(o)), left(std::move(a)), right(std::move(b)) {}
};

// Chained comparison a < b <= c; ops are "==", "!=", "<", "<=", ">", ">=", "in", "notin".
struct CompareExpr : Expr {
  ExprPtr first;
  std::vector<std::pair<std::string, ExprPtr>> rest;
  explicit CompareExpr(int l) : Expr(Kind::Compare, l) {}
};

struct ConcatExpr : Expr {
  std::vector<ExprPtr> items;
  explicit ConcatExpr(int l) : Expr(Kind::Concat, l) {}
};

struct CondExpr : Expr {
  ExprPtr test, then, otherwise;  // otherwise may be null (→ undefined)
  explicit CondExpr(int l) : Expr(Kind::Cond, l) {}
};

// ---- statements ---------------------------------------------------------------------------

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

// Assignment target: a name, a tuple of names, or namespace attribute `ns.attr`.
struct Target {
  std::vector<std::string> names;  // one name, or several for tuple unpacking
  bool is_tuple = false;
  std::string attr;  // non-empty: names[0].attr
};

struct Stmt {
  enum class Kind { Data, Print, If, For, Set, SetBlock, Macro, CallBlock, FilterBlock, With, Break, Continue, Scope };
  Kind kind;
  int line;
  Stmt(Kind k, int l) : kind(k), line(l) {}
  virtual ~Stmt() = default;
};

struct DataStmt : Stmt {
  std::string text;
  DataStmt(std::string t, int l) : Stmt(Kind::Data, l), text(std::move(t)) {}
};

struct PrintStmt : Stmt {
  ExprPtr expr;
  PrintStmt(ExprPtr e, int l) : Stmt(Kind::Print, l), expr(std::move(e)) {}
};

struct IfStmt : Stmt {
  std::vector<std::pair<ExprPtr, Body>> branches;  // if / elif
  Body otherwise;
  explicit IfStmt(int l) : Stmt(Kind::If, l) {}
};

struct ForStmt : Stmt {
  Target target;
  ExprPtr iter, filter;  // filter may be null
  Body body, otherwise;
  explicit ForStmt(int l) : Stmt(Kind::For, l) {}
};

struct SetStmt : Stmt {
  Target target;
  ExprPtr value;
  explicit SetStmt(int l) : Stmt(Kind::Set, l) {}
};

struct SetBlockStmt : Stmt {
  Target target;
  std::vector<FilterCall> filters;
  Body body;
  explicit SetBlockStmt(int l) : Stmt(Kind::SetBlock, l) {}
};

struct MacroParam {
  std::string name;
  ExprPtr default_value;  // may be null
};

struct MacroStmt : Stmt {
  std::string name;
  std::vector<MacroParam> params;
  Body body;
  bool uses_varargs = false, uses_kwargs = false, uses_caller = false;
  explicit MacroStmt(int l) : Stmt(Kind::Macro, l) {}
};

// {% call(params) macro(args) %}body{% endcall %}: body becomes `caller` inside the macro.
struct CallBlockStmt : Stmt {
  std::unique_ptr<CallExpr> call;
  MacroStmt caller;
  explicit CallBlockStmt(int l) : Stmt(Kind::CallBlock, l), caller(l) {}
};

struct FilterBlockStmt : Stmt {
  std::vector<FilterCall> filters;
  Body body;
  explicit FilterBlockStmt(int l) : Stmt(Kind::FilterBlock, l) {}
};

struct WithStmt : Stmt {
  std::vector<std::pair<Target, ExprPtr>> assignments;
  Body body;
  explicit WithStmt(int l) : Stmt(Kind::With, l) {}
};

// A body rendered in place in a child scope (transformers' {% generation %} marker).
struct ScopeStmt : Stmt {
  Body body;
  explicit ScopeStmt(int l) : Stmt(Kind::Scope, l) {}
};

struct LoopControlStmt : Stmt {
  using Stmt::Stmt;
};

}  // namespace edgeinfer::jinja
