// Extraction prices e-nodes (optimize/tensor_cost.h) and reports price
// graphs (targets::graph_cost); both must say the same of the same graph,
// or extraction chooses by prices the report and `refinery cost` do not
// give. The law: the seeded original's e-nodes, one per value, sum to
// graph_cost of the original, on every analytic target.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "egraph/tensor/convert.h"
#include "optimize/tensor_cost.h"
#include "targets/cost_model.h"
#include "tests/targets/graph_builder.h"

namespace refinery::optimize {
namespace {

using refinery::testing::GraphBuilder;

double seeded_cost(const ir::Graph& g, const targets::CostModel& model) {
  auto seeded = egraph::tensor::seed(g);
  EXPECT_TRUE(seeded.has_value()) << seeded.error().str();
  if (!seeded) return NAN;
  TensorCost cost(seeded->egraph, model, seeded->roots);
  double sum = 0;
  for (std::size_t v = 0; v < seeded->origin.value_class.size(); ++v) {
    egraph::Id cls = seeded->origin.value_class[v];
    if (cls == egraph::kInvalidId || seeded->origin.value_node[v].is_leaf()) continue;
    sum += cost(cls, seeded->origin.value_node[v]) - 1e-12;  // less the tie-breaker
  }
  return sum;
}

// A constant expression whose result is larger than export folds (an Expand
// of a [1, 1024] constant to [1024, 1024], 4 MiB): ONNX Runtime folds it when
// the session loads (docs/measurements.md, session 25: none of the pruned
// vgg's constant Expand and Conv nodes runs per inference), so it is free in
// both prices; the Add of its result is not.
TEST(TensorCost, PricesAConstantExpressionAsGraphCostDoes) {
  GraphBuilder b;
  auto x = b.input("x", {1024, 1024});
  auto c = b.filled("c", {1, 1024}, 1);
  auto big = b.op1(ir::Op::Expand, {c, b.ints("shape", {1024, 1024})});
  ir::Graph g = b.finish({b.op1(ir::Op::Add, {x, b.op1(ir::Op::Relu, {big})})});
  for (const char* name : {"gpu", "tpu", "cpu-analytic", "cpu"}) {
    SCOPED_TRACE(name);
    auto t = targets::load_target(name);
    ASSERT_TRUE(t.has_value()) << t.error().str();
    const double graph = targets::graph_cost(*t->model, g);
    EXPECT_GT(graph, 0);
    EXPECT_NEAR(seeded_cost(g, *t->model), graph, 1e-9 * graph);
  }
}

}  // namespace
}  // namespace refinery::optimize
