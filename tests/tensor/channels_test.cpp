// The tensor analysis' constant facts (egraph/tensor/channels.h): which
// channels of a value do not depend on the inputs, carried from a pruned
// convolution's zero filters through ReLU, pooling and elementwise ops, and
// which classes are all zeros.
#include <gtest/gtest.h>

#include "egraph/tensor/convert.h"
#include "ir/text.h"

namespace refinery::egraph::tensor {
namespace {

// Channel facts of each output, as a string of 0/1 ("-" when none is known).
std::vector<std::string> facts(const std::string& text, std::vector<bool>* zero = nullptr) {
  auto g = ir::parse_graph(text);
  EXPECT_TRUE(g.has_value()) << g.error().str();
  if (!g) return {};
  auto s = seed(*g);
  EXPECT_TRUE(s.has_value()) << s.error().str();
  if (!s) return {};
  std::vector<std::string> out;
  for (Id r : s->roots) {
    const TensorData& d = s->egraph[r].data;
    std::string f = "-";
    if (d.channels) {
      f.clear();
      for (bool b : *d.channels) f += b ? '1' : '0';
    }
    out.push_back(f);
    if (zero) zero->push_back(d.zero);
  }
  return out;
}

// Filter 1 of %w is zero: channel 1 of the convolution is its bias. ReLU,
// max pooling and a per-channel Add keep it; a full convolution mixes it
// with the live ones; a depthwise one adds its own zero filters (%8:
// channels 1 and 2); any other grouped one counts its zero filters only
// (%9: filter 0, not the two that read channel 1).
TEST(ChannelFacts, ZeroFiltersMakeConstantChannelsThatFlowThroughChannelwiseOps) {
  auto f = facts(R"(graph @main(%x: tensor<1x2x4x4xf32>) {
  %w = const dense<[1.0, 2.0, 3.0, 4.0, 0.0, 0.0, 0.0, 0.0, 5.0, 6.0, 7.0, 8.0]> : tensor<3x2x2x1xf32>
  %b = const dense<[0.5, 2.0, -1.0]> : tensor<3xf32>
  %c = const dense<[1.0, 2.0, 3.0]> : tensor<1x3x1x1xf32>
  %dw = const dense<[1.0, 0.0, 3.0]> : tensor<3x1x1x1xf32>
  %dw2 = const dense<[1.0, 2.0, 0.0]> : tensor<3x1x1x1xf32>
  %full = const dense<[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]> : tensor<3x3x1x1xf32>
  %wg = const dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<6x1x1x1xf32>
  %1 = conv(%x, %w, %b) {pads = [0, 0, 1, 0]} : tensor<1x3x4x4xf32>
  %2 = relu(%1) : tensor<1x3x4x4xf32>
  %3 = max_pool(%2) {kernel_shape = [2, 2]} : tensor<1x3x3x3xf32>
  %4 = add(%2, %c) : tensor<1x3x4x4xf32>
  %6 = conv(%2, %dw) {group = 3} : tensor<1x3x4x4xf32>
  %7 = conv(%2, %full) : tensor<1x3x4x4xf32>
  %8 = conv(%2, %dw2) {group = 3} : tensor<1x3x4x4xf32>
  %9 = conv(%2, %wg) {group = 3} : tensor<1x6x4x4xf32>
  return %1, %3, %4, %6, %7, %8, %9
}
)");
  EXPECT_EQ(f, (std::vector<std::string>{"010", "010", "010", "010", "-", "011", "100000"}));
}

TEST(ChannelFacts, AnAddWithALiveActivationHasNoConstantChannels) {
  auto f = facts(R"(graph @main(%x: tensor<1x2x4x4xf32>, %y: tensor<1x2x4x4xf32>) {
  %w = const dense<[1.0, 2.0, 0.0, 0.0]> : tensor<2x2x1x1xf32>
  %1 = conv(%x, %w) : tensor<1x2x4x4xf32>
  %2 = add(%1, %y) : tensor<1x2x4x4xf32>
  %3 = add(%1, %1) : tensor<1x2x4x4xf32>
  return %2, %3
}
)");
  EXPECT_EQ(f, (std::vector<std::string>{"-", "01"}));
}

// Zero: a zero constant, a gather of zero filters, a reshape of zeros; not a
// gather that takes a live filter.
TEST(ZeroFact, GatheredZeroFiltersAreZero) {
  std::vector<bool> zero;
  facts(R"(graph @main(%x: tensor<1x2x4x4xf32>) {
  %w = const dense<[1.0, 2.0, 0.0, 0.0, 0.0, 0.0]> : tensor<3x2x1x1xf32>
  %d = const dense<[1, 2]> : tensor<2xi64>
  %l = const dense<[0, 2]> : tensor<2xi64>
  %s = const dense<[4]> : tensor<1xi64>
  %1 = gather(%w, %d) : tensor<2x2x1x1xf32>
  %2 = gather(%w, %l) : tensor<2x2x1x1xf32>
  %3 = reshape(%1, %s) : tensor<4xf32>
  return %1, %2, %3
}
)", &zero);
  EXPECT_EQ(zero, (std::vector<bool>{true, false, true}));
}

// torch.zeros at run-time dims (baddbmm's input in attn_baddbmm): a
// ConstantOfShape of 0, or of no value (0 by default), is zero; of 1, not.
TEST(ZeroFact, AConstantOfShapeOfZeroIsZero) {
  std::vector<bool> zero;
  facts(R"(graph @main(%x: tensor<"n"x3xf32>) {
  %s = shape(%x) : tensor<2xi64>
  %1 = constant_of_shape(%s) {value = dense<[0.0]> : tensor<1xf32>} : tensor<"n"x3xf32>
  %2 = constant_of_shape(%s) : tensor<"n"x3xf32>
  %3 = constant_of_shape(%s) {value = dense<[1.0]> : tensor<1xf32>} : tensor<"n"x3xf32>
  return %1, %2, %3
}
)", &zero);
  EXPECT_EQ(zero, (std::vector<bool>{true, true, false}));
}

}  // namespace
}  // namespace refinery::egraph::tensor
