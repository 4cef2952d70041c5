// Explanations: a proof between two equal terms is found, every step
// replays as an instance of its rule at its position, and tampered proofs
// are rejected.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "egraph/proof.h"
#include "egraph/proof_check.h"
#include "tests/egraph/math_suite.h"

namespace refinery::egraph::math {
namespace {

// A constant-fold step: (op c1 c2) <-> the constant it evaluates to.
bool folds(const RecExpr<MathNode>& t, Id at, double value) {
  const MathNode& n = t[at];
  if (n.arity != 2) return false;
  const MathNode& a = t[n.kids[0]];
  const MathNode& b = t[n.kids[1]];
  if (!a.is_constant() || !b.is_constant()) return false;
  double x = a.value(), y = b.value(), r = 0;
  switch (n.op) {
    case MathOp::Add: r = x + y; break;
    case MathOp::Sub: r = x - y; break;
    case MathOp::Mul: r = x * y; break;
    case MathOp::Div: r = x / y; break;
    default: return false;
  }
  return r == value || (r == 0 && value == 0);
}

StepValidators<MathNode> fold_validator() {
  return {{kConstantFold, [](const RecExpr<MathNode>& before, Id b, const RecExpr<MathNode>& after, Id a) {
             if (after[a].is_constant() && folds(before, b, after[a].value())) return true;
             return before[b].is_constant() && folds(after, a, before[b].value());
           }}};
}

using Proof = Explanation<MathNode>;

std::expected<void, std::string> check_assoc(const Proof& p, const std::vector<Rewrite<MathNode, NoAnalysis>>& rules) {
  return check_proof<MathNode, NoAnalysis>(p, rules);
}
std::expected<void, std::string> check_math(const Proof& p, const std::vector<MathRewrite>& rules) {
  return check_proof<MathNode, ConstantFold>(p, rules, fold_validator());
}

template <class A>
Proof prove(EGraph<MathNode, A>& g, std::string_view from, std::string_view to) {
  auto p = explain_equivalence(g, must_parse(from), must_parse(to));
  if (!p) throw std::runtime_error(p.error());
  return *p;
}

TEST(Explain, AssocCommProofReplays) {
  Runner<MathNode, NoAnalysis> r(RunnerLimits{}, EGraph<MathNode, NoAnalysis>(NoAnalysis{}, {.explanations = true}));
  r.set_scheduler(std::make_unique<SimpleScheduler>());
  r.add_expr(must_parse("(+ 1 (+ 2 3))"));
  auto rules = assoc_rules();
  EXPECT_EQ(r.run(rules).kind, StopKind::Saturated);
  Proof p = prove(r.egraph, "(+ 1 (+ 2 3))", "(+ 3 (+ 2 1))");
  EXPECT_EQ(p.steps.front().term.to_string(), "(+ 1 (+ 2 3))");
  EXPECT_EQ(p.steps.back().term.to_string(), "(+ 3 (+ 2 1))");
  EXPECT_GE(p.num_rewrites(), 2u);
  auto ok = check_assoc(p, rules);
  EXPECT_TRUE(ok) << ok.error() << "\n" << p.to_string();
}

TEST(Explain, CongruenceBecomesStepsInsideTheTerm) {
  Runner<MathNode, NoAnalysis> r(RunnerLimits{}, EGraph<MathNode, NoAnalysis>(NoAnalysis{}, {.explanations = true}));
  r.add_expr(must_parse("(sin (+ x y))"));
  auto rules = assoc_rules();
  r.run(rules);
  Proof p = prove(r.egraph, "(sin (+ x y))", "(sin (+ y x))");
  ASSERT_EQ(p.num_rewrites(), 1u) << p.to_string();
  EXPECT_EQ(p.steps[1].rule, "comm-add");
  EXPECT_EQ(p.steps[1].position, std::vector<std::uint32_t>{0});
  EXPECT_TRUE(check_assoc(p, rules));
}

// What the equality of two terms owes (ProofForest::owed): the rules on the
// path between them and the rules that made the nodes their matches needed.
// (sin (* x 2)) becomes (* 2 (* (sin x) (cos x))) by sin-of-double, whose
// match needed (+ x x) in the class of (* x 2): only double-as-add made it,
// and that class is not read by the result.
TEST(Explain, OwedNamesTheRuleThatMadeTheMatchedNode) {
  using R = Rewrite<MathNode, NoAnalysis>;
  std::vector<R> rules;
  for (auto [name, lhs, rhs] : {std::tuple{"double-as-add", "(* ?a 2)", "(+ ?a ?a)"},
                                {"sin-of-double", "(sin (+ ?a ?a))", "(* 2 (* (sin ?a) (cos ?a)))"},
                                {"comm-mul", "(* ?a ?b)", "(* ?b ?a)"}})
    rules.push_back(R::make(name, lhs, rhs).value());
  Runner<MathNode, NoAnalysis> r(RunnerLimits{}, EGraph<MathNode, NoAnalysis>(NoAnalysis{}, {.explanations = true}));
  Id start = r.add_expr(must_parse("(sin (* x 2))"));
  EXPECT_EQ(r.run(rules).kind, StopKind::Saturated);
  Id goal = r.egraph.add_expr(must_parse("(* 2 (* (sin x) (cos x)))"));
  r.egraph.rebuild();
  ASSERT_EQ(r.egraph.find(start), r.egraph.find(goal));
  const auto& forest = *r.egraph.proof_forest();
  std::vector<std::string> owed;
  for (std::uint32_t reason : forest.owed(start, goal)) owed.push_back(forest.reason_name(reason));
  std::sort(owed.begin(), owed.end());
  EXPECT_EQ(owed, (std::vector<std::string>{"double-as-add", "sin-of-double"}));
}

class ExplainMath : public ::testing::TestWithParam<std::string_view> {};

TEST_P(ExplainMath, GoalProofReplaysWithConstantFolding) {
  auto cases = math_cases();
  auto it = std::find_if(cases.begin(), cases.end(), [&](const MathCase& c) { return c.name == GetParam(); });
  ASSERT_NE(it, cases.end());
  MathResult res = run_math_case(*it, SchedulerChoice::AsInEgg, {.explanations = true}, true);
  ASSERT_TRUE(res.proved);
  auto& g = res.runner->egraph;
  Proof p = prove(g, it->start, it->goals.front());
  auto rules = math_rules();
  auto ok = check_math(p, rules);
  EXPECT_TRUE(ok) << ok.error() << "\n" << p.to_string();
  EXPECT_EQ(p.steps.back().term.to_string(), must_parse(it->goals.front()).to_string());
}

INSTANTIATE_TEST_SUITE_P(Egg, ExplainMath,
                         ::testing::Values("math_simplify_add", "math_simplify_const", "math_diff_same",
                                           "math_diff_simple1", "math_diff_simple2", "diff_power_simple", "integ_one",
                                           "integ_sin", "integ_x", "integ_part1", "math_powers"),
                         [](const auto& info) { return std::string(info.param); });

TEST(Explain, TamperedProofsAreRejected) {
  Runner<MathNode, NoAnalysis> r(RunnerLimits{}, EGraph<MathNode, NoAnalysis>(NoAnalysis{}, {.explanations = true}));
  r.add_expr(must_parse("(+ 1 (+ 2 3))"));
  auto rules = assoc_rules();
  r.run(rules);
  Proof good = prove(r.egraph, "(+ 1 (+ 2 3))", "(+ (+ 2 3) 1)");
  ASSERT_TRUE(check_assoc(good, rules));
  ASSERT_EQ(good.num_rewrites(), 1u);

  Proof wrong_rule = good;
  wrong_rule.steps[1].rule = "assoc-add";
  EXPECT_EQ(check_assoc(wrong_rule, rules).error(), "step 1 (assoc-add at []): not an instance of the rule");

  Proof assoc = prove(r.egraph, "(+ 1 (+ 2 3))", "(+ (+ 1 2) 3)");
  ASSERT_EQ(assoc.num_rewrites(), 1u) << assoc.to_string();
  ASSERT_TRUE(check_assoc(assoc, rules));
  Proof wrong_direction = assoc;
  wrong_direction.steps[1].forward = false;
  EXPECT_FALSE(check_assoc(wrong_direction, rules));

  Proof wrong_position = good;
  wrong_position.steps[1].position = {1};
  EXPECT_FALSE(check_assoc(wrong_position, rules));

  Proof wrong_term = good;
  wrong_term.steps[1].term = must_parse("(+ (+ 2 4) 1)");
  EXPECT_FALSE(check_assoc(wrong_term, rules));

  Proof unknown = good;
  unknown.steps[1].rule = "magic";
  EXPECT_EQ(check_assoc(unknown, rules).error(), "step 1 (magic at []): unknown rule");
}

TEST(Explain, OffByDefault) {
  EGraph<MathNode, NoAnalysis> g;
  EXPECT_FALSE(g.explanations_enabled());
  auto p = explain_equivalence(g, must_parse("x"), must_parse("x"));
  EXPECT_FALSE(p);
}

TEST(Explain, UnequalTermsHaveNoProof) {
  EGraph<MathNode, NoAnalysis> g(NoAnalysis{}, {.explanations = true});
  auto p = explain_equivalence(g, must_parse("x"), must_parse("y"));
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error(), "x and y are not equal");
}

}  // namespace
}  // namespace refinery::egraph::math
