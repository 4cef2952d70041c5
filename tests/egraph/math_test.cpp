// egg's math suite: every goal egg proves is proved here.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cstdint>

#include "tests/egraph/math_suite.h"

namespace refinery::egraph::math {
namespace {

class MathSuite : public ::testing::TestWithParam<MathCase> {};

TEST_P(MathSuite, ProvesGoalLikeEgg) {
  const MathCase& mc = GetParam();
  MathResult r = run_math_case(mc);
  EXPECT_EQ(r.proved, mc.expect_proved) << mc.name << " stopped: " << r.stop.to_string();
}

INSTANTIATE_TEST_SUITE_P(Egg, MathSuite, ::testing::ValuesIn(math_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// The 12-byte node orders as the 24-byte one did (operator, then a leaf's
// payload as one number or an operator's children), so a class's sorted
// nodes and every result built on them are unchanged.
TEST(MathNode, OrdersPayloadsAsNumbersAndOperatorsByChildren) {
  auto bits = [](std::uint64_t b) { return MathNode::constant(std::bit_cast<double>(b)); };
  EXPECT_LT(bits(0x0000'0000'ffff'ffffULL), bits(0x0000'0001'0000'0000ULL));
  EXPECT_LT(MathNode::constant(1.0), MathNode::constant(2.0));
  EXPECT_EQ(bits(0x0000'0001'0000'0002ULL).payload(), 0x0000'0001'0000'0002ULL);
  EXPECT_EQ(MathNode::symbol("abcdefgh").symbol_name(), "abcdefgh");
  EXPECT_NE(MathNode::symbol("x"), MathNode::symbol("y"));
  const Id a{1}, b{2};
  EXPECT_LT(MathNode::make(MathOp::Add, std::array{a, b}), MathNode::make(MathOp::Add, std::array{b, a}));
  EXPECT_LT(MathNode::make(MathOp::Add, std::array{b, b}), MathNode::make(MathOp::Mul, std::array{a, a}));
  EXPECT_LT(MathNode::make(MathOp::Cos, std::array{b}), MathNode::constant(0.0));
  EXPECT_TRUE(MathNode::constant(3.0).same_op(MathNode::constant(3.0)));
  EXPECT_FALSE(MathNode::constant(3.0).same_op(MathNode::constant(4.0)));
  EXPECT_TRUE(MathNode::make(MathOp::Add, std::array{a, b}).same_op(MathNode::make(MathOp::Add, std::array{b, a})));
  EXPECT_NE(MathNode::make(MathOp::Add, std::array{a, b}).hash(), MathNode::make(MathOp::Add, std::array{b, a}).hash());
}

TEST(MathSuite, AssociateAddsEndsWith127Classes) {
  MathCase mc = math_cases().front();
  ASSERT_EQ(mc.name, "math_associate_adds");
  MathResult r = run_math_case(mc);
  EXPECT_TRUE(r.proved);
  EXPECT_EQ(r.classes, 127u);
  // 7 iterations, as egg's Runner records them: the limits are checked
  // again once an iteration is done, so no empty eighth is recorded.
  EXPECT_EQ(r.iterations, 7u);
  EXPECT_EQ(r.stop.kind, StopKind::IterationLimit);
}

TEST(MathSuite, AssocMulSaturates) {
  MathRunner runner(RunnerLimits{.iter_limit = 3});
  runner.add_expr(must_parse("(* x 1)"));
  auto rules = math_rules();
  EXPECT_EQ(runner.run(rules).kind, StopKind::Saturated);
}

TEST(MathSuite, ProvesUnderSimpleSchedulerToo) {
  for (const MathCase& mc : math_cases()) {
    MathResult r = run_math_case(mc, SchedulerChoice::Simple);
    EXPECT_EQ(r.proved, mc.expect_proved) << mc.name;
  }
}

// Issue #20: the suite on two search threads ends where it ends on one
// (the same sizes, iterations and stop reason; backoff scheduler as egg's).
TEST(MathSuite, TwoSearchThreadsEndWhereOneEnds) {
  for (const MathCase& mc : math_cases()) {
    MathResult one = run_math_case(mc, SchedulerChoice::AsInEgg, {}, false, 1);
    MathResult two = run_math_case(mc, SchedulerChoice::AsInEgg, {}, false, 2);
    if (one.stop.kind == StopKind::TimeLimit || two.stop.kind == StopKind::TimeLimit) continue;  // timing decides
    EXPECT_EQ(two.proved, one.proved) << mc.name;
    EXPECT_EQ(two.nodes, one.nodes) << mc.name;
    EXPECT_EQ(two.classes, one.classes) << mc.name;
    EXPECT_EQ(two.iterations, one.iterations) << mc.name;
    EXPECT_EQ(two.stop.kind, one.stop.kind) << mc.name;
  }
}

}  // namespace
}  // namespace refinery::egraph::math
