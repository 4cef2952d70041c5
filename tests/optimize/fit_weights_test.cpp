// Exact weight rescaling into a chip's format (optimize/fit_weights.h): a
// layer whose integers share an odd factor is divided by it, the neuron's
// gain takes it, and nothing else moves.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "ir/text.h"
#include "optimize/fit_weights.h"
#include "targets/neuromorphic.h"

namespace refinery::optimize {
namespace {

ir::Graph affine_lif(const std::string& w, const std::string& b, const char* r = "1.0") {
  auto g = ir::parse_graph(fmt::format(R"(graph @main(%x: tensor<2xf32>) attributes {{ir_version = 8, opsets = {{}}}} {{
  %w = const dense<[{}]> : tensor<2x2xf32>
  %b = const dense<[{}]> : tensor<2xf32>
  %tau = const dense<[0.01]> : tensor<f32>
  %r = const dense<[{}]> : tensor<f32>
  %leak = const dense<[0.0]> : tensor<f32>
  %thr = const dense<[1.0]> : tensor<f32>
  %reset = const dense<[0.0]> : tensor<f32>
  %y = affine(%x, %w, %b) : tensor<2xf32>
  %s = lif(%y, %tau, %r, %leak, %thr, %reset) : tensor<2xf32>
  return %s
}})",
                                       w, b, r),
                           "affine_lif");
  EXPECT_TRUE(g.has_value()) << g.error().str();
  return std::move(*g);
}

std::vector<double> operand(const ir::Graph& g, size_t node, size_t i) {
  const ir::Tensor& t = *g.value(g.nodes()[node].inputs[i]).constant;
  std::vector<double> v;
  for (int64_t k = 0; k < t.numel(); ++k) v.push_back(t.as_double(k));
  return v;
}

TEST(FitWeights, AnOddFactorMovesIntoTheNeuronsGain) {
  // 3 x {100, -64, 7, 1} x 2^-3: 10 bits with a power-of-two scale, 8 without the 3
  ir::Graph g = affine_lif("37.5, -24.0, 2.625, 0.375", "0.75, 0.0", "0.5");
  EXPECT_EQ(targets::weight_fit(*g.value(g.nodes()[0].inputs[1]).constant, 8).bits_needed, 10);
  auto done = rescale_weights_to_fit(g, 8);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].factor, 3u);
  EXPECT_EQ(done[0].bits_before, 10);
  EXPECT_EQ(done[0].bits_after, 8);
  EXPECT_EQ(operand(g, 0, 1), (std::vector<double>{12.5, -8.0, 0.875, 0.125}));
  EXPECT_EQ(operand(g, 0, 2), (std::vector<double>{0.25, 0.0}));
  EXPECT_EQ(operand(g, 1, 2), (std::vector<double>{1.5}));  // r x 3
  EXPECT_TRUE(g.verify().has_value());
}

TEST(FitWeights, LayersThatFitOrHaveNoExactScaleStay) {
  ir::Graph fits = affine_lif("0.5, -1.5, 0.25, 0.0", "0.0, 0.0");  // 4 bits already
  EXPECT_TRUE(rescale_weights_to_fit(fits, 8).empty());
  ir::Graph wide = affine_lif("0.1, 0.3, 0.5, 0.7", "0.0, 0.0");  // no exact scale
  EXPECT_TRUE(rescale_weights_to_fit(wide, 8).empty());
  ir::Graph bias = affine_lif("37.5, -24.0, 2.625, 0.375", "0.5, 0.0");  // 3 does not divide the bias
  EXPECT_TRUE(rescale_weights_to_fit(bias, 8).empty());
  ir::Graph gain = affine_lif("37.5, -24.0, 2.625, 0.375", "0.0, 0.0", "0.1");  // 0.1 x 3 is not exact in binary32
  EXPECT_TRUE(rescale_weights_to_fit(gain, 8).empty());
}

}  // namespace
}  // namespace refinery::optimize
