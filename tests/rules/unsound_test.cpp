// Plausible but unsound rules are refuted with a counterexample; a sound
// rule is proved, and the interpreter agrees with the proof.
#include <gtest/gtest.h>

#include <filesystem>

#include "rules/rules.h"
#include "rules/verify.h"

namespace refinery::rules {
namespace {

TEST(RuleVerify, UnsoundRulesAreRefuted) {
  auto set = load_rules({std::filesystem::path(REFINERY_SOURCE_DIR) / "tests/rules/unsound.rules"});
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

}  // namespace
}  // namespace refinery::rules
