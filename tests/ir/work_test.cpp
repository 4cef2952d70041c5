// The one FLOP and bytes count (ir/work.h), one line per kind of op.
#include <gtest/gtest.h>

#include "ir/stats.h"
#include "ir/text.h"
#include "ir/work.h"

namespace refinery::ir {
namespace {

// The work of the last node of a graph with these inputs and body.
Work last_node(const std::string& inputs, const std::string& body, const std::string& result) {
  auto g = parse_graph("graph @t(" + inputs + ") {\n" + body + "\n return %" + result + "\n}");
  EXPECT_TRUE(g.has_value()) << (g ? "" : g.error().str());
  if (!g) return Work{.exact = false};
  return node_work(*g, g->nodes().back());
}

TEST(Work, MatrixOpsCountMultiplyAddsAsTwo) {
  EXPECT_EQ(last_node("%a: tensor<4x8xf32>, %b: tensor<8x16xf32>", "%y = matmul(%a, %b) : tensor<4x16xf32>", "y").flops,
            2 * 4 * 16 * 8);
  // with a bias: one add per output, in the epilogue
  Work gemm = last_node("%a: tensor<8x4xf32>, %b: tensor<8x16xf32>, %c: tensor<16xf32>",
                        "%y = gemm(%a, %b, %c) {transA = 1} : tensor<4x16xf32>", "y");
  EXPECT_EQ(gemm.flops, 2 * 4 * 16 * 8 + 4 * 16);
  EXPECT_EQ(gemm.epilogue_flops, 4 * 16);
  // per output: C/group x kernel multiply-adds
  EXPECT_EQ(last_node("%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>",
                      "%y = conv(%x, %w) {group = 2, pads = [1, 1, 1, 1]} : tensor<1x6x8x8xf32>", "y")
                .flops,
            2.0 * 6 * 64 * 2 * 9);
  EXPECT_EQ(last_node("%x: tensor<1x4x4x4xf32>, %w: tensor<4x2x2x2xf32>, %b: tensor<2xf32>",
                      "%y = conv_transpose(%x, %w, %b) {strides = [2, 2]} : tensor<1x2x8x8xf32>", "y")
                .flops,
            2.0 * 64 * 2 * 4 + 128);
}

TEST(Work, ElementwiseReductionsAndMovement) {
  EXPECT_EQ(last_node("%x: tensor<2x3xf32>", "%y = exp(%x) : tensor<2x3xf32>", "y").flops, 6);
  EXPECT_EQ(last_node("%x: tensor<2x3xf32>", "%y = identity(%x) : tensor<2x3xf32>", "y").flops, 0);
  EXPECT_EQ(last_node("%x: tensor<2x3xf32>", "%y = log_softmax(%x) : tensor<2x3xf32>", "y").flops, 30);
  EXPECT_EQ(last_node("%x: tensor<2x3xf32>", "%y = reduce_max(%x) : tensor<1x1xf32>", "y").flops, 12);
  EXPECT_EQ(last_node("%x: tensor<1x1x4x4xf32>",
                      "%y = max_pool(%x) {kernel_shape = [2, 2], strides = [2, 2]} : tensor<1x1x2x2xf32>", "y")
                .flops,
            16);
  Work t = last_node("%x: tensor<2x3xf32>", "%y = transpose(%x) : tensor<3x2xf32>", "y");
  EXPECT_EQ(t.flops, 0);
  EXPECT_EQ(t.bytes_read, 24);
  EXPECT_EQ(t.bytes_written, 24);
}

TEST(Work, SymbolicDimsCountAsOneAndAreNotExact) {
  Work w = last_node("%x: tensor<\"N\"x8xf32>", "%y = relu(%x) : tensor<\"N\"x8xf32>", "y");
  EXPECT_EQ(w.flops, 8);
  EXPECT_FALSE(w.exact);
}

}  // namespace
}  // namespace refinery::ir
