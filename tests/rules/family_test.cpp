// Each family's rules fire on small graphs: golden/<family>.in.ir (and each
// golden/<family>.<case>.in.ir) is seeded and saturated with that family, and
// the matching .out.ir, looked up in the saturated e-graph, must compute its
// outputs in the same e-classes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "egraph/runner.h"
#include "egraph/tensor/convert.h"
#include "ir/io.h"
#include "ir/text.h"
#include "rules/builtins.h"
#include "rules/rules.h"

namespace refinery::rules {
namespace {

using egraph::Id;
using egraph::tensor::NodeAttrs;
using egraph::tensor::TensorEGraph;
using egraph::tensor::TensorNode;

std::optional<Id> lookup_node(const TensorEGraph& g, const ir::Node& n, size_t out, const std::vector<Id>& kids) {
  for (bool normalise : {false, true}) {
    NodeAttrs na;
    na.output = static_cast<std::uint16_t>(out);
    na.num_outputs = static_cast<std::uint16_t>(n.outputs.size());
    int64_t rank = kids.empty() ? -1 : g[kids[0]].data.type.shape.rank();
    for (const auto& [k, v] : n.attrs.entries()) {
      auto def = ir::attr_default(n.op, k, rank);
      if (normalise && def && literal_equal(*def, v)) continue;
      na.attrs.set(k, v);
    }
    TensorNode node{static_cast<std::uint32_t>(n.op), g.analysis().context().intern(na), kids};
    if (auto id = g.lookup(node)) return id;
  }
  return std::nullopt;
}

// The classes of `expected`'s outputs, looked up in the e-graph; nullopt
// when a node of it is not represented.
std::optional<std::vector<Id>> lookup_graph(const TensorEGraph& g, const ir::Graph& expected, const ir::Graph& seeded,
                                            const egraph::tensor::Origin& origin, std::string& missing) {
  std::vector<std::optional<Id>> cls(expected.num_values());
  for (ir::ValueId v : expected.inputs()) {
    auto s = seeded.find_value(expected.value(v).name);
    if (!s) return std::nullopt;
    cls[ir::index(v)] = g.find(origin.value_class[ir::index(*s)]);
  }
  for (ir::ValueId v : expected.constants()) {
    const ir::Tensor& t = *expected.value(v).constant;
    for (Id c : g.class_ids())
      if (g[c].data.constant && g[c].data.constant->bitwise_equal(t)) cls[ir::index(v)] = c;
    if (!cls[ir::index(v)]) {
      missing = "constant %" + expected.value(v).name;
      return std::nullopt;
    }
  }
  for (const ir::Node& n : expected.nodes()) {
    std::vector<Id> kids;
    for (ir::ValueId in : n.inputs) kids.push_back(*cls[ir::index(in)]);
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      auto id = lookup_node(g, n, o, kids);
      if (!id) {
        missing = "%" + expected.value(n.outputs[o]).name + " = " + std::string(ir::op_name(n.op));
        return std::nullopt;
      }
      cls[ir::index(n.outputs[o])] = *id;
    }
  }
  std::vector<Id> out;
  for (ir::ValueId v : expected.outputs()) out.push_back(g.find(*cls[ir::index(v)]));
  return out;
}

// Every golden case with an expected graph: "<family>" or "<family>.<case>".
std::vector<std::string> golden_cases() {
  std::vector<std::string> cases;
  std::filesystem::path dir = std::filesystem::path(REFINERY_SOURCE_DIR) / "tests/rules/golden";
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    const std::string suffix = ".out.ir";
    if (name.size() > suffix.size() && name.ends_with(suffix))
      cases.push_back(name.substr(0, name.size() - suffix.size()));
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

std::string family_of(const std::string& golden_case) { return golden_case.substr(0, golden_case.find('.')); }

class FamilyGolden : public testing::TestWithParam<std::string> {};

// Every family of the library has at least its own golden case.
TEST(FamilyGolden, EveryFamilyHasACase) {
  auto lib = load_library();
  ASSERT_TRUE(lib.has_value()) << lib.error().str();
  auto cases = golden_cases();
  for (const Rule& r : lib->rules()) {
    bool found =
        std::any_of(cases.begin(), cases.end(), [&](const std::string& c) { return family_of(c) == r.family; });
    EXPECT_TRUE(found) << "family " << r.family << " (rule " << r.name << ") has no tests/rules/golden/" << r.family
                       << ".in.ir";
  }
}

TEST_P(FamilyGolden, RewriteReachesTheExpectedGraph) {
  std::filesystem::path dir = std::filesystem::path(REFINERY_SOURCE_DIR) / "tests/rules/golden";
  auto in = ir::read_ir_file(dir / (GetParam() + ".in.ir"));
  ASSERT_TRUE(in.has_value()) << in.error().str();
  auto out = ir::read_ir_file(dir / (GetParam() + ".out.ir"));
  ASSERT_TRUE(out.has_value()) << out.error().str();
  auto lib = load_library();
  ASSERT_TRUE(lib.has_value()) << lib.error().str();
  auto rws = lib->rewrites({.families = {family_of(GetParam())}});
  ASSERT_FALSE(rws.empty());
  auto seeded = egraph::tensor::seed(*in);
  ASSERT_TRUE(seeded.has_value()) << seeded.error().str();
  {
    // The case tests the family only if the expected graph is not already
    // equal to the input before any rule runs.
    std::string absent;
    auto before = lookup_graph(seeded->egraph, *out, *in, seeded->origin, absent);
    bool all_equal = before.has_value();
    for (size_t i = 0; before && i < before->size(); ++i)
      all_equal &= (*before)[i] == seeded->egraph.find(seeded->roots[i]);
    ASSERT_FALSE(all_equal) << GetParam() << ".out.ir is the input itself: no rule needs to fire";
  }
  egraph::Runner<TensorNode, egraph::tensor::TensorAnalysis> runner(
      egraph::RunnerLimits{.iter_limit = 6, .node_limit = 5000, .time_limit = std::chrono::seconds(20)},
      std::move(seeded->egraph));
  runner.run(rws);
  EXPECT_EQ(runner.egraph.check_invariants(), "");
  std::string missing;
  auto classes = lookup_graph(runner.egraph, *out, *in, seeded->origin, missing);
  ASSERT_TRUE(classes.has_value()) << "not in the e-graph: " << missing << "\n" << runner.report();
  for (size_t i = 0; i < classes->size(); ++i)
    EXPECT_EQ((*classes)[i], runner.egraph.find(seeded->roots[i])) << "output " << i << "\n" << runner.report();
}

// Shufflenet's torch.chunk exports shape arithmetic on i64: end = (c + 1) / 2 * k.
// The proofs are over the reals (tensor variables are f32 in verification),
// where mul-div-assoc holds; over integers division truncates, and applying it
// made (c + 1) / 2 * 1 equal to (c + 1) * (1 / 2) = 0, so a Slice of half the
// channels took them all. Rules apply only to floating-point tensors.
//
// Whether the real-arithmetic forms of int_div.bad.ir are equal to the
// outputs of int_div.in.ir after the elementwise and fold rules, with the
// tensors of dtype `dtype` (the files' i64, or the same graphs in f32).
std::vector<bool> real_forms_equal(const std::string& dtype) {
  std::filesystem::path dir = std::filesystem::path(REFINERY_SOURCE_DIR) / "tests/rules/golden";
  auto text = [&](const char* file) {
    std::string s = *ir::read_file(dir / file);
    if (dtype == "f32") {
      for (auto [from, to] : {std::pair{"xi64>", "xf32>"}, {"[1]", "[1.0]"}, {"[2]", "[2.0]"}})
        for (size_t at; (at = s.find(from)) != std::string::npos;) s.replace(at, std::string_view(from).size(), to);
    }
    return s;
  };
  auto in = ir::parse_graph(text("int_div.in.ir"), "int_div.in.ir");
  auto bad = ir::parse_graph(text("int_div.bad.ir"), "int_div.bad.ir");
  EXPECT_TRUE(in.has_value() && bad.has_value());
  if (!in || !bad) return {};
  auto lib = load_library();
  auto seeded = egraph::tensor::seed(*in);
  EXPECT_TRUE(lib.has_value() && seeded.has_value());
  if (!lib || !seeded) return {};
  egraph::Runner<TensorNode, egraph::tensor::TensorAnalysis> runner(
      egraph::RunnerLimits{.iter_limit = 6, .node_limit = 20000, .time_limit = std::chrono::seconds(20)},
      std::move(seeded->egraph));
  runner.run(lib->rewrites({.families = {"elementwise", "fold"}}));
  EXPECT_EQ(runner.egraph.check_invariants(), "");
  std::string missing;
  auto classes = lookup_graph(runner.egraph, *bad, *in, seeded->origin, missing);
  std::vector<bool> equal(seeded->roots.size(), false);
  for (size_t i = 0; classes && i < classes->size(); ++i)
    equal[i] = (*classes)[i] == runner.egraph.find(seeded->roots[i]);
  return equal;
}

TEST(IntegerTensors, RealArithmeticRulesDoNotApply) {
  // On f32 tensors the rules do reach the real-arithmetic forms (so the
  // check below can fail); on i64 they must not.
  EXPECT_EQ(real_forms_equal("f32"), (std::vector<bool>{true, true}));
  EXPECT_EQ(real_forms_equal("i64"), (std::vector<bool>{false, false}));
}

// The e-class of each output of `in` after running the library rules
// `names` on it (empty when the graph, the library or the seeding failed,
// each of which fails the test).
std::vector<Id> classes_after(const Expected<ir::Graph>& in, std::vector<std::string> names) {
  EXPECT_TRUE(in.has_value()) << in.error().str();
  auto lib = load_library();
  EXPECT_TRUE(lib.has_value()) << lib.error().str();
  if (!in || !lib) return {};
  auto seeded = egraph::tensor::seed(*in);
  EXPECT_TRUE(seeded.has_value()) << seeded.error().str();
  if (!seeded) return {};
  egraph::Runner<TensorNode, egraph::tensor::TensorAnalysis> runner(
      egraph::RunnerLimits{.iter_limit = 4, .node_limit = 20000, .time_limit = std::chrono::seconds(20)},
      std::move(seeded->egraph));
  runner.run(lib->rewrites({.names = std::move(names)}));
  std::vector<Id> out;
  for (Id root : seeded->roots) out.push_back(runner.egraph.find(root));
  return out;
}

// A value condition (nonzero, positive, nonneg) holds of an e-class only
// where the e-graph knows its value, a constant whose elements satisfy it:
// for any other class it is not assumed (issue #17). x * w / w is x only
// for a nonzero constant w; for an input w (it may be 0 at run time: x * 0
// / 0 is NaN) and for a zero constant it stays apart.
TEST(ValueConditions, HoldOnlyOfConstantsThatSatisfyThem) {
  auto in = ir::parse_graph(R"(graph @main(%x: tensor<3xf32>, %w: tensor<3xf32>) {
  %k = const dense<[2.0]> : tensor<f32>
  %z = const dense<[0.0]> : tensor<f32>
  %1 = mul(%x, %w) : tensor<3xf32>
  %2 = div(%1, %w) : tensor<3xf32>
  %3 = mul(%x, %k) : tensor<3xf32>
  %4 = div(%3, %k) : tensor<3xf32>
  %5 = mul(%x, %z) : tensor<3xf32>
  %6 = div(%5, %z) : tensor<3xf32>
  return %x, %2, %4, %6
})");
  auto cls = classes_after(in, {"mul-div-cancel"});
  ASSERT_EQ(cls.size(), 4u);
  EXPECT_NE(cls[1], cls[0]) << "x * w / w for an input w";
  EXPECT_EQ(cls[2], cls[0]) << "x * 2 / 2";
  EXPECT_NE(cls[3], cls[0]) << "x * 0 / 0";
}

// `nonempty` holds of a class whose static shape has elements: max(relu(x))
// is relu(max(x)) only there (over an empty axis the max is -inf, relu of it
// 0); a dim of 0, or one not known statically, keeps them apart.
TEST(ShapeConditions, NonemptyNeedsAKnownShapeWithElements) {
  auto in = ir::parse_graph(R"(graph @main(%x: tensor<2x3xf32>, %e: tensor<0x3xf32>, %d: tensor<"n"x3xf32>) {
  %1 = relu(%x) : tensor<2x3xf32>
  %2 = reduce_max(%1) {axes = [0]} : tensor<1x3xf32>
  %3 = reduce_max(%x) {axes = [0]} : tensor<1x3xf32>
  %4 = relu(%3) : tensor<1x3xf32>
  %5 = relu(%e) : tensor<0x3xf32>
  %6 = reduce_max(%5) {axes = [0]} : tensor<1x3xf32>
  %7 = reduce_max(%e) {axes = [0]} : tensor<1x3xf32>
  %8 = relu(%7) : tensor<1x3xf32>
  %9 = relu(%d) : tensor<"n"x3xf32>
  %10 = reduce_max(%9) {axes = [0]} : tensor<1x3xf32>
  %11 = reduce_max(%d) {axes = [0]} : tensor<1x3xf32>
  %12 = relu(%11) : tensor<1x3xf32>
  return %2, %4, %6, %8, %10, %12
})");
  auto cls = classes_after(in, {"reduce-max-relu", "reduce-max-relu-rev"});
  ASSERT_EQ(cls.size(), 6u);
  EXPECT_EQ(cls[0], cls[1]) << "2x3";
  EXPECT_NE(cls[2], cls[3]) << "0x3";
  EXPECT_NE(cls[4], cls[5]) << "n x 3";
}

INSTANTIATE_TEST_SUITE_P(Rules, FamilyGolden, testing::ValuesIn(golden_cases()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

// An applier finds its match again from the classes the search bound, and
// looks the left side's inner terms up in the hashcons to search one class
// for each. Before a rebuild the hashcons can name another class for a
// term: once x and z are one value, neg(x) and neg(z) are one term, still in
// two classes, and the lookup of neg(x) names neg(z)'s. The match the search
// found before the union is applied all the same.
TEST(Appliers, FindTheirMatchWhereTheHashconsNamesAnotherClass) {
  auto in = ir::parse_graph(R"(graph @main(%x: tensor<3xf32>, %y: tensor<3xf32>, %z: tensor<3xf32>) {
  %1 = neg(%x) : tensor<3xf32>
  %2 = neg(%y) : tensor<3xf32>
  %3 = mul(%1, %2) : tensor<3xf32>
  %4 = neg(%z) : tensor<3xf32>
  %5 = relu(%z) : tensor<3xf32>
  return %3, %4, %5
})");
  ASSERT_TRUE(in.has_value()) << in.error().str();
  auto lib = load_library();
  ASSERT_TRUE(lib.has_value()) << lib.error().str();
  auto seeded = egraph::tensor::seed(*in);
  ASSERT_TRUE(seeded.has_value()) << seeded.error().str();
  TensorEGraph& g = seeded->egraph;
  auto cls = [&](const char* v) { return g.find(seeded->origin.value_class[ir::index(*in->find_value(v))]); };
  const Id x = cls("x"), y = cls("y"), z = cls("z"), neg_x = cls("1"), product = cls("3"), neg_z = cls("4");
  auto rws = lib->rewrites({.names = {"mul-neg-neg"}});
  ASSERT_EQ(rws.size(), 1u);
  egraph::SearchMatches matches;
  rws[0].search(g, 100, matches);
  ASSERT_EQ(matches.size(), 1u);

  g.merge(x, z);  // z, with two uses, stays the root
  const std::uint32_t neg = static_cast<std::uint32_t>(ir::Op::Neg), mul = static_cast<std::uint32_t>(ir::Op::Mul);
  const std::uint32_t plain = g.analysis().context().intern(NodeAttrs{});
  ASSERT_EQ(g.lookup(TensorNode{neg, plain, {x}}), std::optional<Id>(neg_z)) << "the case this test is about";
  ASSERT_NE(g.find(neg_x), g.find(neg_z));

  EXPECT_EQ(rws[0].apply(g, matches), 1u);
  g.rebuild();
  EXPECT_EQ(g.lookup(TensorNode{mul, plain, {x, y}}), std::optional<Id>(g.find(product)));
}

}  // namespace
}  // namespace refinery::rules
