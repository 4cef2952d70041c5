// Plausible but unsound rules are refuted with a counterexample; a sound
// rule is proved, and the interpreter agrees with the proof.
#include <gtest/gtest.h>

#include <map>

#include <filesystem>

#include "prove/verify.h"
#include "rules/rules.h"

namespace refinery::prove {
namespace {

using rules::load_rules;
using rules::parse_rules;
using rules::Rule;

TEST(RuleVerify, UnsoundRulesAreRefuted) {
  auto set = load_rules({std::filesystem::path(REFINERY_SOURCE_DIR) / "tests/prove/unsound.rules"});
  ASSERT_TRUE(set.has_value()) << set.error().str();
  VerifyOptions opt;
  opt.fp32 = false;
  for (const Rule& r : set->rules()) {
    RuleReport rep = verify_rule(r, opt);
    EXPECT_EQ(rep.verdict, Verdict::Refuted) << r.name << ": " << rep.message;
    EXPECT_NE(rep.counterexample.find("lhs = "), std::string::npos) << r.name << "\n" << rep.counterexample;
  }
}

TEST(RuleVerify, SoundRuleIsProvedAndClassified) {
  auto set = parse_rules("(rule neg-neg (neg (neg ?a)) => ?a)\n(rule add-zero (add ?a 0.0) => ?a)", "t.rules");
  ASSERT_TRUE(set.has_value());
  RuleReport a = verify_rule(set->rules()[0], {});
  EXPECT_EQ(a.verdict, Verdict::Proved);
  EXPECT_EQ(a.fp32, "exact");
  EXPECT_EQ(a.numeric, "agree");
  RuleReport b = verify_rule(set->rules()[1], {});
  EXPECT_EQ(b.verdict, Verdict::Proved);
  EXPECT_EQ(b.fp32, "reals-only");  // -0 + 0 is +0 in binary32
}

// The binary32 classification settles what bit-blasting alone left unknown:
// commutation and the sign laws are bit-exact and proved at once; a rounding
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
  std::map<std::string, std::string> want = {{"c", "exact"}, {"n", "exact"},         {"s", "exact"},
                                             {"t", "exact"}, {"assoc", "reals-only"}, {"e", "reals-only"}};
  for (const Rule& rule : set->rules()) {
    if (!want.contains(rule.name)) continue;
    RuleReport r = verify_rule(rule, quick);
    EXPECT_EQ(r.verdict, Verdict::Proved) << rule.name << ": " << r.message;
    EXPECT_EQ(r.fp32, want[rule.name]) << rule.name;
  }
}

}  // namespace
}  // namespace refinery::prove
