// Constant folding after extraction (optimize/fold.h): the constant
// expressions a rewrite creates are evaluated, including over a scale an
// exporter wrote as a Constant node, and constants left unused are dropped.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "optimize/fold.h"
#include "tests/targets/graph_builder.h"

namespace refinery::optimize {
namespace {

using refinery::testing::GraphBuilder;

TEST(Fold, EvaluatesConstantExpressionsAndDropsDeadConstants) {
  GraphBuilder b;
  auto x = b.input("x", {2, 3});
  auto w = b.weight("w", {2, 3});
  auto s = b.op1(ir::Op::Exp, {w});  // exp(0) = 1
  ir::Graph g = b.finish({b.op1(ir::Op::Mul, {x, s})});
  auto f = fold_constants(g);
  ASSERT_TRUE(f.has_value()) << f.error().str();
  EXPECT_EQ(f->folded, 1u);
  EXPECT_EQ(f->constants_dropped, 1u);
  ASSERT_EQ(f->graph.num_nodes(), 1u);
  ASSERT_EQ(f->graph.constants().size(), 1u);
  const ir::Tensor& t = *f->graph.value(f->graph.constants()[0]).constant;
  EXPECT_EQ(t.as_double(0), 1.0);
}

// A weight divided by a Constant node's value (a rule's constant expression
// over a scale the exporter wrote as a node, attention-separate-div-fold's
// W / sqrt(d)) is folded; the Constant node stays as it was written.
TEST(Fold, ReadsAConstantNodesValue) {
  GraphBuilder b;
  auto x = b.input("x", {2, 3});
  auto w = b.weight("w", {2, 3});
  ir::Attributes two;
  two.set("value_float", 2.0f);
  auto c = b.op1(ir::Op::Constant, {}, two);
  auto q = b.op1(ir::Op::Div, {b.op1(ir::Op::Exp, {w}), c});  // exp(0) / 2
  ir::Graph g = b.finish({b.op1(ir::Op::Mul, {x, q}), b.op1(ir::Op::Add, {x, c})});
  auto f = fold_constants(g);
  ASSERT_TRUE(f.has_value()) << f.error().str();
  EXPECT_EQ(f->folded, 2u);
  int divs = 0, constant_nodes = 0;
  for (const ir::Node& n : f->graph.nodes()) divs += n.op == ir::Op::Div, constant_nodes += n.op == ir::Op::Constant;
  EXPECT_EQ(divs, 0);
  EXPECT_EQ(constant_nodes, 1);
  ASSERT_EQ(f->graph.constants().size(), 1u);
  EXPECT_EQ(f->graph.value(f->graph.constants()[0]).constant->as_double(0), 0.5);
}

// x, the constant 1 and (1 + 2^-24) + 2^-24 on `b`: 1 in f32 op by op
// (1 + 2^-24 is a tie, to even), 1 + 2^-23 (an f32) in f64.
struct TieSum {
  ir::ValueId x, one, sum;
};
TieSum tie_sum(GraphBuilder& b) {
  auto f32 = [&](const char* name, float v) {
    return b.graph().add_constant(
        name, std::make_shared<const ir::Tensor>(ir::Tensor::from_values<float>(ir::DType::f32, {1}, {v})));
  };
  auto x = b.input("x", {1});
  auto one = f32("one", 1.0f), tiny = f32("tiny", 0x1p-24f);
  return {x, one, b.op1(ir::Op::Add, {b.op1(ir::Op::Add, {one, tiny}), tiny})};
}

// A chain of folds is computed in f64 and rounded once, where its value is
// written: (1 + 2^-24) + 2^-24 is 1 + 2^-23, an f32, where f32 arithmetic
// rounds each sum (1 + 2^-24 to 1, a tie to even) and gives 1.
TEST(Fold, AChainOfFoldsRoundsOnceFromF64) {
  GraphBuilder b;
  auto [x, one, sum] = tie_sum(b);
  ir::Graph g = b.finish({b.op1(ir::Op::Mul, {x, sum})});
  auto f = fold_constants(g);
  ASSERT_TRUE(f.has_value()) << f.error().str();
  EXPECT_EQ(f->folded, 2u);
  ASSERT_EQ(f->graph.constants().size(), 1u);
  const ir::Tensor& t = *f->graph.value(f->graph.constants()[0]).constant;
  EXPECT_EQ(t.dtype(), ir::DType::f32);
  EXPECT_EQ(t.as_double(0), 1.0 + 0x1p-23);
}

// A result that is not a float is folded as the graph computes it: in f32,
// (1 + 2^-24) + 2^-24 is 1, so Equal(that, 1) is true and its Cast to f32
// is 1 (in f64 the sum is 1 + 2^-23 and the Equal false).
TEST(Fold, AComparisonDecidesAsTheGraphComputesIt) {
  GraphBuilder b;
  auto [x, one, sum] = tie_sum(b);
  ir::Attributes to_f32;
  to_f32.set("to", int64_t{1});
  auto same = b.op1(ir::Op::Cast, {b.op1(ir::Op::Equal, {sum, one})}, to_f32);
  ir::Graph g = b.finish({b.op1(ir::Op::Mul, {x, same}), b.op1(ir::Op::Mul, {x, sum})});
  auto f = fold_constants(g);
  ASSERT_TRUE(f.has_value()) << f.error().str();
  EXPECT_EQ(f->folded, 4u);
  ASSERT_EQ(f->graph.constants().size(), 2u);
  std::vector<double> values;
  for (ir::ValueId c : f->graph.constants()) values.push_back(f->graph.value(c).constant->as_double(0));
  std::sort(values.begin(), values.end());
  EXPECT_EQ(values, (std::vector<double>{1.0, 1.0 + 0x1p-23}));  // the Equal's 1, and the sum from f64
}

}  // namespace
}  // namespace refinery::optimize
