#include <gtest/gtest.h>

#include "ir/dtype.h"
#include "ir/op.h"

namespace refinery::ir {
namespace {

TEST(OpTable, EveryListedOpHasOneEntry) { EXPECT_TRUE(op_table_problems().empty()); }

TEST(OpTable, NamesMapBothWays) {
  for (int i = 0; i + 1 < kNumOps; ++i) {
    Op op = static_cast<Op>(i);
    const OpInfo& info = op_info(op);
    EXPECT_EQ(op_from_name(info.name), op) << info.name;
    EXPECT_EQ(op_from_onnx(info.onnx_domain, info.onnx_name), op) << info.onnx_name;
    if (info.onnx_domain.empty()) {
      EXPECT_EQ(op_from_onnx("ai.onnx", info.onnx_name), op);
    }
  }
  EXPECT_EQ(op_from_onnx("com.microsoft", "Relu"), std::nullopt);
  // A contrib op is known in its own domain only: "Attention" in the default domain is someone else's op.
  EXPECT_EQ(op_from_onnx("com.microsoft", "Attention"), Op::MsAttention);
  EXPECT_EQ(op_from_onnx("", "Attention"), std::nullopt);
  EXPECT_EQ(op_info(Op::MsAttention).onnx_domain, "com.microsoft");
  EXPECT_EQ(op_from_onnx("", "NoSuchOp"), std::nullopt);
}

TEST(OpTable, AbsentAttributesReadAsTheirDefaults) {
  Attributes none;
  EXPECT_EQ(OpAttrs(Op::Gemm, none).get_float("alpha"), 1.0f);
  EXPECT_EQ(OpAttrs(Op::LeakyRelu, none).get_float("alpha"), 0.01f);
  EXPECT_EQ(OpAttrs(Op::Conv, none).get_string("auto_pad"), "NOTSET");
  EXPECT_EQ(OpAttrs(Op::Softmax, none).get_int("axis"), -1);
  EXPECT_EQ(OpAttrs(Op::Flatten, none).get_int("axis"), 1);
  Attributes group2;
  group2.set("group", int64_t{2});
  EXPECT_EQ(OpAttrs(Op::Conv, group2).get_int("group"), 2);
}

TEST(OpTable, WindowDefaultsFollowTheSpatialRank) {
  Attributes none;
  EXPECT_EQ(OpAttrs(Op::Conv, none, 4).get_ints("strides"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(OpAttrs(Op::MaxPool, none, 5).get_ints("pads"), (std::vector<int64_t>(6, 0)));
  EXPECT_EQ(OpAttrs(Op::NirConv1d, none, 2).get_ints("dilations"), (std::vector<int64_t>{1}));  // [C, L]
  EXPECT_EQ(OpAttrs(Op::Transpose, none, 3).get_ints("perm"), (std::vector<int64_t>{2, 1, 0}));
  EXPECT_EQ(OpAttrs(Op::Shape, none, 3).get_int("end"), 3);
  EXPECT_EQ(attr_default(Op::Conv, "strides"), std::nullopt);          // the rank is needed
  EXPECT_EQ(attr_default(Op::Conv, "kernel_shape", 4), std::nullopt);  // the weight gives it
  Attributes k;
  k.set("kernel_shape", std::vector<int64_t>{2, 3});
  EXPECT_EQ(OpAttrs(Op::SumPool2d, k, 3).get_ints("strides"), (std::vector<int64_t>{2, 3}));
}

TEST(OpTable, EveryDefaultHasItsAttributesKind) {
  Attributes k;
  k.set("kernel_shape", std::vector<int64_t>{2, 2});
  for (int i = 0; i + 1 < kNumOps; ++i) {
    for (const AttrSpec& s : op_info(static_cast<Op>(i)).attrs) {
      if (auto v = attr_default(static_cast<Op>(i), s.name, 4, &k)) {
        EXPECT_EQ(attr_kind(*v), s.kind) << op_name(static_cast<Op>(i)) << " " << s.name;
      }
    }
  }
}

TEST(OpTable, IntegerInputs) {
  EXPECT_TRUE(op_info(Op::Reshape).takes_int_input(1));
  EXPECT_FALSE(op_info(Op::Reshape).takes_int_input(0));
  EXPECT_TRUE(op_info(Op::Slice).takes_int_input(4));
  EXPECT_FALSE(op_info(Op::Pad).takes_int_input(2));  // the pad value
  EXPECT_FALSE(op_info(Op::Add).takes_int_input(1));
}

TEST(DType, NamesAndOnnxCodesRoundTrip) {
  for (int i = 0; i < kNumDTypes; ++i) {
    DType t = static_cast<DType>(i);
    EXPECT_EQ(dtype_from_name(dtype_name(t)), t);
    EXPECT_EQ(dtype_from_onnx(dtype_to_onnx(t)), t);
  }
  EXPECT_EQ(dtype_size(DType::bf16), 2u);
  EXPECT_EQ(dtype_to_onnx(DType::f32), 1);
  EXPECT_EQ(dtype_to_onnx(DType::boolean), 9);
}

}  // namespace
}  // namespace refinery::ir
