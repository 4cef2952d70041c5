// MatMul, Gemm, convolution, pooling and normalisation against hand-computed values.
#include <cmath>

#include "tests/runtime/helpers.h"

namespace refinery::runtime::testing {
namespace {

using ir::Op;
using Ints = std::vector<int64_t>;

ir::Tensor iota(std::vector<int64_t> dims, float first = 1) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(first + static_cast<float>(i));
  return f32(std::move(dims), v);
}

TEST(Linear, MatMulMatrixAndVector) {
  auto a = iota({2, 3}), b = iota({3, 2});
  expect_near(run1(Op::MatMul, {a, b}), {22, 28, 49, 64});
  auto v = run1(Op::MatMul, {a, f32({3}, {1, 0, -1})});
  EXPECT_EQ(v.dims(), Ints{2});
  expect_near(v, {-2, -2});
}

TEST(Linear, GemmTransposesScalesAndBroadcastsC) {
  auto a = iota({3, 2});  // A^T is [[1,3,5],[2,4,6]]
  auto b = iota({2, 3});  // B^T is [[1,4],[2,5],[3,6]]
  auto y = run1(Op::Gemm, {a, b, f32({1, 2}, {1, 2})},
                attrs({{"transA", int64_t{1}}, {"transB", int64_t{1}}, {"alpha", 0.5f}, {"beta", 2.0f}}));
  // A^T B^T = [[22, 49], [28, 64]]
  expect_near(y, {11 + 2, 24.5 + 4, 14 + 2, 32 + 4});
}

TEST(Conv, ValidAndSamePadding) {
  auto x = iota({1, 1, 3, 3}), w = f32({1, 1, 2, 2}, {1, 1, 1, 1});
  expect_near(run1(Op::Conv, {x, w}), {12, 16, 24, 28});
  expect_near(run1(Op::Conv, {x, w}, attrs({{"auto_pad", std::string("SAME_UPPER")}})),
              {12, 16, 9, 24, 28, 15, 15, 17, 9});
  expect_near(run1(Op::Conv, {x, w}, attrs({{"auto_pad", std::string("SAME_LOWER")}})),
              {1, 3, 5, 5, 12, 16, 11, 24, 28});
  // Asymmetric explicit pads (bottom and right only) equal SAME_UPPER here.
  expect_near(run1(Op::Conv, {x, w}, attrs({{"pads", Ints{0, 0, 1, 1}}})), {12, 16, 9, 24, 28, 15, 15, 17, 9});
}

TEST(Conv, StridesGroupsAndBias) {
  auto x = iota({1, 2, 2, 2});
  auto w = f32({2, 1, 1, 1}, {1, 10});  // depthwise: channel c scaled by w[c]
  auto y = run1(Op::Conv, {x, w, f32({2}, {0.5f, -1})}, attrs({{"group", int64_t{2}}, {"strides", Ints{2, 2}}}));
  EXPECT_EQ(y.dims(), (Ints{1, 2, 1, 1}));
  expect_near(y, {1.5, 49});
}

TEST(ConvTranspose, PadsOutputShapeAndBias) {
  auto x = f32({1, 1, 2, 2}, {1, 2, 3, 4}), w = f32({1, 1, 2, 2}, {1, 1, 1, 1});
  expect_near(run1(Op::ConvTranspose, {x, w}), {1, 3, 2, 4, 10, 6, 3, 7, 4});
  expect_near(run1(Op::ConvTranspose, {x, w}, attrs({{"pads", Ints{1, 1, 0, 0}}})), {10, 6, 7, 4});
  // A larger output_shape pads with zeros at the end; the bias reaches them too.
  auto y = run1(Op::ConvTranspose, {x, w, f32({1}, {1})}, attrs({{"output_shape", Ints{4, 4}}}));
  EXPECT_EQ(y.dims(), (Ints{1, 1, 4, 4}));
  expect_near(y, {2, 4, 3, 1, 5, 11, 7, 1, 4, 8, 5, 1, 1, 1, 1, 1});
  auto s = run1(Op::ConvTranspose, {x, w}, attrs({{"strides", Ints{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}));
  EXPECT_EQ(s.dims(), (Ints{1, 1, 4, 4}));
  expect_near(s, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
}

TEST(MaxPool, ValuesAndFlattenedIndices) {
  auto x = iota({1, 1, 4, 4});
  auto r = run_op(Op::MaxPool, {x}, attrs({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}), 2);
  ASSERT_TRUE(r) << r.error().str();
  expect_near((*r)[0], {6, 8, 14, 16});
  EXPECT_EQ((*r)[1].dtype(), ir::DType::i64);
  EXPECT_EQ(ints((*r)[1]), (Ints{5, 7, 13, 15}));
  auto col = run_op(Op::MaxPool, {x},
                    attrs({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"storage_order", int64_t{1}}}), 2);
  ASSERT_TRUE(col);
  EXPECT_EQ(ints((*col)[1]), (Ints{5, 13, 7, 15}));  // column-major: h + w * H
}

TEST(MaxPool, IndicesCountBatchAndChannel) {
  auto x = f32({1, 2, 2, 2}, {1, 2, 3, 4, 8, 7, 6, 5});
  auto r = run_op(Op::MaxPool, {x}, attrs({{"kernel_shape", Ints{2, 2}}}), 2);
  ASSERT_TRUE(r);
  EXPECT_EQ(ints((*r)[1]), (Ints{3, 4}));
}

TEST(MaxPool, CeilModeDilationsAndAsymmetricPads) {
  auto x = iota({1, 1, 4, 4});
  auto ceil =
      run1(Op::MaxPool, {x}, attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}}));
  EXPECT_EQ(ceil.dims(), (Ints{1, 1, 2, 2}));
  expect_near(ceil, {11, 12, 15, 16});
  auto floor = run1(Op::MaxPool, {x}, attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}}));
  expect_near(floor, {11});
  expect_near(run1(Op::MaxPool, {x}, attrs({{"kernel_shape", Ints{2, 2}}, {"dilations", Ints{2, 2}}})),
              {11, 12, 15, 16});
  auto small = iota({1, 1, 3, 3});
  expect_near(run1(Op::MaxPool, {small}, attrs({{"kernel_shape", Ints{2, 2}}, {"pads", Ints{0, 0, 1, 1}}})),
              {5, 6, 6, 8, 9, 9, 8, 9, 9});
  // a ceil-mode window larger than the input (by less than a stride): one output
  auto over = run1(Op::MaxPool, {iota({1, 1, 5, 5})},
                   attrs({{"kernel_shape", Ints{6, 6}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}}));
  EXPECT_EQ(over.dims(), (Ints{1, 1, 1, 1}));
  expect_near(over, {25});
  auto bytes = run1(Op::MaxPool, {u8({1, 1, 1, 3}, {7, 255, 3})}, attrs({{"kernel_shape", Ints{1, 2}}}));
  EXPECT_EQ(bytes.dtype(), ir::DType::u8);
  EXPECT_EQ(ints(bytes), (Ints{255, 255}));
}

TEST(AveragePool, CountIncludePadAndCeilMode) {
  auto x = iota({1, 1, 3, 3});
  auto a = attrs({{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}});
  auto without = run1(Op::AveragePool, {x}, a);
  EXPECT_EQ(without.dims(), (Ints{1, 1, 3, 3}));
  EXPECT_NEAR(values(without)[0], 3.0, 1e-6);  // (1+2+4+5)/4
  EXPECT_NEAR(values(without)[4], 5.0, 1e-6);
  a.set("count_include_pad", int64_t{1});
  EXPECT_NEAR(values(run1(Op::AveragePool, {x}, a))[0], 12.0 / 9.0, 1e-6);
  // ONNX's averagepool_2d_ceil: the overhang of the last window is not counted.
  auto c = run1(Op::AveragePool, {iota({1, 1, 4, 4})},
                attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}}));
  expect_near(c, {6, 7.5, 12, 13.5});
}

TEST(GlobalPool, AverageAndMax) {
  auto x = iota({1, 2, 2, 1});
  auto avg = run1(Op::GlobalAveragePool, {x});
  EXPECT_EQ(avg.dims(), (Ints{1, 2, 1, 1}));
  expect_near(avg, {1.5, 3.5});
  expect_near(run1(Op::GlobalMaxPool, {x}), {2, 4});
}

TEST(Norm, BatchNormInference) {
  auto y = run1(Op::BatchNormalization,
                {f32({1, 2, 1, 1}, {1, 2}), f32({2}, {1, 2}), f32({2}, {0, 1}), f32({2}, {0, 1}), f32({2}, {1, 4})},
                attrs({{"epsilon", 0.0f}}));
  expect_near(y, {1, 2});
}

TEST(Norm, LayerNormAndItsStatistics) {
  auto r = run_op(Op::LayerNormalization, {f32({1, 3}, {1, 2, 3}), f32({3}, {1, 1, 2}), f32({3}, {0, 1, 0})},
                  attrs({{"epsilon", 0.0f}}), 3);
  ASSERT_TRUE(r) << r.error().str();
  double s = std::sqrt(1.5);  // 1 / sqrt(var = 2/3)
  expect_near((*r)[0], {-s, 1, 2 * s});
  expect_near((*r)[1], {2});
  expect_near((*r)[2], {s});
  EXPECT_EQ((*r)[1].dims(), (Ints{1, 1}));
}

TEST(Norm, InstanceNormAndLrn) {
  expect_near(run1(Op::InstanceNormalization, {f32({1, 1, 2}, {1, 3}), f32({1}, {1}), f32({1}, {0})},
                   attrs({{"epsilon", 0.0f}})),
              {-1, 1});
  auto y = run1(Op::LRN, {f32({1, 3, 1, 1}, {1, 1, 1})},
                attrs({{"size", int64_t{3}}, {"alpha", 3.0f}, {"beta", 1.0f}, {"bias", 1.0f}}));
  expect_near(y, {1.0 / 3, 1.0 / 4, 1.0 / 3});
}

TEST(Norm, SoftmaxFamilyUsesOneAxis) {
  expect_near(run1(Op::Softmax, {f32({1, 2}, {0, std::log(2.0f)})}), {1.0 / 3, 2.0 / 3});
  // Opset 13: only the given axis is normalised (axis 0 here: columns).
  expect_near(run1(Op::Softmax, {f32({2, 2}, {0, 0, 0, 0})}, attrs({{"axis", int64_t{0}}})), {0.5, 0.5, 0.5, 0.5});
  expect_near(run1(Op::LogSoftmax, {f32({2}, {0, 0})}), {-std::log(2.0), -std::log(2.0)});
  expect_near(run1(Op::Hardmax, {f32({2, 3}, {1, 3, 3, 5, 0, 0})}), {0, 1, 0, 1, 0, 0});
}

TEST(Norm, DropoutIsIdentityInInference) {
  auto r = run_op(Op::Dropout, {f32({3}, {1, 2, 3}), f32({}, {0.5f})}, {}, 2);
  ASSERT_TRUE(r);
  expect_near((*r)[0], {1, 2, 3});
  EXPECT_EQ((*r)[1].dtype(), ir::DType::boolean);
  EXPECT_EQ(ints((*r)[1]), (Ints{1, 1, 1}));
}

}  // namespace
}  // namespace refinery::runtime::testing
