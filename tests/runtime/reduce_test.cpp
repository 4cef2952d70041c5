// Reductions, arg-reductions, CumSum and TopK against hand-computed values.
#include <cmath>
#include <limits>

#include "tests/runtime/helpers.h"

namespace refinery::runtime::testing {
namespace {

using ir::Op;
using Ints = std::vector<int64_t>;

TEST(Reduce, SumTakesAxesAsInput) {
  auto x = f32({2, 2}, {1, 2, 3, 4});
  auto y = run1(Op::ReduceSum, {x, i64({1}, {1})}, attrs({{"keepdims", int64_t{0}}}));
  EXPECT_EQ(y.dims(), Ints{2});
  expect_near(y, {3, 7});
  auto all = run1(Op::ReduceSum, {x});
  EXPECT_EQ(all.dims(), (Ints{1, 1}));
  expect_near(all, {10});
  auto noop = run1(Op::ReduceSum, {x, i64({0}, {})}, attrs({{"noop_with_empty_axes", int64_t{1}}}));
  expect_near(noop, {1, 2, 3, 4});
  auto ints32 = run1(Op::ReduceSum, {i32({3}, {1, 2, 3})}, attrs({{"keepdims", int64_t{0}}}));
  EXPECT_EQ(ints32.dtype(), ir::DType::i32);
  EXPECT_EQ(ints(ints32), Ints{6});
}

TEST(Reduce, OthersTakeAxesAsAttribute) {
  auto x = f32({2, 2}, {1, 2, 3, 4});
  expect_near(run1(Op::ReduceMean, {x}, attrs({{"axes", Ints{0}}})), {2, 3});
  expect_near(run1(Op::ReduceMax, {x}, attrs({{"axes", Ints{-1}}})), {2, 4});
  expect_near(run1(Op::ReduceMin, {x}), {1});
  expect_near(run1(Op::ReduceProd, {x}), {24});
  expect_near(run1(Op::ReduceProd, {x}, attrs({{"axes", Ints{1}}})), {2, 12});
  expect_near(run1(Op::ReduceL1, {f32({2}, {-3, 4})}), {7});
  expect_near(run1(Op::ReduceL2, {f32({2}, {-3, 4})}), {5});
  expect_near(run1(Op::ReduceSumSquare, {f32({2}, {-3, 4})}), {25});
  expect_near(run1(Op::ReduceLogSum, {f32({2}, {1, 2})}), {std::log(3.0)});
  expect_near(run1(Op::ReduceLogSumExp, {f32({2}, {0, 0})}), {std::log(2.0)});
  auto m = run1(Op::ReduceMean, {i32({2}, {1, 2})});
  EXPECT_EQ(m.dtype(), ir::DType::i32);
  EXPECT_EQ(ints(m), Ints{1});  // 1.5 truncated, as numpy's astype does
}

// ONNX reduces an empty set of values to the operation's identity
// (docs/runtime.md): 0, 1, -inf, +inf, NaN for the mean, -inf for the logs.
TEST(Reduce, EmptyAxisGivesTheEmptySetsValue) {
  auto x = f32({0, 2}, {});
  auto axes0 = attrs({{"axes", Ints{0}}});
  auto one_value = [&](Op op) {
    auto y = run1(op, {x}, axes0);
    EXPECT_EQ(y.dims(), (Ints{1, 2})) << ir::op_name(op);
    return y.as_double(0);
  };
  EXPECT_EQ(one_value(Op::ReduceMax), -INFINITY);
  EXPECT_EQ(one_value(Op::ReduceMin), INFINITY);
  EXPECT_EQ(one_value(Op::ReduceProd), 1);
  EXPECT_EQ(one_value(Op::ReduceL1), 0);
  EXPECT_EQ(one_value(Op::ReduceL2), 0);
  EXPECT_EQ(one_value(Op::ReduceSumSquare), 0);
  EXPECT_EQ(one_value(Op::ReduceLogSum), -INFINITY);
  EXPECT_EQ(one_value(Op::ReduceLogSumExp), -INFINITY);
  EXPECT_TRUE(std::isnan(one_value(Op::ReduceMean)));
  expect_near(run1(Op::ReduceSum, {x, i64({1}, {0})}), {0, 0});
  // keepdims 0, and a kept dim of 0: an empty result
  EXPECT_EQ(run1(Op::ReduceMax, {x}, attrs({{"axes", Ints{0}}, {"keepdims", int64_t{0}}})).dims(), Ints{2});
  EXPECT_EQ(run1(Op::ReduceMin, {x}, attrs({{"axes", Ints{1}}})).dims(), (Ints{0, 1}));
  // integers: the type's lowest and highest values
  auto n = run1(Op::ReduceMax, {i32({0}, {})});
  EXPECT_EQ(n.dtype(), ir::DType::i32);
  EXPECT_EQ(ints(n), Ints{std::numeric_limits<int32_t>::lowest()});
  EXPECT_EQ(ints(run1(Op::ReduceMin, {i32({0}, {})})), Ints{std::numeric_limits<int32_t>::max()});
}

TEST(ArgReduce, FirstOrLastIndex) {
  auto x = f32({3}, {1, 3, 3});
  auto first = run1(Op::ArgMax, {x});
  EXPECT_EQ(first.dtype(), ir::DType::i64);
  EXPECT_EQ(first.dims(), Ints{1});
  EXPECT_EQ(ints(first), Ints{1});
  EXPECT_EQ(ints(run1(Op::ArgMax, {x}, attrs({{"select_last_index", int64_t{1}}}))), Ints{2});
  auto y = f32({2, 3}, {2, 1, 1, 0, 5, 0});
  auto mins =
      run1(Op::ArgMin, {y}, attrs({{"axis", int64_t{1}}, {"keepdims", int64_t{0}}, {"select_last_index", int64_t{1}}}));
  EXPECT_EQ(mins.dims(), Ints{2});
  EXPECT_EQ(ints(mins), (Ints{2, 2}));
}

TEST(CumSum, ExclusiveAndReverse) {
  auto x = f32({3}, {1, 2, 3});
  auto axis = i64({}, {0});
  expect_near(run1(Op::CumSum, {x, axis}), {1, 3, 6});
  expect_near(run1(Op::CumSum, {x, axis}, attrs({{"exclusive", int64_t{1}}})), {0, 1, 3});
  expect_near(run1(Op::CumSum, {x, axis}, attrs({{"reverse", int64_t{1}}})), {6, 5, 3});
  expect_near(run1(Op::CumSum, {x, axis}, attrs({{"exclusive", int64_t{1}}, {"reverse", int64_t{1}}})), {5, 3, 0});
  auto m = run1(Op::CumSum, {i32({2, 2}, {1, 2, 3, 4}), i32({}, {-1})});
  EXPECT_EQ(m.dtype(), ir::DType::i32);
  EXPECT_EQ(ints(m), (Ints{1, 3, 3, 7}));
}

TEST(TopK, TiesKeepTheLowerIndexFirst) {
  auto x = f32({5}, {1, 3, 3, 2, 3});
  auto r = run_op(Op::TopK, {x, i64({1}, {3})}, {}, 2);
  ASSERT_TRUE(r) << r.error().str();
  expect_near((*r)[0], {3, 3, 3});
  EXPECT_EQ(ints((*r)[1]), (Ints{1, 2, 4}));
  auto s = run_op(Op::TopK, {x, i64({1}, {2})}, attrs({{"largest", int64_t{0}}}), 2);
  ASSERT_TRUE(s);
  expect_near((*s)[0], {1, 2});
  EXPECT_EQ(ints((*s)[1]), (Ints{0, 3}));
}

}  // namespace
}  // namespace refinery::runtime::testing
