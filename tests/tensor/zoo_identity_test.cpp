// ir::Graph to e-graph and back is the identity on every zoo model (types
// only refined): import, seed, extract with a size cost, compare.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "egraph/tensor/convert.h"
#include "extract/tree_greedy.h"
#include "frontends/onnx.h"
#include "ir/stats.h"
#include "ir/text.h"

namespace refinery::egraph::tensor {
namespace {

namespace fs = std::filesystem;

TEST(TensorZoo, SeedAndExtractIsTheIdentityOnEveryModel) {
  fs::path dir = fs::path(REFINERY_BINARY_DIR) / "zoo";
  if (!fs::exists(dir)) GTEST_SKIP() << "no zoo in " << dir << " (build the 'zoo' target)";
  std::vector<fs::path> models;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".onnx") models.push_back(e.path());
  std::sort(models.begin(), models.end());
  ASSERT_FALSE(models.empty());
  for (const auto& m : models) {
    SCOPED_TRACE(m.filename().string());
    auto g = frontends::import_onnx(m);
    ASSERT_TRUE(g.has_value()) << g.error().str();
    auto s = seed(*g);
    ASSERT_TRUE(s.has_value()) << s.error().str();
    EXPECT_EQ(s->egraph.check_invariants(), "");
    extract::TreeExtractor ex(s->egraph, extract::SizeCost{});
    auto back = to_graph(
        s->egraph, s->roots, [&](Id c) -> const TensorNode& { return *ex.best(c); }, s->origin);
    ASSERT_TRUE(back.has_value()) << back.error().str();
    // The types may come back more precise than the model declared them (a
    // Slice the exporter typed ?x?x? is 16x2x64: docs/ir.md, "Refinement"),
    // never less precise nor contradicting; all else is identical.
    ir::Graph expected = *g;
    for (size_t v = 0; v < expected.num_values(); ++v) {
      ir::Value& value = expected.value(ir::ValueId{static_cast<std::uint32_t>(v)});
      auto in_back = back->find_value(value.name);
      if (!in_back) continue;
      const ir::TensorType& b = back->value(*in_back).type;
      auto refined = ir::refine(value.type, b);
      if (refined && *refined == b) value.type = b;
    }
    std::string diff = ir::graph_difference(expected, *back);
    EXPECT_EQ(diff, "");
    if (!diff.empty()) {  // say which ops went missing
      auto a = ir::compute_stats(*g).op_histogram, b = ir::compute_stats(*back).op_histogram;
      for (const auto& [op, n] : a)
        if (b[op] != n) ADD_FAILURE() << op << ": " << n << " before, " << b[op] << " after";
    }
  }
}

}  // namespace
}  // namespace refinery::egraph::tensor
