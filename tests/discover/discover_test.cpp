#include "discover/discover.h"

#include <gtest/gtest.h>

#include "prove/verify.h"
#include "rules/rules.h"
#include "tests/cli/cli_runner.h"

namespace refinery::discover {
namespace {

DiscoverOptions tiny(std::vector<std::string> ops, int vars, int max_size) {
  DiscoverOptions o;
  auto parsed = parse_ops(ops);
  EXPECT_TRUE(parsed) << parsed.error().str();
  o.ops = *parsed;
  o.variables = vars;
  o.max_size = max_size;
  o.constants = {0};
  o.time_limit_s = 60;
  return o;
}

rules::RuleSet load(const std::string& text) {
  auto set = rules::parse_rules(text, "test");
  EXPECT_TRUE(set) << set.error().str();
  return set ? *set : rules::RuleSet{};
}

rules::RuleSet kept_rules(const DiscoverResult& r) { return load(r.rules_text("test")); }

// Whether the kept rules derive the rule given as "LHS => RHS".
bool found(const DiscoverResult& r, const DiscoverOptions& o, const std::string& rule) {
  auto goal = load("(rule goal " + rule + ")");
  return derives(kept_rules(r).rewrites(), goal.rules().front(), o);
}

TEST(Discover, FindsCommutativityAndNegNeg) {
  auto o = tiny({"add", "neg"}, 2, 2);
  auto r = discover(o);
  ASSERT_TRUE(r) << r.error().str();
  EXPECT_TRUE(found(*r, o, "(add ?a ?b) => (add ?b ?a)")) << r->rules_text("");
  EXPECT_TRUE(found(*r, o, "(neg (neg ?a)) => ?a")) << r->rules_text("");
  EXPECT_FALSE(found(*r, o, "(neg ?a) => ?a"));
}

TEST(Discover, FindsReluIdempotence) {
  auto o = tiny({"relu", "neg"}, 1, 2);
  auto r = discover(o);
  ASSERT_TRUE(r) << r.error().str();
  EXPECT_TRUE(found(*r, o, "(relu (relu ?a)) => (relu ?a)")) << r->rules_text("");
}

// A vocabulary attribute at its default (`:perm [1 0]` at rank 2) is
// omitted from the e-node; the entry still names that e-node, so transpose
// terms are enumerated and transpose commutes with relu.
TEST(Discover, AttributeAtItsDefaultIsEnumerated) {
  auto o = tiny({"(transpose :perm [1 0])", "relu"}, 1, 2);
  auto r = discover(o);
  ASSERT_TRUE(r) << r.error().str();
  EXPECT_TRUE(found(*r, o, "(transpose :perm [1 0] (relu ?a)) => (relu (transpose :perm [1 0] ?a))"))
      << r->rules_text("");
  EXPECT_TRUE(found(*r, o, "(transpose (transpose ?a)) => ?a")) << r->rules_text("");
}

// tanh is uninterpreted in the verifier unless a rule asks for tanh-def: the
// candidate is unknown without it and proved with it, and is written with it.
TEST(Discover, AsksForTheAxiomsOfItsFunctions) {
  auto o = tiny({"tanh", "neg"}, 1, 2);
  o.constants = {};
  auto r = discover(o);
  ASSERT_TRUE(r) << r.error().str();
  EXPECT_TRUE(found(*r, o, "(tanh (neg ?a)) => (neg (tanh ?a))")) << r->rules_text("");
  EXPECT_NE(r->rules_text("").find(":axioms (tanh-def)"), std::string::npos) << r->rules_text("");
}

// On positive inputs only, relu(x) and x agree: the fingerprint groups them,
// the prover refutes the candidate, and it is reported, never written.
TEST(Discover, PlantedCollisionIsRefutedAndNotWritten) {
  auto o = tiny({"relu"}, 1, 1);
  o.constants = {};
  o.ranges = {ValueRange::Positive};
  auto r = discover(o);
  ASSERT_TRUE(r) << r.error().str();
  ASSERT_EQ(r->rejected.size(), 1u);
  const Candidate& c = r->rejected.front();
  EXPECT_EQ(c.lhs, "(relu ?a)");
  EXPECT_EQ(c.rhs, "?a");
  EXPECT_EQ(c.verdict, prove::Verdict::Refuted);
  EXPECT_FALSE(c.counterexample.empty());
  EXPECT_TRUE(r->kept.empty());
  EXPECT_EQ(r->rules_text("").find("(relu ?a)"), std::string::npos);
  // With negative inputs among the draws they differ: no candidate at all.
  o.ranges = {ValueRange::Mixed};
  auto mixed = discover(o);
  ASSERT_TRUE(mixed);
  EXPECT_EQ(mixed->candidates, 0u);
}

// What --against derives is not proposed again, and no kept rule is
// derivable from the other kept rules (and --against).
TEST(Discover, MinimisationDropsDerivableRules) {
  auto o = tiny({"add", "neg"}, 2, 2);
  o.against = load("(rule add-comm (add ?a ?b) => (add ?b ?a))\n(rule neg-neg (neg (neg ?a)) => ?a)\n");
  auto r = discover(o);
  ASSERT_TRUE(r) << r.error().str();
  EXPECT_GT(r->skipped_derivable, 0u);
  auto kept = kept_rules(*r);
  for (const rules::Rule& k : kept.rules()) {
    EXPECT_NE(k.text, "(add ?b ?a) => (add ?a ?b)");
    rules::RuleSet others = o.against;
    for (const rules::Rule& x : kept.rules())
      if (x.name != k.name && x.name != k.name + "-rev" && k.name != x.name + "-rev") others.add(x);
    EXPECT_FALSE(derives(others.rewrites(), k, o)) << k.name << ": " << k.text;
  }
  // derives itself: a rule the set derives in two steps.
  auto two = load("(rule x (add (neg (neg ?a)) ?b) => (add ?b ?a))");
  EXPECT_TRUE(derives(o.against.rewrites(), two.rules().front(), o));
  auto not_derived = load("(rule y (neg (add ?a ?b)) => (add (neg ?a) (neg ?b)))");
  EXPECT_FALSE(derives(o.against.rewrites(), not_derived.rules().front(), o));
}

// An op over constants only is folding, not enumerated: no candidate
// carries (neg 1.0).
TEST(Discover, GroundTermsAreNotEnumerated) {
  auto o = tiny({"neg", "abs"}, 1, 2);
  o.constants = {1};
  auto r = discover(o);
  ASSERT_TRUE(r) << r.error().str();
  std::string all = r->rules_text("");
  for (const Candidate& c : r->rejected) all += c.text();
  EXPECT_EQ(all.find("1.0)"), std::string::npos) << all;
  EXPECT_TRUE(found(*r, o, "(abs (neg ?a)) => (abs ?a)")) << all;
}

TEST(Discover, OutputLoadsAndVerifies) {
  auto o = tiny({"add", "neg", "relu"}, 2, 2);
  auto r = discover(o);
  ASSERT_TRUE(r) << r.error().str();
  ASSERT_FALSE(r->kept.empty());
  auto set = rules::parse_rules(r->rules_text("refinery rules discover ..."), "out.rules");
  ASSERT_TRUE(set) << set.error().str();
  std::vector<const rules::Rule*> all;
  for (const rules::Rule& k : set->rules()) all.push_back(&k);
  auto rep = prove::verify_rules(all, o.verify);
  for (const auto& v : rep.rules) EXPECT_TRUE(prove::is_proved(v.verdict)) << v.name << " " << v.counterexample;
}

TEST(Discover, OpsAreReadThroughTheRuleLanguage) {
  auto ops = parse_ops({"(transpose :perm [1 0])", "leaky_relu"});
  ASSERT_TRUE(ops) << ops.error().str();
  EXPECT_EQ((*ops)[0].op, ir::Op::Transpose);
  EXPECT_EQ((*ops)[0].attrs.get_ints("perm"), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ((*ops)[1].arity, 1);
  EXPECT_FALSE(parse_ops({"bogus"}));
  EXPECT_FALSE(parse_ops({"(transpose :nope 1)"}));
  auto reshape = parse_ops({"reshape"});
  ASSERT_FALSE(reshape);
  EXPECT_TRUE(reshape.error().limitation);
}

TEST(DiscoverCli, WritesProvedRulesAndRefusesBadInput) {
  using refinery::testing::run_cli;
  auto out = refinery::testing::scratch_file("discover_cli", "found.rules");
  auto r = run_cli("rules discover --ops neg,relu --vars 1 --max-size 2 --constants 0 -o " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("kept"), std::string::npos) << r.out;
  auto v = run_cli("rules verify --quiet " + out.string());
  EXPECT_EQ(v.code, 0) << v.out << v.err;
  auto bad = refinery::testing::scratch_file("discover_cli", "bad.rules");
  auto b = run_cli("rules discover --ops nosuchop -o " + bad.string());
  EXPECT_EQ(b.code, 2);
  EXPECT_NE(b.err.find("nosuchop"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(bad));
}

}  // namespace
}  // namespace refinery::discover
