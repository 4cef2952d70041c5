// One head's attention score over an unbatched sequence, (x Wq + bq) (x Wk
// + bk)^T / s under a softmax: the library folds the key projection into a
// constant Wq Wk^T (attention-score-key-folded, rules/lib/lowrank.rules)
// and the softmax drops the query-only column it leaves
// (softmax-shift-rows, rules/lib/norm.rules). Only where the weights are
// square: for a narrower head the folded product would be wider.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <string>

#include "optimize/optimize.h"
#include "rules/rules.h"
#include "targets/cost_model.h"
#include "tests/targets/graph_builder.h"

namespace refinery::optimize {
namespace {

using refinery::testing::GraphBuilder;

// torch's export of one head over x [seq, width]: nn.Linear as Gemm (the
// weight [head, width], transB), q @ k.T / sqrt(head), softmax, @ v.
ir::Graph one_head(int64_t seq, int64_t width, int64_t head) {
  GraphBuilder b;
  auto x = b.input("x", {seq, width});
  ir::Attributes trans_b;
  trans_b.set("transB", int64_t{1});
  auto linear = [&](const std::string& n, double seed) {
    return b.op1(ir::Op::Gemm, {x, b.filled("w" + n, {head, width}, seed), b.filled("b" + n, {head}, seed + 1)},
                 trans_b);
  };
  auto q = linear("q", 1), k = linear("k", 3), v = linear("v", 5);
  ir::Attributes swap, last;
  swap.set("perm", std::vector<int64_t>{1, 0});
  last.set("axis", int64_t{-1});
  auto scale = b.graph().add_constant(
      "scale", std::make_shared<const ir::Tensor>(ir::Tensor::scalar_f32(std::sqrt(static_cast<float>(head)))));
  auto score = b.op1(ir::Op::Div, {b.op1(ir::Op::MatMul, {q, b.op1(ir::Op::Transpose, {k}, swap)}), scale});
  return b.finish({b.op1(ir::Op::MatMul, {b.op1(ir::Op::Softmax, {score}, last), v})});
}

int products(const Report& r) {
  int n = 0;
  for (const char* op : {"Gemm", "MatMul"})
    if (auto it = r.ops_after.find(op); it != r.ops_after.end()) n += it->second;
  return n;
}

std::string used(const Report& r) { return fmt::format("{}", fmt::join(r.extraction.rules_used, ", ")); }

TEST(AttentionKeyFold, OneHeadsScoreLosesTheKeyProjection) {
  ir::Graph g = one_head(16, 64, 64);
  auto lib = rules::load_library();
  ASSERT_TRUE(lib.has_value()) << lib.error().str();
  for (const char* name : {"cpu", "cpu-analytic"}) {
    SCOPED_TRACE(name);
    auto t = targets::load_target(name);
    ASSERT_TRUE(t.has_value());
    auto r = optimize(g, *lib, *t, OptimizeOptions{});
    ASSERT_TRUE(r.has_value()) << r.error().str();
    ASSERT_EQ(r->report.outcome, Outcome::Optimized) << r->report.reason;
    // 16 queries over 16 keys: validation sees the scores, not a softmax of one.
    ASSERT_TRUE(r->report.validation.has_value());
    EXPECT_TRUE(r->report.validation->passed) << r->report.validation->first_divergence;
    EXPECT_LT(r->report.validation->max_abs_error, 1e-5);
    // The softmax's explanation is the shift; the shift matched the score
    // as folded product + column, a node only the fold made, in a class the
    // written graph does not read: rules used names both.
    EXPECT_GT(r->report.saturation.rules_fired.count("attention-score-key-folded"), 0u);
    EXPECT_EQ(r->report.extraction.rules_used.count("softmax-shift-rows"), 1u) << used(r->report);
    EXPECT_EQ(r->report.extraction.rules_used.count("attention-score-key-folded"), 1u) << used(r->report);
    // Q, K, V, Q K^T and P V: five products; folded, K's is gone.
    EXPECT_EQ(products(r->report), 4);
    EXPECT_LT(r->report.flops_after, r->report.flops_before);
  }
}

// A head narrower than the model (64 -> 32): Wq Wk^T would be 64 x 64, a
// product twice as wide as each projection; the rule does not apply.
TEST(AttentionKeyFold, ANarrowerHeadKeepsItsProjections) {
  ir::Graph g = one_head(16, 64, 32);
  auto lib = rules::load_library();
  ASSERT_TRUE(lib.has_value()) << lib.error().str();
  auto t = targets::load_target("cpu-analytic");
  ASSERT_TRUE(t.has_value());
  auto r = optimize(g, *lib, *t, OptimizeOptions{});
  ASSERT_TRUE(r.has_value()) << r.error().str();
  EXPECT_EQ(r->report.saturation.rules_fired.count("attention-score-key-folded"), 0u);
}

}  // namespace
}  // namespace refinery::optimize
