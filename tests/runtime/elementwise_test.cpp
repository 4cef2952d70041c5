// Elementwise kernels against hand-computed values.
#include <cmath>
#include <limits>

#include "tests/runtime/helpers.h"

namespace refinery::runtime::testing {
namespace {

using ir::Op;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(Elementwise, AddBroadcasts) {
  auto y = run1(Op::Add, {f32({2, 1}, {1, 2}), f32({3}, {10, 20, 30})});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 3}));
  expect_near(y, {11, 21, 31, 12, 22, 32});
}

TEST(Elementwise, IntegerDivTruncatesTowardZero) {
  auto y = run1(Op::Div, {i32({4}, {7, -7, 7, -7}), i32({4}, {2, 2, -2, -2})});
  EXPECT_EQ(y.dtype(), ir::DType::i32);
  EXPECT_EQ(ints(y), (std::vector<int64_t>{3, -3, -3, 3}));
}

TEST(Elementwise, ModFollowsDivisorSignUnlessFmod) {
  auto a = i64({4}, {-4, 7, 5, -7}), b = i64({4}, {3, -3, 8, 3});
  EXPECT_EQ(ints(run1(Op::Mod, {a, b})), (std::vector<int64_t>{2, -2, 5, 2}));
  EXPECT_EQ(ints(run1(Op::Mod, {a, b}, attrs({{"fmod", int64_t{1}}}))), (std::vector<int64_t>{-1, 1, 5, -1}));
  expect_near(run1(Op::Mod, {f32({2}, {-4.5f, 7.5f}), f32({2}, {2, -2})}, attrs({{"fmod", int64_t{1}}})), {-0.5, 1.5});
}

TEST(Elementwise, RoundHalfToEven) {
  expect_near(run1(Op::Round, {f32({7}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, 2.6f})}), {0, 2, 2, 0, -2, 2, 3});
}

TEST(Elementwise, PowKeepsBaseType) {
  auto y = run1(Op::Pow, {i32({3}, {1, 2, 3}), f32({3}, {4, 5, 6})});
  EXPECT_EQ(y.dtype(), ir::DType::i32);
  EXPECT_EQ(ints(y), (std::vector<int64_t>{1, 32, 729}));
  expect_near(run1(Op::Pow, {f32({2}, {2, 4}), i64({1}, {2})}), {4, 16});
}

TEST(Elementwise, CastFollowsOnnxRules) {
  auto x = f32({4}, {1.9f, -1.9f, 0.5f, -0.5f});
  auto y = run1(Op::Cast, {x}, attrs({{"to", int64_t{6}}}));  // INT32
  EXPECT_EQ(y.dtype(), ir::DType::i32);
  EXPECT_EQ(ints(y), (std::vector<int64_t>{1, -1, 0, 0}));
  auto b = run1(Op::Cast, {f32({4}, {0.0f, -0.0f, 2.0f, std::nanf("")})}, attrs({{"to", int64_t{9}}}));  // BOOL
  EXPECT_EQ(b.dtype(), ir::DType::boolean);
  EXPECT_EQ(ints(b), (std::vector<int64_t>{0, 0, 1, 1}));
  auto w = run1(Op::Cast, {i64({2}, {300, -1})}, attrs({{"to", int64_t{2}}}));  // UINT8 wraps
  EXPECT_EQ(ints(w), (std::vector<int64_t>{44, 255}));
  auto h = run1(Op::Cast, {f32({1}, {1.0f / 3.0f})}, attrs({{"to", int64_t{10}}}));  // FLOAT16
  EXPECT_EQ(h.dtype(), ir::DType::f16);
  expect_near(h, {0.333251953125});  // nearest half to 1/3
}

TEST(Elementwise, CastLikeTakesTheSecondInputsType) {
  auto y = run1(Op::CastLike, {f32({2}, {2.7f, -2.7f}), i64({1}, {0})});
  EXPECT_EQ(y.dtype(), ir::DType::i64);
  EXPECT_EQ(ints(y), (std::vector<int64_t>{2, -2}));
}

TEST(Elementwise, UnsignedWiderThanAtenRoundTrips) {
  auto a = ir::Tensor::from_values<uint32_t>(ir::DType::u32, {2}, {4000000000u, 7u});
  auto b = ir::Tensor::from_values<uint32_t>(ir::DType::u32, {2}, {1u, 3u});
  auto y = run1(Op::Add, {a, b});
  EXPECT_EQ(y.dtype(), ir::DType::u32);
  EXPECT_EQ(ints(y), (std::vector<int64_t>{4000000001, 10}));
  auto c = run1(Op::Cast, {i64({1}, {-1})}, attrs({{"to", int64_t{4}}}));  // UINT16
  EXPECT_EQ(c.dtype(), ir::DType::u16);
  EXPECT_EQ(ints(c), (std::vector<int64_t>{65535}));
}

TEST(Elementwise, ClipWithAbsentBounds) {
  auto x = f32({4}, {-2, -0.5f, 0.5f, 2});
  expect_near(run1(Op::Clip, {x, f32({}, {-1}), f32({}, {1})}), {-1, -0.5, 0.5, 1});
  expect_near(run1(Op::Clip, {x, std::nullopt, f32({}, {0})}), {-2, -0.5, 0, 0});
  expect_near(run1(Op::Clip, {x, f32({}, {0})}), {0, 0, 0.5, 2});
  expect_near(run1(Op::Clip, {x}), {-2, -0.5, 0.5, 2});
  EXPECT_EQ(ints(run1(Op::Clip, {i32({3}, {-5, 3, 9}), i32({}, {0}), i32({}, {5})})), (std::vector<int64_t>{0, 3, 5}));
}

TEST(Elementwise, Activations) {
  auto x = f32({3}, {-1, 0, 2});
  expect_near(run1(Op::Relu, {x}), {0, 0, 2});
  expect_near(run1(Op::LeakyRelu, {x}, attrs({{"alpha", 0.1f}})), {-0.1, 0, 2});
  expect_near(run1(Op::Elu, {x}), {std::exp(-1.0) - 1, 0, 2});
  expect_near(run1(Op::ThresholdedRelu, {x}, attrs({{"alpha", 1.5f}})), {0, 0, 2});
  expect_near(run1(Op::HardSigmoid, {f32({3}, {-3, 0, 3})}), {0, 0.5, 1});
  expect_near(run1(Op::HardSwish, {f32({3}, {-3, 0, 3})}), {0, 0, 3});
  auto gelu = [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); };
  expect_near(run1(Op::Gelu, {x}), {gelu(-1), 0, gelu(2)});
  auto gelu_tanh = [](double v) {
    return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
  };
  expect_near(run1(Op::Gelu, {x}, attrs({{"approximate", std::string("tanh")}})), {gelu_tanh(-1), 0, gelu_tanh(2)});
  EXPECT_NE(gelu(2), gelu_tanh(2));
  expect_near(run1(Op::Softsign, {x}), {-0.5, 0, 2.0 / 3});
  expect_near(run1(Op::Selu, {x}, attrs({{"alpha", 2.0f}, {"gamma", 3.0f}})), {3 * (2 * std::exp(-1.0) - 2), 0, 6});
  expect_near(run1(Op::Celu, {x}, attrs({{"alpha", 2.0f}})), {2 * (std::exp(-0.5) - 1), 0, 2});
  expect_near(run1(Op::PRelu, {f32({1, 2, 1}, {-1, -1}), f32({2, 1}, {0.5f, 2})}), {-0.5, -2});
}

// In f64 (validation's wide run) Gelu is its definition with the f32
// constants exporters write and the prover uses (x / 1.4142135), to the
// last bits: a graph that writes GELU out agrees with one Gelu in f64.
TEST(Elementwise, GeluInF64HasTheF32Constants) {
  const std::vector<double> v = {-3.5, -1, 0.25, 2, 5};
  auto f32c = [](double c) { return static_cast<double>(static_cast<float>(c)); };
  auto y = run1(Op::Gelu, {f64({5}, v)});
  auto t = run1(Op::Gelu, {f64({5}, v)}, attrs({{"approximate", std::string("tanh")}}));
  ASSERT_EQ(y.dtype(), ir::DType::f64);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double x = v[i];
    const double erf_form = x * 0.5 * (1 + std::erf(x / f32c(std::sqrt(2.0))));
    const double tanh_form = x * 0.5 * (1 + std::tanh(f32c(std::sqrt(2 / M_PI)) * (x + f32c(0.044715) * (x * x * x))));
    EXPECT_NEAR(y.as_double(i), erf_form, 1e-15 * std::abs(erf_form)) << x;
    EXPECT_NEAR(t.as_double(i), tanh_form, 1e-15 * std::abs(tanh_form)) << x;
  }
  // The exact constants give another function, past f64 rounding.
  EXPECT_GT(std::abs(y.as_double(3) - 2 * 0.5 * (1 + std::erf(2 / std::sqrt(2.0)))), 1e-10);
}

TEST(Elementwise, NaryAndComparisons) {
  auto a = f32({2}, {1, 5}), b = f32({2}, {4, 2}), c = f32({1}, {3});
  expect_near(run1(Op::Sum, {a, b, c}), {8, 10});
  expect_near(run1(Op::Max, {a, b, c}), {4, 5});
  expect_near(run1(Op::Min, {a, b, c}), {1, 2});
  expect_near(run1(Op::Mean, {a, b, c}), {8.0 / 3, 10.0 / 3});
  EXPECT_EQ(ints(run1(Op::Less, {a, b})), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(ints(run1(Op::GreaterOrEqual, {a, c})), (std::vector<int64_t>{0, 1}));
  auto t = boolean({4}, {true, true, false, false}), f = boolean({4}, {true, false, true, false});
  EXPECT_EQ(ints(run1(Op::Xor, {t, f})), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(ints(run1(Op::And, {t, f})), (std::vector<int64_t>{1, 0, 0, 0}));
  expect_near(run1(Op::Where, {boolean({2}, {true, false}), a, b}), {1, 2});
}

TEST(Elementwise, FloatPredicates) {
  auto x = f32({4}, {kInf, -kInf, 1, std::nanf("")});
  EXPECT_EQ(ints(run1(Op::IsInf, {x})), (std::vector<int64_t>{1, 1, 0, 0}));
  EXPECT_EQ(ints(run1(Op::IsInf, {x}, attrs({{"detect_negative", int64_t{0}}}))), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(ints(run1(Op::IsNaN, {x})), (std::vector<int64_t>{0, 0, 0, 1}));
  expect_near(run1(Op::Sqrt, {f32({2}, {4, -1})}), {2, kNaN});
}

TEST(Elementwise, HalfPrecisionRoundsOnce) {
  auto x = ir::Tensor::from_values<uint16_t>(ir::DType::f16, {2}, {ir::float_to_half(0), ir::float_to_half(1)});
  auto y = run1(Op::Exp, {x});
  EXPECT_EQ(y.dtype(), ir::DType::f16);
  expect_near(y, {1, 2.71875});  // e rounded to the nearest half
  auto z = ir::Tensor::from_values<uint16_t>(ir::DType::bf16, {1}, {ir::float_to_bf16(2)});
  expect_near(run1(Op::Mul, {z, z}), {4});
}

}  // namespace
}  // namespace refinery::runtime::testing
