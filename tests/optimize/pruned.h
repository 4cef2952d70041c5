// Pruned CNNs' weights and the library's pipeline on them, for the tests
// of issue #13's constant channels (pruned_test.cpp) and the graphs other
// tests build from the same filled weights (pipeline_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "optimize/optimize.h"
#include "rules/rules.h"
#include "targets/cost_model.h"
#include "tests/targets/graph_builder.h"

namespace refinery::optimize::pruned {

using refinery::testing::GraphBuilder;

// Weights of `dims` with values in [-0.45, 0.5); with `zero_every`, the
// filters (slices along axis 0) f with f % zero_every == zero_at are zero.
inline ir::ValueId filled(GraphBuilder& b, const std::string& name, std::vector<int64_t> dims, uint32_t seed,
                          int64_t zero_every = 0, int64_t zero_at = 1) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  int64_t per = n / dims[0];
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    bool zero = zero_every > 0 && (i / per) % zero_every == zero_at;
    v[static_cast<size_t>(i)] = zero ? 0.f : static_cast<float>((i * 37 + seed) % 17) / 17.f - 0.45f;
  }
  return b.graph().add_constant(
      name, std::make_shared<const ir::Tensor>(ir::Tensor::from_values<float>(ir::DType::f32, std::move(dims), v)));
}

inline ir::Attributes pads1() {
  ir::Attributes a;
  a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  return a;
}

// `g` optimized for the cpu (or `target`) with the rule library: rewritten, and validated.
inline void optimize_validated(const ir::Graph& g, std::optional<OptimizeResult>& out,
                               const OptimizeOptions& options = {}, const char* target_name = "cpu") {
  auto lib = rules::load_library();
  ASSERT_TRUE(lib.has_value()) << lib.error().str();
  auto t = targets::load_target(target_name);
  ASSERT_TRUE(t.has_value()) << t.error().str();
  auto r = optimize(g, *lib, *t, options);
  ASSERT_TRUE(r.has_value()) << r.error().str();
  ASSERT_EQ(r->report.outcome, Outcome::Optimized) << r->report.reason;
  ASSERT_TRUE(r->report.validation.has_value());
  EXPECT_TRUE(r->report.validation->passed) << r->report.validation->first_divergence;
  out = std::move(*r);
}

// The shape of each Conv's weight in `g` (constants, as export folds them):
// which filters and input channels each convolution kept, whichever rule's
// node the extractor took among equal folded expressions.
inline std::vector<std::vector<int64_t>> conv_weights(const ir::Graph& g) {
  std::vector<std::vector<int64_t>> out;
  for (const ir::Node& n : g.nodes())
    if (n.op == ir::Op::Conv && g.value(n.inputs[1]).constant) out.push_back(g.value(n.inputs[1]).constant->dims());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace refinery::optimize::pruned
