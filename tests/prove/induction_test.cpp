// Rules over the NIR primitives are proved by induction over time
// (prove/induction.h): the library's spiking family is proved for every
// discretisation and reset, and the plausible but wrong rules of
// spiking.rules are refuted with a run from zero state, or proved only for
// the modes they claim.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "prove/verify.h"
#include "rules/rule_ast.h"
#include "rules/rules.h"

namespace refinery::prove {
namespace {

TEST(Induction, WrongSpikingRulesAreRefutedAndModeClaimsHonoured) {
  auto set = rules::load_rules({std::filesystem::path(REFINERY_SOURCE_DIR) / "tests/prove/spiking.rules"});
  ASSERT_TRUE(set.has_value()) << set.error().str();
  int refuted = 0, proved = 0;
  for (const rules::Rule& r : set->rules()) {
    RuleReport rep = verify_rule(r, VerifyOptions{});
    if (r.name.starts_with("refuted-")) {
      EXPECT_EQ(rep.verdict, Verdict::Refuted) << r.name << ": " << verdict_name(rep.verdict) << " " << rep.message;
      EXPECT_NE(rep.counterexample.find("the outputs differ"), std::string::npos) << rep.counterexample;
      ++refuted;
    } else {
      EXPECT_EQ(rep.verdict, Verdict::ProvedReals) << r.name << ": " << verdict_name(rep.verdict) << " " << rep.message;
      // the claimed modes, and only those
      const auto& claimed = r.body->dynamics;
      auto claims = [&](const char* m) { return std::find(claimed.begin(), claimed.end(), m) != claimed.end(); };
      for (const char* disc : {"euler", "exact"})
        for (const char* reset : {"zero", "subtract"}) {
          bool in = (claims(disc) || !(claims("euler") || claims("exact"))) &&
                    (claims(reset) || !(claims("zero") || claims("subtract")));
          EXPECT_EQ(rep.message.find(fmt::format("{}/{}", disc, reset)) != std::string::npos, in)
              << r.name << ": " << rep.message;
        }
      ++proved;
    }
  }
  EXPECT_EQ(refuted, 12);
  EXPECT_EQ(proved, 2);
}

// The zero reset's counterexample names the mode it fails in.
TEST(Induction, CounterexampleNamesTheMode) {
  auto set = rules::parse_rules(
      "(rule r (lif ?x ?tau ?r ?vl ?th ?vr) => (lif ?x ?tau ?r ?vl ?th 0) :when ((rank ?x 1)))", "<test>");
  ASSERT_TRUE(set.has_value()) << set.error().str();
  RuleReport rep = verify_rule(set->rules().front(), VerifyOptions{});
  ASSERT_EQ(rep.verdict, Verdict::Refuted);
  EXPECT_NE(rep.counterexample.find("/zero)"), std::string::npos) << rep.counterexample;
}

// Every rule of the spiking family claims all four modes: the optimizer
// does not know a graph's run mode, so a rule for some modes only has no
// place in the library.
TEST(Induction, LibrarySpikingRulesClaimEveryMode) {
  auto lib = rules::load_library();
  ASSERT_TRUE(lib.has_value()) << lib.error().str();
  int n = 0;
  for (const rules::Rule& r : lib->rules())
    if (r.family == "spiking") {
      ++n;
      EXPECT_TRUE(r.body->dynamics.empty()) << r.name;
    }
  EXPECT_GE(n, 14);
}

}  // namespace
}  // namespace refinery::prove
