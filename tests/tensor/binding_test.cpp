// The tensor binding: types as the analysis, ill-typed unions fail loudly,
// seeding and extraction are the identity on small graphs.
#include <gtest/gtest.h>

#include "egraph/tensor/convert.h"
#include "extract/tree_greedy.h"
#include "ir/text.h"

namespace refinery::egraph::tensor {
namespace {

ir::Graph parse(const std::string& text) {
  auto g = ir::parse_graph(text);
  EXPECT_TRUE(g.has_value()) << g.error().str();
  return std::move(*g);
}

ir::Graph round_trip(const ir::Graph& g) {
  auto s = seed(g);
  EXPECT_TRUE(s.has_value()) << s.error().str();
  extract::TreeExtractor ex(s->egraph, extract::SizeCost{});
  auto back = to_graph(
      s->egraph, s->roots, [&](Id c) -> const TensorNode& { return *ex.best(c); }, s->origin);
  EXPECT_TRUE(back.has_value()) << back.error().str();
  return std::move(*back);
}

const char* kGraph = R"(graph @main(%x: tensor<"N"x4xf32>) attributes {ir_version = 8, opsets = {"" = 17}} {
  %w = const dense<[0.5, -1.0, 0.25, 2.0, 1.5, -0.125, 3.0, 0.0]> : tensor<2x4xf32>
  %s = const dense<[1, 1]> : tensor<2xi64>
  %1 = gemm(%x, %w) {transB = 1} : tensor<"N"x2xf32> loc("fc")
  %a, %b = split(%1, %s) {axis = 1} : tensor<"N"x1xf32>, tensor<"N"x1xf32> loc("split")
  %c = clip(%a, none, none) : tensor<"N"x1xf32>
  %d = add(%c, %b) : tensor<"N"x1xf32>
  %e = "com.example::Mystery"(%d) {k = 3} : tensor<*xf32>
  return %e, %b
}
)";

TEST(TensorBinding, EveryClassHasItsType) {
  ir::Graph g = parse(kGraph);
  auto s = seed(g);
  ASSERT_TRUE(s.has_value()) << s.error().str();
  for (size_t v = 0; v < g.num_values(); ++v) {
    Id c = s->origin.value_class[v];
    ASSERT_NE(c, kInvalidId);
    EXPECT_EQ(s->egraph[c].data.type, g.values()[v].type) << g.values()[v].name;
  }
  EXPECT_EQ(s->egraph.num_classes(), g.num_values());
  EXPECT_EQ(s->egraph.check_invariants(), "");
}

TEST(TensorBinding, SeedThenExtractIsTheIdentity) {
  ir::Graph g = parse(kGraph);
  ir::Graph back = round_trip(g);
  EXPECT_EQ(ir::graph_difference(g, back), "");
  EXPECT_EQ(ir::print_graph(back), kGraph);
}

TEST(TensorBinding, UnionOfDifferentTypesFailsLoudly) {
  ir::Graph g = parse(kGraph);
  auto s = seed(g);
  ASSERT_TRUE(s.has_value());
  Id x = s->origin.value_class[ir::index(*g.find_value("x"))];
  Id gemm = s->origin.value_class[ir::index(*g.find_value("1"))];
  EXPECT_THROW(
      {
        s->egraph.merge(x, gemm);
        s->egraph.rebuild();
      },
      TypeMismatch);
}

// The graph declares "seq" where the analysis infers ?, and a static 4
// where it infers "N": the classes keep the more precise dims, and nodes
// built on them inherit them (docs/ir.md, "Refinement").
TEST(TensorBinding, SeedingKeepsTheMorePreciseOfDeclaredAndInferredTypes) {
  ir::Graph g = parse(R"(graph @main(%x: tensor<"N"x?xf32>) {
  %a = relu(%x) : tensor<4x"seq"xf32>
  %b = neg(%a) : tensor<?x?xf32>
  return %b
})");
  auto s = seed(g);
  ASSERT_TRUE(s.has_value()) << s.error().str();
  auto type_of = [&](const char* v) {
    return s->egraph[s->origin.value_class[ir::index(*g.find_value(v))]].data.type.str();
  };
  EXPECT_EQ(type_of("a"), "tensor<4x\"seq\"xf32>");
  EXPECT_EQ(type_of("b"), "tensor<4x\"seq\"xf32>");
  EXPECT_EQ(s->egraph.check_invariants(), "");
  // Extraction writes the precise types back.
  extract::TreeExtractor ex(s->egraph, extract::SizeCost{});
  auto back = to_graph(
      s->egraph, s->roots, [&](Id c) -> const TensorNode& { return *ex.best(c); }, s->origin);
  ASSERT_TRUE(back.has_value()) << back.error().str();
  EXPECT_EQ(back->value(*back->find_value("b")).type.str(), "tensor<4x\"seq\"xf32>");
}

TEST(TensorBinding, AContradictionAtSeedingIsALimitationNamingTheNode) {
  ir::Graph g = parse(R"(graph @main(%x: tensor<3x4xf32>) {
  %a = relu(%x) : tensor<3x4xf32> loc("act")
  return %a
})");
  g.value(*g.find_value("a")).type = ir::TensorType{ir::DType::f32, ir::Shape({3, 5})};
  auto s = seed(g);
  ASSERT_FALSE(s.has_value());
  EXPECT_TRUE(s.error().limitation);
  EXPECT_EQ(s.error().where, "node 'act'");
  EXPECT_EQ(s.error().message,
            "the e-graph types output 0 as tensor<3x4xf32>, the graph says tensor<3x5xf32>: tensor<3x4xf32> and "
            "tensor<3x5xf32> differ in dim 1");
}

// A union of a class typed ?x4 with one typed "N"x4 (a rule whose right side
// knows less) keeps "N", and the parents of the class that learnt it do too.
TEST(TensorBinding, UnionKeepsTheMorePreciseTypeAndPropagatesIt) {
  ir::Graph g = parse(R"(graph @main(%x: tensor<"N"x4xf32>, %y: tensor<?x4xf32>) {
  %a = relu(%y) : tensor<?x4xf32>
  return %x, %a
})");
  auto s = seed(g);
  ASSERT_TRUE(s.has_value()) << s.error().str();
  Id x = s->origin.value_class[ir::index(*g.find_value("x"))];
  Id y = s->origin.value_class[ir::index(*g.find_value("y"))];
  Id a = s->origin.value_class[ir::index(*g.find_value("a"))];
  s->egraph.merge(y, x);
  s->egraph.rebuild();
  EXPECT_EQ(s->egraph[y].data.type.str(), "tensor<\"N\"x4xf32>");
  EXPECT_EQ(s->egraph[a].data.type.str(), "tensor<\"N\"x4xf32>");
  EXPECT_EQ(s->egraph.check_invariants(), "");
}

TEST(TensorBinding, IllTypedNodeIsRefusedBeforeItIsAdded) {
  ir::Graph g = parse(kGraph);
  auto s = seed(g);
  ASSERT_TRUE(s.has_value());
  Id x = s->origin.value_class[ir::index(*g.find_value("x"))];
  Id shape = s->origin.value_class[ir::index(*g.find_value("s"))];
  NodeAttrs none;
  TensorNode bad{static_cast<std::uint32_t>(ir::Op::Add), s->context->intern(none), {x, shape}};
  auto d = s->egraph.analysis().infer(s->egraph, bad);
  ASSERT_FALSE(d.has_value());
  EXPECT_EQ(d.error(), "input 1 is i64 but input 0 is f32");
  EXPECT_THROW(s->egraph.add(bad), TypeMismatch);
}

TEST(TensorBinding, EqualSubtermsShareAClass) {
  ir::Graph g = parse(R"(graph @main(%x: tensor<4xf32>) {
  %a = relu(%x) : tensor<4xf32>
  %b = relu(%x) : tensor<4xf32>
  %c = add(%a, %b) : tensor<4xf32>
  return %c
})");
  auto s = seed(g);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->origin.value_class[ir::index(*g.find_value("a"))], s->origin.value_class[ir::index(*g.find_value("b"))]);
  EXPECT_EQ(s->egraph.num_classes(), 3u);  // hash-consing is common-subexpression elimination
  // Extraction still gives the original back, duplicate and all.
  ir::Graph back = round_trip(g);
  EXPECT_EQ(ir::graph_difference(g, back), "");
}

// A new multi-result node (not from the original graph) whose results are
// chosen for two classes: the second result emitted reuses the node and must
// get its own type, not the placeholder (it is a graph output, and an ONNX
// graph output without a shape fails the checker).
TEST(TensorBinding, EachResultOfANewMultiResultNodeHasItsType) {
  ir::Graph g = parse(R"(graph @main(%x: tensor<4xf32>) {
  %s = const dense<[2, 2]> : tensor<2xi64>
  %a, %b = split(%x, %s) {axis = 0} : tensor<2xf32>, tensor<2xf32>
  %c = neg(%a) : tensor<2xf32>
  %d = neg(%b) : tensor<2xf32>
  return %c, %d
})");
  auto s = seed(g);
  ASSERT_TRUE(s.has_value()) << s.error().str();
  TensorEGraph& eg = s->egraph;
  Id x = s->origin.value_class[ir::index(*g.find_value("x"))];
  Id sizes = s->origin.value_class[ir::index(*g.find_value("s"))];
  Id c = s->origin.value_class[ir::index(*g.find_value("c"))];
  Id d = s->origin.value_class[ir::index(*g.find_value("d"))];
  NodeAttrs plain;
  Id nx = eg.add(TensorNode{static_cast<std::uint32_t>(ir::Op::Neg), s->context->intern(plain), {x}});
  std::vector<TensorNode> parts;
  for (std::uint16_t o : {0, 1}) {
    NodeAttrs na;
    na.attrs.set("axis", int64_t{0});
    na.output = o;
    na.num_outputs = 2;
    parts.push_back(TensorNode{static_cast<std::uint32_t>(ir::Op::Split), s->context->intern(na), {nx, sizes}});
  }
  eg.merge(c, eg.add(parts[0]));
  eg.merge(d, eg.add(parts[1]));
  eg.rebuild();
  auto choose = [&](Id cls) -> const TensorNode& {
    cls = eg.find(cls);
    for (const TensorNode& n : eg[cls].nodes)
      if (n.op == static_cast<std::uint32_t>(ir::Op::Split) ||
          (cls == eg.find(nx) && n.op == static_cast<std::uint32_t>(ir::Op::Neg)))
        return n;
    return eg[cls].nodes.front();
  };
  auto back = to_graph(eg, s->roots, choose, s->origin);
  ASSERT_TRUE(back.has_value()) << back.error().str();
  ASSERT_EQ(back->outputs().size(), 2u);
  for (ir::ValueId v : back->outputs()) EXPECT_EQ(back->value(v).type.str(), "tensor<2xf32>");
  auto ok = back->verify();
  EXPECT_TRUE(ok.has_value()) << ok.error().str();
}

}  // namespace
}  // namespace refinery::egraph::tensor
