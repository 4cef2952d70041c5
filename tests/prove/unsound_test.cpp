// Plausible but unsound rules are refuted with a counterexample; a sound
// rule is proved, and the interpreter agrees with the proof.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include <filesystem>

#include "prove/verify.h"
#include "rules/rules.h"

namespace refinery::prove {
namespace {

using rules::load_rules;
using rules::parse_rules;
using rules::Rule;

// Each rule of unsound.rules is refuted, over the reals or in binary32
// (special values), or, where only the right side's definedness fails,
// proved only if the condition it lacks; never proved.
TEST(RuleVerify, UnsoundRulesAreRefuted) {
  auto set = load_rules({std::filesystem::path(REFINERY_SOURCE_DIR) / "tests/prove/unsound.rules"});
  ASSERT_TRUE(set.has_value()) << set.error().str();
  const std::map<std::string, std::string> refuted_in = {
      {"div-cancel-unconditioned", "binary32"},
      {"mul-recip-is-one", "binary32"},
      {"div-self-is-one", "binary32"},
      {"exp-log", "binary32"},
      {"sqrt-of-square", "reals"},
      {"attention-heads-joined-in-place", "reals"},
      {"attention-divided-scale-as-the-ops", "reals"},
      {"attention-divided-score-folded-into-the-weight-only", "reals"},
      {"attention-mask-divided-read-as-added-after", "reals"},
      {"matmul-heads-unmerged-swapped", "reals"}};
  const std::map<std::string, std::string> only_if = {{"abs-as-sqrt-product", "?x >= 0"},
                                                      {"mul-as-div-recip", "?y != 0"}};
  // With the numeric check: where Z3 times out (softmax-scale-invariant's
  // largest instance), the interpreter's disagreement, replayed in f64,
  // refutes the rule.
  VerifyOptions opt;
  for (const Rule& r : set->rules()) {
    RuleReport rep = verify_rule(r, opt);
    // (a multi-pattern rule's sides have one value per root: lhs0, lhs1, ...)
    EXPECT_TRUE(rep.counterexample.find("lhs = ") != std::string::npos ||
                rep.counterexample.find("lhs0 = ") != std::string::npos)
        << r.name << "\n"
        << rep.counterexample;
    if (auto it = only_if.find(r.name); it != only_if.end()) {
      EXPECT_EQ(rep.verdict, Verdict::ProvedIf) << r.name << ": " << verdict_name(rep.verdict) << " " << rep.message;
      EXPECT_EQ(rep.condition, it->second) << r.name;
      continue;
    }
    EXPECT_EQ(rep.verdict, Verdict::Refuted) << r.name << ": " << verdict_name(rep.verdict) << " " << rep.message;
    if (auto it = refuted_in.find(r.name); it != refuted_in.end()) {
      EXPECT_EQ(rep.domain, it->second) << r.name;
    }
  }
}

// Sound rules that only the definedness model proves (a condition that
// makes a divisor nonzero, a right side whose divisor cannot be zero,
// 1 / (1 / 0) = 0 in binary32) are proved, and the interpreter agrees.
TEST(RuleVerify, SoundRulesAreProved) {
  auto set = load_rules({std::filesystem::path(REFINERY_SOURCE_DIR) / "tests/prove/sound.rules"});
  ASSERT_TRUE(set.has_value()) << set.error().str();
  for (const Rule& r : set->rules()) {
    RuleReport rep = verify_rule(r, {});
    EXPECT_TRUE(is_proved(rep.verdict)) << r.name << ": " << verdict_name(rep.verdict) << " " << rep.condition << " "
                                        << rep.message << "\n"
                                        << rep.counterexample;
    EXPECT_EQ(rep.numeric, "agree") << r.name;
  }
}

// The claim of the issue (#17): x * 0 / 0 is NaN in binary32, so the
// cancellation is refuted there, with the input that shows it; with
// `nonzero ?y` it is proved (rounding aside).
TEST(RuleVerify, CancellationNeedsANonzeroDivisor) {
  auto set = parse_rules(
      "(rule bare (div (mul ?x ?y) ?y) => ?x)\n"
      "(rule guarded (div (mul ?x ?y) ?y) => ?x :when ((nonzero ?y)))",
      "t.rules");
  ASSERT_TRUE(set.has_value()) << set.error().str();
  RuleReport bare = verify_rule(set->rules()[0], {});
  EXPECT_EQ(bare.verdict, Verdict::Refuted);
  EXPECT_EQ(bare.domain, "binary32");
  EXPECT_NE(bare.counterexample.find("lhs = [nan"), std::string::npos) << bare.counterexample;
  EXPECT_NE(bare.counterexample.find("needs ?y != 0"), std::string::npos) << bare.counterexample;
  RuleReport guarded = verify_rule(set->rules()[1], {});
  EXPECT_EQ(guarded.verdict, Verdict::ProvedReals) << guarded.message << guarded.counterexample;
  EXPECT_NE(verdict_name(bare.verdict), verdict_name(guarded.verdict));
}

// At an instance with an empty inner dim, exp(0 / s) against exp(0): the
// binary32 class query alone cannot settle it (exp is uninterpreted, so
// exp(-0) and exp(+0) may differ in its models, which do not replay), but
// nothing there lacks a real value and the division is defined wherever
// `nonzero ?s` holds, so both sides are finite over the reals and the
// class query is settled over the reals (docs/rules.md, Empty dims).
TEST(RuleVerify, EmptyDimsWithEveryOperationDefinedAreSettledOverTheReals) {
  auto set = parse_rules(
      "(rule e (exp (div (matmul ?q ?k) ?s)) => (exp (matmul (div ?q ?s) ?k))"
      " :when ((rank ?q 2) (rank ?k 2) (rank ?s 0) (nonzero ?s)))",
      "t.rules");
  ASSERT_TRUE(set.has_value()) << set.error().str();
  VerifyOptions quick;
  quick.fp32 = false;  // the empty instances' class query runs all the same
  RuleReport r = verify_rule(set->rules()[0], quick);
  EXPECT_EQ(r.verdict, Verdict::ProvedReals) << r.message << r.counterexample;
  EXPECT_TRUE(std::any_of(r.shapes.begin(), r.shapes.end(), [](const std::string& s) {
    return s.find("x0 ") != std::string::npos;
  })) << ::testing::PrintToString(r.shapes);
}

TEST(RuleVerify, SoundRuleIsProvedAndClassified) {
  auto set = parse_rules("(rule neg-neg (neg (neg ?a)) => ?a)\n(rule add-zero (add ?a 0.0) => ?a)", "t.rules");
  ASSERT_TRUE(set.has_value());
  RuleReport a = verify_rule(set->rules()[0], {});
  EXPECT_EQ(a.verdict, Verdict::ProvedExact);
  EXPECT_EQ(a.numeric, "agree");
  RuleReport b = verify_rule(set->rules()[1], {});
  EXPECT_EQ(b.verdict, Verdict::ProvedReals);  // -0 + 0 is +0 in binary32
  EXPECT_NE(b.rounding.find("lhs = "), std::string::npos) << b.rounding;
}

// The binary32 classification settles what bit-blasting alone left unknown:
// commutation and the sign laws are bit-exact (NaN, infinities and signed
// zeros included) and proved at once; a rounding
// difference (associativity) is found on concrete binary32 inputs; a proof
// that needs a law of exp holds over the reals only.
TEST(RuleVerify, Binary32ClassificationOfCommonLaws) {
  auto set = parse_rules(
      "(rule c (add ?a ?b) => (add ?b ?a))\n"
      "(rule n (neg (mul ?a ?b)) => (mul (neg ?a) ?b))\n"
      "(rule s (sub ?a (neg ?b)) => (add ?a ?b))\n"
      "(rule t (mul ?a 2.0) => (add ?a ?a))\n"
      "(rule assoc (add (add ?a ?b) ?c) => (add ?a (add ?b ?c)))\n"
      "(rule e (exp (add ?a ?b)) => (mul (exp ?a) (exp ?b)) :when ((same-shape ?a ?b)) :axioms (exp-add))",
      "t.rules");
  ASSERT_TRUE(set.has_value()) << set.error().str();
  VerifyOptions quick;
  quick.numeric = false;
  std::map<std::string, Verdict> want = {{"c", Verdict::ProvedExact},     {"n", Verdict::ProvedExact},
                                         {"s", Verdict::ProvedExact},     {"t", Verdict::ProvedExact},
                                         {"assoc", Verdict::ProvedReals}, {"e", Verdict::ProvedReals}};
  for (const Rule& rule : set->rules()) {
    if (!want.contains(rule.name)) continue;
    RuleReport r = verify_rule(rule, quick);
    EXPECT_EQ(r.verdict, want[rule.name]) << rule.name << ": " << verdict_name(r.verdict) << " " << r.message;
  }
}

// Issue #17, item 4: a counterexample is replayed in the interpreter and
// printed with its values; a solver's model that interprets sigmoid freely
// (sigmoid(-x) = 1 - sigmoid(x) without its axiom) does not replay and is
// no refutation; log(exp(x)) = x is proved once the inverse law is learned.
TEST(RuleVerify, CounterexamplesAreReplayed) {
  auto set = parse_rules(
      "(rule bare (sigmoid (neg ?x)) => (sub 1.0 (sigmoid ?x)))\n"
      "(rule wrong (tanh (neg ?x)) => (tanh ?x))\n"
      "(rule inverse (log (exp ?x)) => ?x)",
      "t.rules");
  ASSERT_TRUE(set.has_value()) << set.error().str();
  VerifyOptions quick;
  quick.numeric = false;
  RuleReport bare = verify_rule(set->rules()[0], quick);
  EXPECT_EQ(bare.verdict, Verdict::Unknown) << verdict_name(bare.verdict) << "\n" << bare.counterexample;
  EXPECT_NE(bare.message.find("did not replay"), std::string::npos) << bare.message;
  RuleReport wrong = verify_rule(set->rules()[1], quick);
  EXPECT_EQ(wrong.verdict, Verdict::Refuted);
  EXPECT_NE(wrong.counterexample.find("(replayed in the interpreter, f64)"), std::string::npos) << wrong.counterexample;
  RuleReport inverse = verify_rule(set->rules()[2], quick);
  EXPECT_EQ(inverse.verdict, Verdict::ProvedReals) << verdict_name(inverse.verdict) << " " << inverse.message;
}

}  // namespace
}  // namespace refinery::prove
