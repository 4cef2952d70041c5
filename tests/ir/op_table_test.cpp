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
    EXPECT_EQ(op_from_onnx("", info.onnx_name), op) << info.onnx_name;
    EXPECT_EQ(op_from_onnx("ai.onnx", info.onnx_name), op);
  }
  EXPECT_EQ(op_from_onnx("com.microsoft", "Relu"), std::nullopt);
  EXPECT_EQ(op_from_onnx("", "NoSuchOp"), std::nullopt);
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
