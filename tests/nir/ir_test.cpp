// Spiking ops in the IR: the op table marks state, and recurrent edges (an
// operand defined later) are legal only through a stateful op.
#include <gtest/gtest.h>

#include "ir/spiking.h"
#include "ir/text.h"

namespace refinery::ir {
namespace {

TEST(SpikingOps, NeuronsAndDelayAreStateful) {
  for (Op op : {Op::Integrator, Op::IF, Op::LI, Op::LIF, Op::CubaLI, Op::CubaLIF, Op::Delay})
    EXPECT_TRUE(op_info(op).stateful) << op_name(op);
  for (Op op : {Op::Affine, Op::Linear, Op::Scale, Op::NirConv2d, Op::SumPool2d, Op::NirFlatten, Op::Threshold})
    EXPECT_FALSE(op_info(op).stateful) << op_name(op);
  EXPECT_EQ(operand_index(Op::LIF, "v_reset"), 5u);
  EXPECT_EQ(op_from_name("cuba_lif"), Op::CubaLIF);
}

// A LIF population with a recurrent Linear: %rec is used before its line.
constexpr const char* kRecurrent = R"(graph @main(%x: tensor<2xf32>) attributes {ir_version = 8, opsets = {}} {
  %tau = const dense<[0.01]> : tensor<f32>
  %r = const dense<[1.0]> : tensor<f32>
  %leak = const dense<[0.0]> : tensor<f32>
  %thr = const dense<[1.0, 1.0]> : tensor<2xf32>
  %reset = const dense<[0.0, 0.0]> : tensor<2xf32>
  %w = const dense<[0.5, -0.5, 0.25, 1.0]> : tensor<2x2xf32>
  %in = sum(%x, %rec) : tensor<2xf32>
  %lif = lif(%in, %tau, %r, %leak, %thr, %reset) : tensor<2xf32>
  %rec = linear(%lif, %w) : tensor<2xf32>
  return %lif
}
)";

TEST(RecurrentEdges, ParseAndPrintBack) {
  auto g = parse_graph(kRecurrent);
  ASSERT_TRUE(g.has_value()) << g.error().str();
  EXPECT_EQ(print_graph(*g), kRecurrent);
  EXPECT_EQ(spiking_stats(*g).recurrent_edges, 1);
}

TEST(RecurrentEdges, StatelessCycleIsRejected) {
  std::string text = kRecurrent;
  text.replace(text.find("%lif = lif(%in, %tau, %r, %leak, %thr, %reset)"), 46, "%lif = scale(%in, %thr)");
  auto g = parse_graph(text);
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.error().str(), "<input>:8:9: cycle without a stateful op through '#0 sum', '#1 scale', '#2 linear'");
}

TEST(RecurrentEdges, UseBeforeDefinitionWithoutCycleIsRejected) {
  auto g = parse_graph(R"(graph @main(%x: tensor<2xf32>) attributes {ir_version = 8, opsets = {}} {
  %a = identity(%b) : tensor<2xf32>
  %b = identity(%x) : tensor<2xf32>
  return %a
}
)");
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.error().str(), "<input>:2:8: input 'b' is used before it is defined");
}

}  // namespace
}  // namespace refinery::ir
