// Channel counts widened to the runtime's blocks (optimize/channel_blocks.h):
// a value that flows from convolutions to convolutions gets zero filters
// up to the block and its readers zero weights, the graph computes the same
// values, and a value that reaches anything else keeps its width.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "optimize/channel_blocks.h"
#include "ir/text.h"
#include "optimize/optimize.h"
#include "rules/rules.h"
#include "targets/cost_model.h"
#include "tests/targets/graph_builder.h"
#include "verify/validate.h"

namespace refinery::optimize {
namespace {

using refinery::testing::GraphBuilder;
using Dims = std::vector<int64_t>;

ir::Attributes attrs(std::vector<std::pair<const char*, ir::AttrValue>> list) {
  ir::Attributes a;
  for (auto& [k, v] : list) a.set(k, std::move(v));
  return a;
}

Dims weight_dims(const ir::Graph& g, size_t node) { return g.value(g.nodes()[node].inputs[1]).constant->dims(); }

Dims dims_of(const ir::Graph& g, const std::string& value) {
  return g.value(*g.find_value(value)).type.shape.sizes();
}

// The widened graph computes what `before` computes (verify/, random inputs).
void expect_same_values(const ir::Graph& before, const ir::Graph& after) {
  ASSERT_TRUE(after.verify().has_value());
  auto v = verify::validate(before, after, {});
  ASSERT_TRUE(v.has_value()) << v.error().str();
  EXPECT_TRUE(v->passed) << v->first_divergence;
  EXPECT_LT(v->max_abs_error, 1e-5);
}

// x -> Conv (12 filters) -> Relu -> Conv 3x3 (8 filters): 12 channels in between.
TEST(ChannelBlocks, AValueBetweenTwoConvolutionsWidensToTheBlock) {
  GraphBuilder b;
  auto x = b.input("x", {1, 3, 6, 6});
  auto c1 = b.op1(ir::Op::Conv, {x, b.filled("w1", {12, 3, 1, 1}, 1), b.filled("b1", {12}, 2)});
  auto r = b.op1(ir::Op::Relu, {c1});
  auto c2 = b.op1(ir::Op::Conv, {r, b.filled("w2", {8, 12, 3, 3}, 3)}, attrs({{"pads", Dims{1, 1, 1, 1}}}));
  ir::Graph before = b.finish({c2});
  ir::Graph g = before;
  auto done = pad_channels_to_block(g, 16);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].from, 12);
  EXPECT_EQ(done[0].to, 16);
  EXPECT_EQ(done[0].values, (std::vector<std::string>{g.value(c1).name, g.value(r).name}));
  EXPECT_EQ(weight_dims(g, 0), (Dims{16, 3, 1, 1}));
  EXPECT_EQ(weight_dims(g, 2), (Dims{8, 16, 3, 3}));
  EXPECT_EQ(g.value(g.nodes()[0].inputs[2]).constant->dims(), (Dims{16}));
  EXPECT_EQ(dims_of(g, g.value(r).name), (Dims{1, 16, 6, 6}));
  EXPECT_EQ(dims_of(g, g.value(c2).name), (Dims{1, 8, 6, 6}));
  expect_same_values(before, g);
  // A multiple of the block, or no block: nothing to do.
  ir::Graph again = g;
  EXPECT_TRUE(pad_channels_to_block(again, 16).empty());
  ir::Graph none = before;
  EXPECT_TRUE(pad_channels_to_block(none, 0).empty());
  EXPECT_TRUE(pad_channels_to_block(none, 4).empty());  // 12 is a multiple of 4
}

// A residual join (mobilenet_v2_p50's 19 channels): two convolutions' sum,
// clipped and max-pooled, read by a third; all of it widens together, and
// a convolution sharing a weight outside the region keeps it.
TEST(ChannelBlocks, AnAddOfTwoConvolutionsWidensWithBothAndItsReaders) {
  GraphBuilder b;
  auto x = b.input("x", {1, 8, 6, 6});
  auto wa = b.filled("wa", {19, 8, 1, 1}, 4);
  auto a = b.op1(ir::Op::Conv, {x, wa, b.filled("ba", {19}, 5)});
  auto c = b.op1(ir::Op::Conv, {x, b.filled("wc", {19, 8, 3, 3}, 6)}, attrs({{"pads", Dims{1, 1, 1, 1}}}));
  auto s = b.op1(ir::Op::Add, {a, c});
  auto lo = b.filled("lo", {}, 0), hi = b.filled("hi", {}, 1.2);
  auto k = b.op1(ir::Op::Clip, {s, lo, hi});
  auto p = b.op1(ir::Op::MaxPool, {k}, attrs({{"kernel_shape", Dims{2, 2}}}));
  auto y = b.op1(ir::Op::Conv, {p, b.filled("wy", {4, 19, 1, 1}, 7)});
  auto other = b.op1(ir::Op::Conv, {x, wa});  // wa again, outside the region: a graph output
  ir::Graph before = b.finish({y, other});
  ir::Graph g = before;
  auto done = pad_channels_to_block(g, 16);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].from, 19);
  EXPECT_EQ(done[0].to, 32);
  EXPECT_EQ(done[0].values.size(), 5u);  // a, c, s, k, p
  EXPECT_EQ(weight_dims(g, 0), (Dims{32, 8, 1, 1}));
  EXPECT_EQ(weight_dims(g, 1), (Dims{32, 8, 3, 3}));
  EXPECT_EQ(weight_dims(g, 5), (Dims{4, 32, 1, 1}));
  EXPECT_EQ(weight_dims(g, 6), (Dims{19, 8, 1, 1}));
  EXPECT_EQ(dims_of(g, g.value(p).name), (Dims{1, 32, 5, 5}));
  expect_same_values(before, g);
}

// Where the region reaches a graph output, a depthwise convolution, a
// broadcast Add or an op that mixes channels otherwise, nothing changes.
TEST(ChannelBlocks, ARegionThatReachesAnythingElseKeepsItsWidth) {
  auto chain = [](int reader) {
    GraphBuilder b;
    auto x = b.input("x", {1, 3, 4, 4});
    auto c1 = b.op1(ir::Op::Conv, {x, b.filled("w1", {12, 3, 1, 1}, 1)});
    ir::ValueId out = c1;
    if (reader == 1)
      out = b.op1(ir::Op::Conv, {c1, b.filled("wd", {12, 1, 1, 1}, 2)}, attrs({{"group", int64_t{12}}}));
    if (reader == 2) out = b.op1(ir::Op::Add, {c1, b.filled("k", {1, 12, 1, 1}, 3)});
    if (reader == 3) out = b.op1(ir::Op::Softmax, {c1}, attrs({{"axis", int64_t{1}}}));
    if (reader == 4) {  // the value is also read as a graph output
      auto c2 = b.op1(ir::Op::Conv, {c1, b.filled("w2", {4, 12, 1, 1}, 4)});
      return b.finish({c2, c1});
    }
    return b.finish({b.op1(ir::Op::Conv, {out, b.filled("w3", {4, 12, 1, 1}, 5)})});
  };
  for (int reader = 0; reader <= 4; ++reader) {
    SCOPED_TRACE(reader);
    ir::Graph g = chain(reader);
    auto done = pad_channels_to_block(g, 16);
    EXPECT_EQ(done.size(), reader == 0 ? 1u : 0u);
    EXPECT_EQ(weight_dims(g, 0)[0], reader == 0 ? 16 : 12);
  }
}

// Through the pipeline: conv1 has 12 live filters of 24 (pruned; the rest
// zero channels through ReLU), so extraction computes 12 and conv2 reads 12
// (the rules round live channels to blocks of 16 only in tensors of 16k
// channels, rules/lets.cpp); for the cpu (ONNX Runtime's blocks of 16) both
// are written in a whole block, the report says so, and the written graph
// validates. The gpu's spec has no block: 12 stays.
TEST(ChannelBlocks, APrunedConvChainIsWrittenInWholeBlocksForTheCpu) {
  GraphBuilder b;
  auto x = b.input("x", {1, 8, 12, 12});
  auto w1 = b.filled("w1", {24, 8, 3, 3}, 1);
  {
    std::vector<float> v(24 * 8 * 9);
    const ir::Tensor& t = *b.graph().value(w1).constant;
    for (int64_t i = 0; i < t.numel(); ++i)
      v[static_cast<size_t>(i)] = i / (8 * 9) < 12 ? static_cast<float>(t.as_double(i)) : 0.0f;  // 12 live
    b.graph().value(w1).constant =
        std::make_shared<const ir::Tensor>(ir::Tensor::from_values<float>(ir::DType::f32, {24, 8, 3, 3}, v));
  }
  ir::Attributes pads = attrs({{"pads", Dims{1, 1, 1, 1}}});
  std::vector<float> bias(24);
  for (size_t i = 0; i < 24; ++i) bias[i] = i < 12 ? 0.25f : -1.0f;  // dead: ReLU makes them zero channels
  auto b1 = b.graph().add_constant(
      "b1", std::make_shared<const ir::Tensor>(ir::Tensor::from_values<float>(ir::DType::f32, {24}, bias)));
  auto c1 = b.op1(ir::Op::Conv, {x, w1, b1}, pads);
  auto r1 = b.op1(ir::Op::Relu, {c1});
  auto c2 = b.op1(ir::Op::Conv, {r1, b.filled("w2", {32, 24, 3, 3}, 3), b.filled("b2", {32}, 4)}, pads);
  ir::Graph g = b.finish({b.op1(ir::Op::Relu, {c2})});
  auto lib = rules::load_library();
  ASSERT_TRUE(lib.has_value()) << lib.error().str();
  for (const char* name : {"gpu", "cpu"}) {
    SCOPED_TRACE(name);
    auto target = targets::load_target(name);
    ASSERT_TRUE(target.has_value()) << target.error().str();
    OptimizeOptions options;
    options.min_gain = 0;  // the gpu's launches hide the saving on so small a graph
    auto r = optimize(g, *lib, *target, options);
    ASSERT_TRUE(r.has_value()) << r.error().str();
    ASSERT_EQ(r->report.outcome, Outcome::Optimized) << r->report.reason;
    ASSERT_TRUE(r->report.validation.has_value());
    EXPECT_TRUE(r->report.validation->passed) << r->report.validation->first_divergence;
    std::vector<Dims> convs;
    for (const ir::Node& n : r->graph.nodes())
      if (n.op == ir::Op::Conv) convs.push_back(r->graph.value(n.inputs[1]).constant->dims());
    std::sort(convs.begin(), convs.end());
    const bool cpu = std::string_view(name) == "cpu";
    const int64_t live = cpu ? 16 : 12;
    EXPECT_EQ(convs, (std::vector<Dims>{{live, 8, 3, 3}, {32, live, 3, 3}})) << ir::print_graph(r->graph);
    ASSERT_EQ(r->report.channels_padded.size(), cpu ? 1u : 0u);
    if (cpu) {
      EXPECT_EQ(r->report.channels_padded[0].from, 12);
      EXPECT_EQ(r->report.channels_padded[0].to, 16);
    }
  }
}

}  // namespace
}  // namespace refinery::optimize
