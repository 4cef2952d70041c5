// The rules of egg's math test suite (tests/math.rs), with its conditions
// IsConst, IsSym, IsNotZero and IsConstOrDistinctVar.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "egraph/egraph.h"
#include "egraph/rewrite.h"
#include "tests/egraph/math_analysis.h"
#include "tests/egraph/math_lang.h"

namespace refinery::egraph::math {

using MathGraph = EGraph<MathNode, ConstantFold>;
using MathRewrite = Rewrite<MathNode, ConstantFold>;
using MathCondition = Condition<MathNode, ConstantFold>;

// Test-side helper: a rule that must parse.
inline MathRewrite rw(std::string name, std::string_view lhs, std::string_view rhs) {
  auto r = MathRewrite::make(std::move(name), lhs, rhs);
  if (!r) throw std::runtime_error(r.error().to_string());
  return std::move(*r);
}

inline bool has_symbol(const MathGraph& g, Id id) {
  const auto& nodes = g[id].nodes;
  return std::any_of(nodes.begin(), nodes.end(), [](const MathNode& n) { return n.is_symbol(); });
}

inline MathCondition is_const(Var v) {
  return [v](const MathGraph& g, Id, Subst s) { return g[s[v]].data.has_value(); };
}
inline MathCondition is_sym(Var v) {
  return [v](const MathGraph& g, Id, Subst s) { return has_symbol(g, s[v]); };
}
inline MathCondition is_not_zero(Var v) {
  return [v](const MathGraph& g, Id, Subst s) {
    const auto& d = g[s[v]].data;
    return !d || d->value != 0.0;
  };
}
inline MathCondition is_const_or_distinct_var(Var v, Var w) {
  return [v, w](const MathGraph& g, Id, Subst s) {
    return g.find(s[v]) != g.find(s[w]) && (g[s[v]].data.has_value() || has_symbol(g, s[v]));
  };
}

// Adds a condition on the rule's own variables.
template <class MakeCond>
MathRewrite when(MathRewrite r, MakeCond make, std::string_view var) {
  Var v = r.var(var);
  return std::move(r).when(make(v));
}

inline std::vector<MathRewrite> math_rules() {
  std::vector<MathRewrite> rules;
  auto add = [&](MathRewrite r) { rules.push_back(std::move(r)); };
  add(rw("comm-add", "(+ ?a ?b)", "(+ ?b ?a)"));
  add(rw("comm-mul", "(* ?a ?b)", "(* ?b ?a)"));
  add(rw("assoc-add", "(+ ?a (+ ?b ?c))", "(+ (+ ?a ?b) ?c)"));
  add(rw("assoc-mul", "(* ?a (* ?b ?c))", "(* (* ?a ?b) ?c)"));

  add(rw("sub-canon", "(- ?a ?b)", "(+ ?a (* -1 ?b))"));
  add(when(rw("div-canon", "(/ ?a ?b)", "(* ?a (pow ?b -1))"), is_not_zero, "?b"));

  add(rw("zero-add", "(+ ?a 0)", "?a"));
  add(rw("zero-mul", "(* ?a 0)", "0"));
  add(rw("one-mul", "(* ?a 1)", "?a"));

  add(rw("add-zero", "?a", "(+ ?a 0)"));
  add(rw("mul-one", "?a", "(* ?a 1)"));

  add(rw("cancel-sub", "(- ?a ?a)", "0"));
  add(when(rw("cancel-div", "(/ ?a ?a)", "1"), is_not_zero, "?a"));

  add(rw("distribute", "(* ?a (+ ?b ?c))", "(+ (* ?a ?b) (* ?a ?c))"));
  add(rw("factor", "(+ (* ?a ?b) (* ?a ?c))", "(* ?a (+ ?b ?c))"));

  add(rw("pow-mul", "(* (pow ?a ?b) (pow ?a ?c))", "(pow ?a (+ ?b ?c))"));
  add(when(rw("pow0", "(pow ?x 0)", "1"), is_not_zero, "?x"));
  add(rw("pow1", "(pow ?x 1)", "?x"));
  add(rw("pow2", "(pow ?x 2)", "(* ?x ?x)"));
  add(when(rw("pow-recip", "(pow ?x -1)", "(/ 1 ?x)"), is_not_zero, "?x"));
  add(when(rw("recip-mul-div", "(* ?x (/ 1 ?x))", "1"), is_not_zero, "?x"));

  add(when(rw("d-variable", "(d ?x ?x)", "1"), is_sym, "?x"));
  {
    MathRewrite r = rw("d-constant", "(d ?x ?c)", "0");
    Var x = r.var("?x"), c = r.var("?c");
    add(std::move(r).when(is_sym(x)).when(is_const_or_distinct_var(c, x)));
  }

  add(rw("d-add", "(d ?x (+ ?a ?b))", "(+ (d ?x ?a) (d ?x ?b))"));
  add(rw("d-mul", "(d ?x (* ?a ?b))", "(+ (* ?a (d ?x ?b)) (* ?b (d ?x ?a)))"));

  add(rw("d-sin", "(d ?x (sin ?x))", "(cos ?x)"));
  add(rw("d-cos", "(d ?x (cos ?x))", "(* -1 (sin ?x))"));

  add(when(rw("d-ln", "(d ?x (ln ?x))", "(/ 1 ?x)"), is_not_zero, "?x"));

  {
    MathRewrite r =
        rw("d-power", "(d ?x (pow ?f ?g))", "(* (pow ?f ?g) (+ (* (d ?x ?f) (/ ?g ?f)) (* (d ?x ?g) (ln ?f))))");
    Var f = r.var("?f"), g = r.var("?g");
    add(std::move(r).when(is_not_zero(f)).when(is_not_zero(g)));
  }

  add(rw("i-one", "(i 1 ?x)", "?x"));
  add(when(rw("i-power-const", "(i (pow ?x ?c) ?x)", "(/ (pow ?x (+ ?c 1)) (+ ?c 1))"), is_const, "?c"));
  add(rw("i-cos", "(i (cos ?x) ?x)", "(sin ?x)"));
  add(rw("i-sin", "(i (sin ?x) ?x)", "(* -1 (cos ?x))"));
  add(rw("i-sum", "(i (+ ?f ?g) ?x)", "(+ (i ?f ?x) (i ?g ?x))"));
  add(rw("i-dif", "(i (- ?f ?g) ?x)", "(- (i ?f ?x) (i ?g ?x))"));
  add(rw("i-parts", "(i (* ?a ?b) ?x)", "(- (* ?a (i ?b ?x)) (i (* (d ?x ?a) (i ?b ?x)) ?x))"));
  return rules;
}

}  // namespace refinery::egraph::math
