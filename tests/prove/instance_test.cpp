// The instance generator (docs/rules.md, Verification: instances): empty
// dims drawn after the others, where ONNX defines the ops on empty tensors,
// never where it gives no result; what a pattern asks of its values beyond
// each op's shape rule (a head reshape's rank, a split into equal parts, a
// bias as long as its weight's columns).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "prove/instance.h"
#include "rules/rules.h"

namespace refinery::prove {
namespace {

std::vector<Instance> instances(const std::string& rule, int empty) {
  auto set = rules::parse_rules(rule, "<test>");
  EXPECT_TRUE(set.has_value()) << set.error().str();
  if (!set) return {};
  const rules::Rule& r = set->rules().front();
  std::string why;
  auto out = make_instances(*r.body, r.name, 3, empty, why);
  EXPECT_FALSE(out.empty()) << why;
  return out;
}

// The sizes of the (first) input of the first node with op `op`.
std::vector<int64_t> input_of(const ir::Graph& g, ir::Op op) {
  for (const ir::Node& n : g.nodes())
    if (n.op == op) return g.value(n.inputs[0]).type.shape.sizes();
  return {};
}

TEST(EmptyDims, DrawnAfterTheOthersAndOnlyThere) {
  auto insts = instances("(rule r (reduce_max :axes ?a (relu ?x)) => (relu (reduce_max :axes ?a ?x)))", 2);
  ASSERT_EQ(insts.size(), 5u);
  for (size_t i = 0; i < insts.size(); ++i) {
    EXPECT_EQ(insts[i].empty, i >= 3) << insts[i].describe;
    auto x = insts[i].lhs.value(insts[i].lhs.inputs()[0]).type.shape.sizes();
    EXPECT_EQ(std::count(x.begin(), x.end(), 0) > 0, i >= 3) << insts[i].describe;
  }
  // none without the option
  EXPECT_EQ(instances("(rule r (reduce_max :axes ?a (relu ?x)) => (relu (reduce_max :axes ?a ?x)))", 0).size(), 3u);
}

TEST(EmptyDims, NotWhereOnnxGivesNoResult) {
  // ArgMax over an empty axis has no index; other axes may be empty
  bool other_axis_empty = false;
  for (const Instance& inst : instances("(rule r (argmax :axis 1 (relu ?x)) => (argmax :axis 1 ?x))", 2)) {
    auto x = input_of(inst.lhs, ir::Op::ArgMax);
    ASSERT_GE(x.size(), 2u) << inst.describe;
    EXPECT_NE(x[1], 0) << inst.describe;
    other_axis_empty = other_axis_empty || (inst.empty && x[0] == 0);
  }
  EXPECT_TRUE(other_axis_empty);
  // pooling: an empty batch only, never empty channels or spatial dims
  auto pools = instances(
      "(rule r (max_pool :kernel_shape ?k :* ?r (relu ?x)) => (relu (max_pool :kernel_shape ?k :* ?r ?x)))", 2);
  ASSERT_GT(pools.size(), 3u);
  for (const Instance& inst : pools) {
    auto x = input_of(inst.lhs, ir::Op::MaxPool);
    EXPECT_EQ(std::count(x.begin() + 1, x.end(), 0), 0) << inst.describe;
    EXPECT_EQ(x[0] == 0, inst.empty) << inst.describe;
  }
}

// An attention's heads: the reshape that a literal perm of rank 4 reads is
// drawn at rank 4, the packed projection's columns (which a split into 3
// reads) a multiple of 3, the bias as long as the weight's columns.
TEST(Demands, AttentionHeadsAreDrawn) {
  const std::string q =
      "(transpose :perm [0 2 1 3] (reshape (split :axis -1 :out 0 :nout 3 (add (matmul ?x ?w) ?b) ?sp) ?sq))";
  const std::string k =
      "(transpose :perm [0 2 3 1] (reshape (split :axis -1 :out 1 :nout 3 (add (matmul ?x ?w) ?b) ?sp) ?sk))";
  auto insts = instances("(rule r (matmul " + q + " " + k + ") => (matmul " + q + " " + k +
                             ") :when ((rank ?x 3) (vector-of ?b ?w 1)))",
                         0);
  ASSERT_EQ(insts.size(), 3u);
  bool two_wide = false;
  for (const Instance& inst : insts) {
    auto qkv = input_of(inst.lhs, ir::Op::Split);
    ASSERT_EQ(qkv.size(), 3u) << inst.describe;
    EXPECT_EQ(qkv[2] % 3, 0) << inst.describe;
    EXPECT_EQ(input_of(inst.lhs, ir::Op::Transpose).size(), 4u) << inst.describe;
    const ir::Value& bias = inst.lhs.value(inst.lhs.inputs()[2]);  // ?x ?w ?b
    EXPECT_EQ(bias.type.shape.sizes(), std::vector<int64_t>{qkv[2]}) << inst.describe;
    two_wide = two_wide || qkv[2] >= 6;
  }
  EXPECT_TRUE(two_wide);  // not only one head of one element
}

}  // namespace
}  // namespace refinery::prove
