// Layout, indexing and shape ops against hand-computed values.
#include <limits>

#include "tests/runtime/helpers.h"

namespace refinery::runtime::testing {
namespace {

using ir::Op;
using Ints = std::vector<int64_t>;

ir::Tensor range_f32(std::vector<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<float>(i));
  return f32(std::move(dims), v);
}

TEST(Layout, ReshapeCopiesZerosAndInfersMinusOne) {
  auto y = run1(Op::Reshape, {range_f32({2, 3, 4}), i64({2}, {0, -1})});
  EXPECT_EQ(y.dims(), (Ints{2, 12}));
  auto z = run1(Op::Reshape, {range_f32({0, 3}), i64({2}, {3, 0})}, attrs({{"allowzero", int64_t{1}}}));
  EXPECT_EQ(z.dims(), (Ints{3, 0}));
}

TEST(Layout, FlattenTransposeSqueezeUnsqueeze) {
  auto x = range_f32({2, 3, 4});
  EXPECT_EQ(run1(Op::Flatten, {x}, attrs({{"axis", int64_t{-1}}})).dims(), (Ints{6, 4}));
  EXPECT_EQ(run1(Op::Flatten, {x}, attrs({{"axis", int64_t{0}}})).dims(), (Ints{1, 24}));
  auto t = run1(Op::Transpose, {range_f32({2, 3})});
  EXPECT_EQ(t.dims(), (Ints{3, 2}));
  expect_near(t, {0, 3, 1, 4, 2, 5});
  EXPECT_EQ(run1(Op::Squeeze, {range_f32({1, 3, 1})}).dims(), Ints{3});
  EXPECT_EQ(run1(Op::Squeeze, {range_f32({1, 3, 1}), i64({1}, {-1})}).dims(), (Ints{1, 3}));
  EXPECT_EQ(run1(Op::Unsqueeze, {range_f32({3}), i64({2}, {-1, 0})}).dims(), (Ints{1, 3, 1}));
  EXPECT_FALSE(run_op(Op::Squeeze, {range_f32({2}), i64({1}, {0})}));
}

TEST(Layout, ConcatAndSplit) {
  auto c = run1(Op::Concat, {range_f32({1, 2}), f32({1, 1}, {9})}, attrs({{"axis", int64_t{-1}}}));
  expect_near(c, {0, 1, 9});
  auto r = run_op(Op::Split, {range_f32({3}), i64({2}, {1, 2})}, {}, 2);
  ASSERT_TRUE(r) << r.error().str();
  expect_near((*r)[0], {0});
  expect_near((*r)[1], {1, 2});
  auto even = run_op(Op::Split, {range_f32({4})}, {}, 2);
  ASSERT_TRUE(even);
  expect_near((*even)[1], {2, 3});
}

TEST(Layout, SliceClampsAndStepsBackwards) {
  auto x = range_f32({10});
  int64_t big = std::numeric_limits<int64_t>::max();
  expect_near(run1(Op::Slice, {x, i64({1}, {-3}), i64({1}, {big})}), {7, 8, 9});
  expect_near(run1(Op::Slice, {x, i64({1}, {-1}), i64({1}, {-100}), i64({1}, {0}), i64({1}, {-3})}), {9, 6, 3, 0});
  expect_near(run1(Op::Slice, {x, i64({1}, {20}), i64({1}, {5}), std::nullopt, i64({1}, {-2})}), {9, 7});
  auto m = run1(Op::Slice, {range_f32({3, 4}), i64({2}, {1, 1}), i64({2}, {3, 3}), i64({2}, {1, 0})});
  EXPECT_EQ(m.dims(), (Ints{2, 2}));
  expect_near(m, {5, 6, 9, 10});
}

TEST(Layout, GatherWithNegativeIndices) {
  expect_near(run1(Op::Gather, {f32({3}, {10, 20, 30}), i64({2}, {-1, 0})}), {30, 10});
  auto g = run1(Op::Gather, {range_f32({2, 3}), i32({2, 1}, {2, -3})}, attrs({{"axis", int64_t{1}}}));
  EXPECT_EQ(g.dims(), (Ints{2, 2, 1}));
  expect_near(g, {2, 0, 5, 3});
  auto s = run1(Op::Gather, {range_f32({2, 3}), i64({}, {1})});
  EXPECT_EQ(s.dims(), Ints{3});
  expect_near(s, {3, 4, 5});
  auto e = run1(Op::GatherElements, {range_f32({2, 2}), i64({2, 2}, {0, 0, 1, -2})}, attrs({{"axis", int64_t{1}}}));
  expect_near(e, {0, 0, 3, 2});
  EXPECT_FALSE(run_op(Op::Gather, {f32({3}, {1, 2, 3}), i64({1}, {3})}));
}

// Out-of-range indices are the node's error, with the index, never a read
// past the data; constant indices (what folding runs) included.
TEST(Layout, GatherIndicesOutOfRangeAreAnErrorNamingTheNode) {
  auto message = [](ir::Op op, ir::Tensor index) {
    ir::Graph g;
    ir::Node node;
    node.op = op;
    node.name = "pick";
    node.inputs = {g.add_constant("data", std::make_shared<const ir::Tensor>(f32({4}, {1, 2, 3, 4}))),
                   g.add_constant("index", std::make_shared<const ir::Tensor>(std::move(index)))};
    ir::NodeId n = g.add_node(std::move(node), {"y"}, {});
    g.set_outputs(g.node(n).outputs);
    (void)g.infer_shapes();
    auto r = run(g, {});
    return r ? std::string("(no error)") : r.error().str();
  };
  for (ir::Op op : {Op::Gather, Op::GatherElements}) {
    EXPECT_EQ(message(op, i64({1}, {4})), "node 'pick': index 4 is out of range for axis 0 of size 4");
    EXPECT_EQ(message(op, i64({2}, {0, -5})), "node 'pick': index -5 is out of range for axis 0 of size 4");
    EXPECT_EQ(message(op, i32({1}, {1 << 30})), "node 'pick': index 1073741824 is out of range for axis 0 of size 4");
    EXPECT_EQ(message(op, i64({1}, {-4})), "(no error)");
  }
}

TEST(Layout, ExpandAndTile) {
  auto e = run1(Op::Expand, {f32({3, 1}, {1, 2, 3}), i64({3}, {2, 1, 2})});
  EXPECT_EQ(e.dims(), (Ints{2, 3, 2}));
  expect_near(e, {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
  expect_near(run1(Op::Tile, {f32({1, 2}, {1, 2}), i64({2}, {2, 2})}), {1, 2, 1, 2, 1, 2, 1, 2});
}

TEST(Layout, PadModes) {
  auto x = f32({3}, {1, 2, 3});
  auto pads = i64({2}, {2, 2});
  expect_near(run1(Op::Pad, {x, pads, f32({}, {9})}), {9, 9, 1, 2, 3, 9, 9});
  expect_near(run1(Op::Pad, {x, pads}, attrs({{"mode", std::string("reflect")}})), {3, 2, 1, 2, 3, 2, 1});
  expect_near(run1(Op::Pad, {x, pads}, attrs({{"mode", std::string("edge")}})), {1, 1, 1, 2, 3, 3, 3});
  expect_near(run1(Op::Pad, {x, i64({2}, {-1, 1})}), {2, 3, 0});
  expect_near(
      run1(Op::Pad, {f32({2, 2}, {1, 2, 3, 4}), i64({4}, {0, 1, 0, 0})}, attrs({{"mode", std::string("edge")}})),
      {1, 1, 2, 3, 3, 4});
}

TEST(Layout, DepthToSpaceModesAndSpaceToDepth) {
  auto x = range_f32({1, 8, 1, 1});
  auto blocks = attrs({{"blocksize", int64_t{2}}});
  auto dcr = run1(Op::DepthToSpace, {x}, blocks);
  EXPECT_EQ(dcr.dims(), (Ints{1, 2, 2, 2}));
  expect_near(dcr, {0, 2, 4, 6, 1, 3, 5, 7});
  auto crd_attrs = blocks;
  crd_attrs.set("mode", std::string("CRD"));
  expect_near(run1(Op::DepthToSpace, {x}, crd_attrs), {0, 1, 2, 3, 4, 5, 6, 7});
  auto s = run1(Op::SpaceToDepth, {range_f32({1, 1, 2, 2})}, blocks);
  EXPECT_EQ(s.dims(), (Ints{1, 4, 1, 1}));
  expect_near(s, {0, 1, 2, 3});
}

TEST(Layout, Trilu) {
  auto ones = f32({3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1});
  expect_near(run1(Op::Trilu, {ones, i64({}, {1})}), {0, 1, 1, 0, 0, 1, 0, 0, 0});
  expect_near(run1(Op::Trilu, {ones, i64({}, {-1})}, attrs({{"upper", int64_t{0}}})), {0, 0, 0, 1, 0, 0, 1, 1, 0});
  expect_near(run1(Op::Trilu, {ones}), {1, 1, 1, 0, 1, 1, 0, 0, 1});
}

TEST(ShapeOps, ShapeSizeRangeConstantOfShape) {
  auto x = range_f32({2, 3, 4, 5});
  EXPECT_EQ(ints(run1(Op::Shape, {x}, attrs({{"start", int64_t{1}}, {"end", int64_t{-1}}}))), (Ints{3, 4}));
  EXPECT_EQ(ints(run1(Op::Shape, {x}, attrs({{"start", int64_t{-10}}}))), (Ints{2, 3, 4, 5}));
  auto n = run1(Op::Size, {x});
  EXPECT_EQ(n.dims(), Ints{});
  EXPECT_EQ(ints(n), Ints{120});
  expect_near(run1(Op::Range, {f32({}, {1}), f32({}, {2}), f32({}, {0.3f})}), {1, 1.3, 1.6, 1.9});
  EXPECT_EQ(ints(run1(Op::Range, {i32({}, {10}), i32({}, {4}), i32({}, {-3})})), (Ints{10, 7}));
  EXPECT_EQ(run1(Op::Range, {i64({}, {5}), i64({}, {1}), i64({}, {1})}).numel(), 0);
  auto seven = std::make_shared<const ir::Tensor>(i64({1}, {7}));
  auto c = run1(Op::ConstantOfShape, {i64({2}, {2, 1})}, attrs({{"value", seven}}));
  EXPECT_EQ(c.dtype(), ir::DType::i64);
  EXPECT_EQ(c.dims(), (Ints{2, 1}));
  EXPECT_EQ(ints(c), (Ints{7, 7}));
  auto z = run1(Op::ConstantOfShape, {i64({0}, {})});
  EXPECT_EQ(z.dims(), Ints{});
  EXPECT_EQ(z.dtype(), ir::DType::f32);
}

TEST(ShapeOps, ConstantAttributes) {
  EXPECT_EQ(ints(run1(Op::Constant, {}, attrs({{"value_ints", Ints{1, 2}}}))), (Ints{1, 2}));
  expect_near(run1(Op::Constant, {}, attrs({{"value_float", 2.5f}})), {2.5});
}

}  // namespace
}  // namespace refinery::runtime::testing
