// E-matching over tensor nodes: a class holds one operator's nodes in several
// groups (payloads: attributes, a declared type), each sorted by its
// children. Bind's binary search for a bound first child (egraph/machine.h)
// searches each group; the matches are a scan's.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "egraph/machine.h"
#include "egraph/tensor/convert.h"
#include "ir/text.h"

namespace refinery::egraph::tensor {
namespace {

TEST(TensorEMatch, ABoundFirstChildIsFoundInEveryPayloadGroup) {
  auto in = ir::parse_graph(R"(graph @main(%a: tensor<3xf32>, %b: tensor<3xf32>, %c: tensor<3xf32>) {
  return %a, %b, %c
})");
  ASSERT_TRUE(in.has_value()) << in.error().str();
  auto s = seed(*in);
  ASSERT_TRUE(s.has_value()) << s.error().str();
  TensorEGraph& g = s->egraph;
  std::vector<Id> x;
  for (Id r : s->roots) x.push_back(g.find(r));
  const auto mul = static_cast<std::uint32_t>(ir::Op::Mul);
  // Three payloads of one operator: plain, a declared type, a domain.
  std::vector<std::uint32_t> payloads;
  for (int k = 0; k < 3; ++k) {
    NodeAttrs na;
    if (k == 1) na.declared = g[x[0]].data.type;
    if (k == 2) na.domain = "test.group";
    payloads.push_back(g.analysis().context().intern(std::move(na)));
  }
  // One class of 3 x 9 products x_i * x_j, then products x_k * (that class).
  Id inner = kInvalidId;
  for (std::uint32_t p : payloads)
    for (Id a : x)
      for (Id b : x) {
        Id n = g.add(TensorNode{mul, p, {a, b}});
        inner = inner == kInvalidId ? n : (g.merge(inner, n), g.find(inner));
      }
  for (Id a : x) g.add(TensorNode{mul, payloads[0], {a, inner}});
  g.rebuild();
  inner = g.find(inner);
  ASSERT_EQ(g[inner].nodes.size(), 27u);

  // (mul ?a (mul ?a ?b)), the payloads open: ?a is bound when the inner
  // product is bound.
  PatternAst<TensorNode> pat;
  Id a = pat.add_var(make_var(0)), b = pat.add_var(make_var(1));
  Id in_mul = pat.add_node(TensorNode{mul, TensorNode::kAnyPayload, {a, b}});
  pat.add_node(TensorNode{mul, TensorNode::kAnyPayload, {a, in_mul}});
  auto program = Program<TensorNode>::compile(pat, 2);
  SearchMatches found;
  found.reset(2);
  program.search(g, SIZE_MAX, found);

  std::vector<std::vector<Id>> want, got;
  for (Id c : g.class_ids())
    for (const TensorNode& n : g[c].nodes) {
      if (n.op != mul || n.kids.size() != 2) continue;
      for (const TensorNode& m : g[n.kids[1]].nodes)
        if (m.op == mul && m.kids.size() == 2 && m.kids[0] == n.kids[0]) want.push_back({c, n.kids[0], m.kids[1]});
    }
  for (std::size_t i = 0; i < found.size(); ++i) got.push_back({found.roots[i], found.subst(i)[make_var(0)],
                                                                 found.subst(i)[make_var(1)]});
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(want.size(), 3u * 3u * 3u);  // each x_k: every group's x_k * x_j
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace refinery::egraph::tensor
