// Einsum: the equation parser, the shape rule over the ONNX spec (explicit
// and implicit output, diagonals and traces, "..." broadcasting, symbolic
// dims) and its errors, and the FLOP count.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ir/einsum.h"
#include "ir/text.h"
#include "ir/work.h"

namespace refinery::ir {
namespace {

// The type einsum gives for these input types, or the error text.
std::string einsum(const std::string& equation, const std::vector<std::string>& inputs) {
  std::string params, args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    params += fmt::format("{}%x{}: tensor<{}>", i ? ", " : "", i, inputs[i]);
    args += fmt::format("{}%x{}", i ? ", " : "", i);
  }
  auto g = parse_graph(
      fmt::format("graph @t({}) {{\n  %y = einsum({}) {{equation = \"{}\"}} : tensor<*xf32>\n  return %y\n}}", params,
                  args, equation));
  if (!g) return g.error().str();
  if (auto ok = g->infer_shapes(); !ok) return ok.error().str();
  return g->value(*g->find_value("y")).type.str();
}

TEST(Einsum, ExplicitOutput) {
  EXPECT_EQ(einsum("bhqd,bhkd->bhqk", {"2x4x8x16xf32", "2x4x6x16xf32"}), "tensor<2x4x8x6xf32>");
  EXPECT_EQ(einsum("bhqk,bhkd->bhqd", {"2x4x8x6xf32", "2x4x6x16xf32"}), "tensor<2x4x8x16xf32>");
  EXPECT_EQ(einsum("ij->ji", {"2x3xf32"}), "tensor<3x2xf32>");
  EXPECT_EQ(einsum("i,j->ij", {"2xf32", "3xf32"}), "tensor<2x3xf32>");
  EXPECT_EQ(einsum("ij->", {"2x3xf32"}), "tensor<f32>");
  EXPECT_EQ(einsum(" i j , j k -> i k ", {"2x3xf32", "3x4xf32"}), "tensor<2x4xf32>");  // spaces
  EXPECT_EQ(einsum("ij,jk,kl->il", {"2x3xf32", "3x4xf32", "4x5xf32"}), "tensor<2x5xf32>");
  EXPECT_EQ(einsum(",i->i", {"f32", "3xf32"}), "tensor<3xf32>");  // a scalar operand
}

TEST(Einsum, ImplicitOutputIsTheLabelsSeenOnceInAsciiOrder) {
  EXPECT_EQ(einsum("ij,jk", {"2x3xf32", "3x4xf32"}), "tensor<2x4xf32>");
  EXPECT_EQ(einsum("ba", {"2x3xf32"}), "tensor<3x2xf32>");
  EXPECT_EQ(einsum("bA", {"2x3xf32"}), "tensor<3x2xf32>");  // 'A' < 'b'
  EXPECT_EQ(einsum("i,i", {"3xf32", "3xf32"}), "tensor<f32>");
  EXPECT_EQ(einsum("...ij,...jk", {"5x2x3xf32", "3x4xf32"}), "tensor<5x2x4xf32>");  // "..." first
}

TEST(Einsum, DiagonalsAndTraces) {
  EXPECT_EQ(einsum("ii->i", {"3x3xf32"}), "tensor<3xf32>");
  EXPECT_EQ(einsum("ii", {"3x3xf32"}), "tensor<f32>");  // implicit: a trace
  EXPECT_EQ(einsum("bii->b", {"2x3x3xf32"}), "tensor<2xf32>");
  EXPECT_EQ(einsum("iij->ji", {"4x4x2xf32"}), "tensor<2x4xf32>");
}

TEST(Einsum, EllipsisBroadcasts) {
  EXPECT_EQ(einsum("...ij,...jk->...ik", {"5x1x2x3xf32", "4x3x2xf32"}), "tensor<5x4x2x2xf32>");
  EXPECT_EQ(einsum("i...->...", {"2x3x4xf32"}), "tensor<3x4xf32>");
  EXPECT_EQ(einsum("...,...->...", {"3x1xf32", "4xf32"}), "tensor<3x4xf32>");
  EXPECT_EQ(einsum("a...b->b...a", {"2x3x4x5xf32"}), "tensor<5x3x4x2xf32>");
  EXPECT_EQ(einsum("...i->...i", {"3xf32"}), "tensor<3xf32>");  // "..." of no dims
}

TEST(Einsum, SymbolicDimsAreKept) {
  EXPECT_EQ(einsum("bhqd,bhkd->bhqk", {"\"batch\"x4x\"seq\"x16xf32", "\"batch\"x4x\"seq\"x16xf32"}),
            "tensor<\"batch\"x4x\"seq\"x\"seq\"xf32>");
  EXPECT_EQ(einsum("ij,jk->ik", {"\"n\"x\"k\"xf32", "3x5xf32"}), "tensor<\"n\"x5xf32>");
  EXPECT_EQ(einsum("ij,ij->ij", {"1x3xf32", "\"n\"x3xf32"}), "tensor<\"n\"x3xf32>");  // 1 broadcasts
}

TEST(Einsum, ErrorsNameTheNodeAndTheProblem) {
  EXPECT_EQ(einsum("ij,jk->ik", {"2x3xf32", "4x5xf32"}),
            "<input>:2:8: einsum label 'j' is 3 in input 0 and 4 in input 1");
  EXPECT_EQ(einsum("ii->i", {"2x3xf32"}), "<input>:2:8: einsum label 'i' is repeated in input 0 with sizes 2 and 3");
  EXPECT_EQ(einsum("ij->i", {"2x3x4xf32"}), "<input>:2:8: einsum term 0 'ij' has 2 labels but input 0 has rank 3");
  EXPECT_EQ(einsum("...ijk->i", {"2x3xf32"}),
            "<input>:2:8: einsum term 0 '...ijk' has 3 labels but input 0 has rank 2");
  EXPECT_EQ(einsum("ij,jk->ik", {"2x3xf32"}), "<input>:2:8: einsum equation has 2 terms for 1 inputs");
  EXPECT_EQ(einsum("ij->ik", {"2x3xf32"}), "<input>:2:8: einsum output label 'k' appears in no input");
  EXPECT_EQ(einsum("ij->ii", {"2x3xf32"}), "<input>:2:8: einsum output names label 'i' twice");
  EXPECT_EQ(einsum("...i...->i", {"2x3xf32"}), "<input>:2:8: einsum term 0 has more than one '...'");
  EXPECT_EQ(einsum("i1->i", {"2xf32"}),
            "<input>:2:8: einsum term 0 'i1': unexpected '1' (labels are letters a-z, A-Z)");
  EXPECT_EQ(einsum("i..->i", {"2xf32"}),
            "<input>:2:8: einsum term 0 'i..': unexpected '.' (labels are letters a-z, A-Z)");
  EXPECT_EQ(einsum("i->i->i", {"2xf32"}), "<input>:2:8: einsum equation has more than one '->'");
  EXPECT_EQ(einsum("", {"2xf32"}), "<input>:2:8: einsum equation is empty");
  EXPECT_EQ(einsum("...i->i", {"2x3xf32"}),
            "<input>:2:8: einsum output omits '...' but the inputs' '...' covers 1 dims");
  EXPECT_EQ(einsum("...i,...i->...i", {"2x3xf32", "4x3xf32"}),
            "<input>:2:8: einsum '...' of input 1 (4) does not broadcast with 2");
}

TEST(Einsum, ExplicitFormIsWhatTheKernelRuns) {
  EXPECT_EQ(parse_einsum("bA")->str(), "bA->Ab");
  EXPECT_EQ(parse_einsum("...ij, ...jk")->str(), "...ij,...jk->...ik");
  EXPECT_EQ(parse_einsum("ii")->str(), "ii->");
  EXPECT_TRUE(parse_einsum("ii")->implicit);
  EXPECT_FALSE(parse_einsum("ii->i")->implicit);
}

double flops(const std::string& equation, std::vector<Shape> shapes) {
  Attributes a;
  a.set("equation", equation);
  std::vector<TensorType> types;
  for (Shape& s : shapes) types.push_back({DType::f32, std::move(s)});
  std::vector<const TensorType*> in;
  for (const TensorType& t : types) in.push_back(&t);
  return op_work(Op::Einsum, a, in, TensorType{}).flops;
}

TEST(Einsum, FlopsAreTwicePerPointOfAContraction) {
  // As MatMul: 2 * batch * M * N * K.
  EXPECT_EQ(flops("bhqd,bhkd->bhqk", {Shape({2, 4, 8, 16}), Shape({2, 4, 6, 16})}), 2.0 * 2 * 4 * 8 * 6 * 16);
  EXPECT_EQ(flops("ij,jk", {Shape({2, 3}), Shape({3, 4})}), 2.0 * 2 * 3 * 4);
  EXPECT_EQ(flops("ij->i", {Shape({2, 3})}), 6.0);             // one add per element
  EXPECT_EQ(flops("ij->ji", {Shape({2, 3})}), 0.0);            // a permutation
  EXPECT_EQ(flops("i,j->ij", {Shape({2}), Shape({3})}), 6.0);  // one multiply per output
  EXPECT_EQ(flops("...ij,...jk", {Shape({5, 2, 3}), Shape({3, 4})}), 2.0 * 5 * 2 * 3 * 4);
}

}  // namespace
}  // namespace refinery::ir
