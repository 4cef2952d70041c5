// Internal to rules/ and prove/ (which verifies rules): a checked rule as
// data. Patterns are trees over IR ops (ir/ops.def names), variables (`?x`)
// and literals; attribute patterns (`:perm ?p`, `:axis 1`, `:* ?rest`)
// constrain or bind a node's attributes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "egraph/sexpr.h"
#include "ir/attribute.h"
#include "ir/op.h"
#include "rules/rules.h"

namespace refinery::rules {

// A position in a rule file, as the s-expression reader counts it.
using Pos = egraph::SourcePos;

// A literal value: an int, a float, a string, or a list of ints or floats.
using Literal = ir::AttrValue;

struct AttrPat {
  std::string name;  // an attribute of the op, or "*" (every attribute not named)
  bool is_var = false;
  std::string var;  // when is_var
  Literal literal;  // when !is_var
  Pos pos;
};

struct Pat {
  enum class Kind { Var, Op, Literal } kind = Kind::Var;
  std::string var;             // Var
  ir::Op op = ir::Op::Opaque;  // Op
  std::vector<AttrPat> attrs;  // Op
  int out = 0;                 // Op: which result of a multi-result op (:out)
  std::optional<int> nout;     // Op: how many results the op has (:nout); any when unset on the left
  std::vector<Pat> kids;       // Op
  Literal literal;             // Literal: a float or int (a scalar), or a list (a 1-d constant)
  Pos pos;
};

// A condition `(NAME ARG...)` or a computed variable `(?v (FN ARG...))`;
// an argument is a variable or a literal.
struct Arg {
  bool is_var = false;
  std::string var;
  Literal literal;
  Pos pos;
};

struct Cond {
  std::string name;
  std::vector<Arg> args;
  Pos pos;
};

struct Let {
  std::string var;
  std::string fn;
  std::vector<Arg> args;
  Pos pos;
};

enum class VarKind { Tensor, Attr, Rest, Computed };

struct RuleBody {
  // (root variable, pattern): the root is "" for a single-pattern rule.
  std::vector<std::pair<std::string, Pat>> lhs;
  std::vector<std::pair<std::string, Pat>> rhs;
  std::vector<Cond> conds;
  std::vector<Let> lets;
  std::vector<std::string> axioms;  // named Z3 axioms the proof may use
  // Spiking rules: the discretisations (euler, exact) and resets (zero,
  // subtract) the rule claims to hold for; none named: all (prove/induction.h).
  std::vector<std::string> dynamics;
  std::map<std::string, VarKind> vars;
};

// The kind of a rule with this body when the rule does not state one
// (rules/kind.cpp).
RuleKind kind_of(const RuleBody& body);

}  // namespace refinery::rules
