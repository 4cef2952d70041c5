// Issue #13's constant channels with the rule library: a pruned CNN's zero
// filters leave constant channels, and each convolution computes only its
// live ones (rules/lib/channels.rules; docs/rules.md "Constant channels").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/text.h"
#include "tests/optimize/pruned.h"

namespace refinery::optimize {
namespace {

using refinery::testing::GraphBuilder;

// Half of conv1's filters are zero (pruned, with a bias: constant channels
// through ReLU); conv1 computes only its live filters, conv2 reads only
// those, and the constant part, per position where conv2 pads, is folded
// into one tensor: no Gather is left to run. With both cpu models; which
// rules and which of Add or Sub (with conv2's weights negated) adds the
// constant part is the analytic model's (cpu-analytic): the learned model
// prices a Sub below the Add of the same work and takes that form
// (docs/measurements.md, session 20).
TEST(Pruned, APrunedConvChainComputesOnlyItsLiveChannels) {
  GraphBuilder b;
  auto x = b.input("x", {1, 8, 12, 12});
  auto w1 = pruned::filled(b, "w1", {32, 8, 3, 3}, 1, 2);
  auto b1 = pruned::filled(b, "b1", {32}, 2);
  auto w2 = pruned::filled(b, "w2", {32, 32, 3, 3}, 3);
  auto b2 = pruned::filled(b, "b2", {32}, 4);
  auto c1 = b.op1(ir::Op::Conv, {x, w1, b1}, pruned::pads1());
  auto r1 = b.op1(ir::Op::Relu, {c1});
  auto c2 = b.op1(ir::Op::Conv, {r1, w2, b2}, pruned::pads1());
  ir::Graph g = b.finish({b.op1(ir::Op::Relu, {c2})});
  for (const char* t : {"cpu-analytic", "cpu"}) {
    SCOPED_TRACE(t);
    std::optional<OptimizeResult> r;
    ASSERT_NO_FATAL_FAILURE(pruned::optimize_validated(g, r, {}, t));
    EXPECT_LT(r->report.flops_after, 0.6 * r->report.flops_before);
    EXPECT_EQ(r->report.ops_after.count("Gather"), 0u) << ir::print_graph(r->graph);
    EXPECT_EQ(r->report.ops_after.at("Conv"), 2);
    // conv1 computes its 16 live filters, conv2 reads only those, and the
    // constant part (conv-zero-weight's bias through ReLU and conv2, per
    // position) is one folded tensor added to conv2's result.
    using Dims = std::vector<std::vector<int64_t>>;
    EXPECT_EQ(pruned::conv_weights(r->graph), (Dims{{16, 8, 3, 3}, {32, 16, 3, 3}})) << ir::print_graph(r->graph);
    EXPECT_EQ(r->report.ops_after.count("Add") + r->report.ops_after.count("Sub"), 1u) << ir::print_graph(r->graph);
    if (std::string_view(t) != "cpu-analytic") continue;
    EXPECT_EQ(r->report.extraction.rules_used.count("conv-split-constant-channels"), 1u);
    EXPECT_EQ(r->report.ops_after.count("Add"), 1u) << ir::print_graph(r->graph);
  }
}

// mobilenet_v2's inverted residual on x [1, c_in, s, s]: a 1x1 expansion
// to `hidden` channels (its filters f with f % e_every == 1 zero, none when
// 0), ReLU6, a 3x3 depthwise convolution (filters f % d_every == d_at zero),
// ReLU6, a 1x1 projection to `out` channels.
ir::Graph inverted_residual(int64_t c_in, int64_t s, int64_t hidden, int64_t out, int64_t e_every, int64_t d_every,
                            int64_t d_at) {
  GraphBuilder b;
  auto x = b.input("x", {1, c_in, s, s});
  auto w1 = pruned::filled(b, "w1", {hidden, c_in, 1, 1}, 1, e_every);
  auto b1 = pruned::filled(b, "b1", {hidden}, 2);
  auto wd = pruned::filled(b, "wd", {hidden, 1, 3, 3}, 3, d_every, d_at);
  auto bd = pruned::filled(b, "bd", {hidden}, 4);
  auto w2 = pruned::filled(b, "w2", {out, hidden, 1, 1}, 5);
  auto b2 = pruned::filled(b, "b2", {out}, 6);
  auto lo = b.graph().add_constant("lo", std::make_shared<const ir::Tensor>(ir::Tensor::scalar_f32(0.f)));
  auto hi = b.graph().add_constant("hi", std::make_shared<const ir::Tensor>(ir::Tensor::scalar_f32(6.f)));
  ir::Attributes dw = pruned::pads1();
  dw.set("group", hidden);
  auto e = b.op1(ir::Op::Clip, {b.op1(ir::Op::Conv, {x, w1, b1}), lo, hi});
  auto d = b.op1(ir::Op::Clip, {b.op1(ir::Op::Conv, {e, wd, bd}, dw), lo, hi});
  return b.finish({b.op1(ir::Op::Conv, {d, w2, b2})});
}

// A pruned inverted-residual branch (mobilenet_v2's): a 1x1 expansion, a
// depthwise convolution and a 1x1 projection, the depthwise one's odd
// filters zero. The projection reads only the live channels; its constant
// part is the same at every position (no padding reaches it), so it goes
// into the projection's bias (clip-expand, conv-nobias-1x1-expand,
// add-expand, conv-bias-add-fold) instead of an Add of a folded
// 1 x 16 x 12 x 12 tensor, which ONNX Runtime runs as a kernel of its own.
TEST(Pruned, APrunedDepthwiseBranchFoldsItsConstantPartIntoTheBias) {
  ir::Graph g = inverted_residual(8, 12, 32, 16, 0, 2, 1);
  std::optional<OptimizeResult> r;
  ASSERT_NO_FATAL_FAILURE(pruned::optimize_validated(g, r));
  EXPECT_EQ(r->report.ops_after.count("Add"), 0u) << ir::print_graph(r->graph);
  EXPECT_EQ(r->report.ops_after.count("Gather"), 0u) << ir::print_graph(r->graph);
  EXPECT_EQ(r->report.ops_after.at("Conv"), 3) << ir::print_graph(r->graph);
  EXPECT_LT(r->report.flops_after, 0.6 * r->report.flops_before) << ir::print_graph(r->graph);
}

// A residual block whose two convolutions are pruned: conv2's constant
// channels meet the residual stream in an Add, whose every channel is live,
// so no Gather reaches conv2 from below. conv2 computes its live filters and
// a 1x1 convolution by a selection puts them back at full width
// (conv-live-filters), besides reading only conv1's live channels: about
// 40% of the FLOPs are left, where reading fewer channels alone leaves 50%.
TEST(Pruned, APrunedResidualBlockComputesOnlyItsLiveFilters) {
  GraphBuilder b;
  auto x = b.input("x", {1, 32, 12, 12});
  auto w1 = pruned::filled(b, "w1", {32, 32, 3, 3}, 1, 2);
  auto b1 = pruned::filled(b, "b1", {32}, 2);
  auto w2 = pruned::filled(b, "w2", {32, 32, 3, 3}, 3, 2);
  auto b2 = pruned::filled(b, "b2", {32}, 4);
  auto c1 = b.op1(ir::Op::Conv, {x, w1, b1}, pruned::pads1());
  auto r1 = b.op1(ir::Op::Relu, {c1});
  auto c2 = b.op1(ir::Op::Conv, {r1, w2, b2}, pruned::pads1());
  ir::Graph g = b.finish({b.op1(ir::Op::Relu, {b.op1(ir::Op::Add, {x, c2})})});
  std::optional<OptimizeResult> r;
  ASSERT_NO_FATAL_FAILURE(pruned::optimize_validated(g, r));
  EXPECT_LT(r->report.flops_after, 0.45 * r->report.flops_before) << ir::print_graph(r->graph);
  EXPECT_EQ(r->report.ops_after.at("Conv"), 3) << ir::print_graph(r->graph);
  EXPECT_EQ(r->report.ops_after.count("Gather"), 0u) << ir::print_graph(r->graph);
  // conv2 computes its 16 live filters (conv-live-filters) from conv1's 16
  // live channels, and a 1x1 selection puts them back at width 32.
  using Dims = std::vector<std::vector<int64_t>>;
  EXPECT_EQ(pruned::conv_weights(r->graph), (Dims{{16, 16, 3, 3}, {16, 32, 3, 3}, {32, 16, 1, 1}}))
      << ir::print_graph(r->graph);
}
// An inverted residual pruned as ln_structured prunes mobilenet_v2: the
// expansion's odd filters zero, the depthwise convolution's filters f with
// f % 4 == 2 zero. Only f % 4 == 0 is live in both: 16 of 64 channels. The
// depthwise convolution's other channels are constant in two ways, by its
// own zero filters and by the expansion's (a constant input, which padding
// makes a per-position constant), and a selection of both kinds splits in
// two (gather-channels-depthwise-split): the expansion, the depthwise
// convolution and the projection's input then keep the 16 live channels,
// and the constant part is one folded tensor added to the projection.
TEST(Pruned, ADepthwiseConvolutionAfterAPrunedExpansionComputesOnlyChannelsLiveInBoth) {
  ir::Graph g = inverted_residual(16, 24, 64, 32, 2, 4, 2);
  std::optional<OptimizeResult> r;
  ASSERT_NO_FATAL_FAILURE(pruned::optimize_validated(g, r));
  using Dims = std::vector<std::vector<int64_t>>;
  EXPECT_EQ(pruned::conv_weights(r->graph), (Dims{{16, 1, 3, 3}, {16, 16, 1, 1}, {32, 16, 1, 1}}))
      << ir::print_graph(r->graph);
  EXPECT_EQ(r->report.ops_after.count("Gather"), 0u) << ir::print_graph(r->graph);
  EXPECT_EQ(r->report.extraction.rules_used.count("gather-channels-depthwise-split"), 1u);
}

}  // namespace
}  // namespace refinery::optimize
