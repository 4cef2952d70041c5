// The symbolic semantics are a table keyed by ir::Op, filled per op family
// (prove/z3/<family>.cpp): every op a library rule uses has an entry, and a
// graph with an op that has none is refused, naming the op and the node.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "ir/text.h"
#include "prove/z3/symbolic.h"
#include "rules/rule_ast.h"
#include "rules/rules.h"

namespace refinery::prove {
namespace {

void ops_of(const rules::Pat& p, std::set<ir::Op>& ops) {
  if (p.kind == rules::Pat::Kind::Op) ops.insert(p.op);
  for (const rules::Pat& k : p.kids) ops_of(k, ops);
}

TEST(SemanticsTable, EveryOpOfTheLibraryHasSemantics) {
  auto lib = rules::load_library();
  ASSERT_TRUE(lib.has_value()) << lib.error().str();
  std::set<ir::Op> ops;
  for (const rules::Rule& r : lib->rules()) {
    for (const auto& [root, p] : r.body->lhs) ops_of(p, ops);
    for (const auto& [root, p] : r.body->rhs) ops_of(p, ops);
  }
  EXPECT_GT(ops.size(), 30u);
  for (ir::Op op : ops) EXPECT_TRUE(has_semantics(op)) << ir::op_name(op);
}

TEST(SemanticsTable, OneEntryPerFamilyOp) {
  for (ir::Op op : {ir::Op::Relu, ir::Op::Add, ir::Op::MatMul, ir::Op::Gemm, ir::Op::Conv, ir::Op::Softmax,
                    ir::Op::ReduceSum, ir::Op::ReduceMean, ir::Op::Transpose, ir::Op::Reshape, ir::Op::Slice,
                    // NIR ops: LIF and Delay as one time step (prove/induction.h)
                    ir::Op::Shape, ir::Op::Einsum, ir::Op::Affine, ir::Op::LIF, ir::Op::Delay})
    EXPECT_TRUE(has_semantics(op)) << ir::op_name(op);
  for (ir::Op op : {ir::Op::Floor, ir::Op::Opaque})
    EXPECT_FALSE(has_semantics(op)) << ir::op_name(op);
}

TEST(SemanticsTable, AnOpWithoutSemanticsIsNamed) {
  auto g = ir::parse_graph(
      "graph @main(%x: tensor<2xf32>) {\n"
      "  %y = floor(%x) : tensor<2xf32>\n"
      "  return %y\n"
      "}\n");
  ASSERT_TRUE(g.has_value()) << g.error().str();
  z3::context ctx;
  SymDomain d(ctx, false);
  SymTensor x{{2}, {d.var("x0"), d.var("x1")}};
  auto r = eval_symbolic(*g, {x}, d);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().str().find("floor has no symbolic semantics"), std::string::npos) << r.error().str();
}

}  // namespace
}  // namespace refinery::prove
