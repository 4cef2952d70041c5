// Shape rules, one short check per family. The zoo-wide cross-check against
// ONNX's own shape inference lives in tests/frontends.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ir/text.h"

namespace refinery::ir {
namespace {

// Parses a graph whose node types are placeholders, infers, and returns the
// type of the value named `name`.
std::string infer(const std::string& body, const std::string& inputs, const std::string& name) {
  auto g = parse_graph("graph @t(" + inputs + ") {\n" + body + "\n return %" + name + "\n}");
  EXPECT_TRUE(g.has_value()) << (g ? "" : g.error().str());
  if (!g) return "";
  auto ok = g->infer_shapes();
  EXPECT_TRUE(ok.has_value()) << (ok ? "" : ok.error().str());
  return g->value(*g->find_value(name)).type.str();
}

TEST(ShapeRules, BroadcastKeepsSymbols) {
  EXPECT_EQ(infer("%y = add(%a, %b) : tensor<*xf32>", "%a: tensor<\"N\"x1x4xf32>, %b: tensor<3x1xf32>", "y"),
            "tensor<\"N\"x3x4xf32>");
}

TEST(ShapeRules, MatMulBatchesAndVectors) {
  EXPECT_EQ(infer("%y = matmul(%a, %b) : tensor<*xf32>", "%a: tensor<2x1x3x4xf32>, %b: tensor<5x4x6xf32>", "y"),
            "tensor<2x5x3x6xf32>");
  EXPECT_EQ(infer("%y = matmul(%a, %b) : tensor<*xf32>", "%a: tensor<4xf32>, %b: tensor<4x6xf32>", "y"),
            "tensor<6xf32>");
}

TEST(ShapeRules, ConvAndPoolArithmetic) {
  EXPECT_EQ(
      infer("%w = const hex<\"" + std::string(64 * 3 * 7 * 7 * 8, '0') +
                "\"> : tensor<64x3x7x7xf32>\n"
                "%y = conv(%x, %w) {kernel_shape = [7, 7], pads = [3, 3, 3, 3], strides = [2, 2]} : tensor<*xf32>",
            "%x: tensor<1x3x224x224xf32>", "y"),
      "tensor<1x64x112x112xf32>");
  EXPECT_EQ(infer("%y = max_pool(%x) {ceil_mode = 1, kernel_shape = [3, 3], strides = [2, 2]} : tensor<*xf32>",
                  "%x: tensor<1x64x111x111xf32>", "y"),
            "tensor<1x64x55x55xf32>");
  EXPECT_EQ(infer("%y = max_pool(%x) {ceil_mode = 1, kernel_shape = [3, 3], strides = [2, 2]} : tensor<*xf32>",
                  "%x: tensor<1x64x112x112xf32>", "y"),
            "tensor<1x64x56x56xf32>");
  // ceil mode: a window overhanging the input by less than a stride still
  // gives one output (ONNX and ONNX Runtime say 1 here; tests/ir/fail/
  // pool_window_too_large.ir: none fits)
  EXPECT_EQ(infer("%y = max_pool(%x) {ceil_mode = 1, kernel_shape = [6, 6], strides = [2, 2]} : tensor<*xf32>",
                  "%x: tensor<1x1x5x5xf32>", "y"),
            "tensor<1x1x1x1xf32>");
  EXPECT_EQ(infer("%y = max_pool(%x) {ceil_mode = 1, kernel_shape = [7, 7], strides = [3, 3]} : tensor<*xf32>",
                  "%x: tensor<1x1x5x5xf32>", "y"),
            "tensor<1x1x1x1xf32>");
}

TEST(ShapeRules, ReshapeFromShapeArithmeticStaysSymbolic) {
  // The BERT pattern: Reshape(x, Concat(Gather(Shape(x), 0), [64, 4, 64])).
  std::string body =
      "%s = shape(%x) : tensor<*xi64>\n"
      "%i = const dense<[0]> : tensor<1xi64>\n"
      "%n = gather(%s, %i) {axis = 0} : tensor<*xi64>\n"
      "%rest = const dense<[64, 4, 64]> : tensor<3xi64>\n"
      "%t = concat(%n, %rest) {axis = 0} : tensor<*xi64>\n"
      "%y = reshape(%x, %t) : tensor<*xf32>";
  EXPECT_EQ(infer(body, "%x: tensor<\"batch\"x64x256xf32>", "y"), "tensor<\"batch\"x64x4x64xf32>");
  EXPECT_EQ(infer("%t = const dense<[-1, 64, 4, 64]> : tensor<4xi64>\n%y = reshape(%x, %t) : tensor<*xf32>",
                  "%x: tensor<\"batch\"x64x256xf32>", "y"),
            "tensor<\"batch\"x64x4x64xf32>");
  EXPECT_EQ(infer("%t = const dense<[0, -1]> : tensor<2xi64>\n%y = reshape(%x, %t) : tensor<*xf32>",
                  "%x: tensor<\"batch\"x64x4xf32>", "y"),
            "tensor<\"batch\"x256xf32>");
}

// x.view(b, s, 4, 16) with b and s read from a shape: two unknown entries
// are run-time sizes (known contents cannot tell them from -1), not an error.
TEST(ShapeRules, ReshapeToSeveralRunTimeSizes) {
  std::string body =
      "%s = shape(%x) : tensor<*xi64>\n"
      "%i = const dense<[0, 1]> : tensor<2xi64>\n"
      "%bs = gather(%s, %i) {axis = 0} : tensor<*xi64>\n"
      "%rest = const dense<[4, 16]> : tensor<2xi64>\n"
      "%t = concat(%bs, %rest) {axis = 0} : tensor<*xi64>\n"
      "%y = reshape(%x, %t) : tensor<*xf32>";
  EXPECT_EQ(infer(body, "%x: tensor<?x?x64xf32>", "y"), "tensor<?x?x4x16xf32>");
}

// torch's nn.MultiheadAttention: the packed projection cut in thirds by
// Slice along axis -1 read from Constant nodes, each third reshaped to
// [S, B * heads, d] with B * heads computed from a symbolic batch. A
// Constant's [-1] is read as it is (not as an unknown dim), and the
// Concat of the target keeps S and d with the product unknown between.
TEST(ShapeRules, TorchMultiheadAttentionSlicesAndHeads) {
  std::string body =
      "%s = shape(%p) : tensor<*xi64>\n"
      "%last = constant() {value = dense<[-1]> : tensor<1xi64>} : tensor<*xi64>\n"
      "%n = gather(%s, %last) {axis = 0} : tensor<*xi64>\n"
      "%three = constant() {value = dense<[3]> : tensor<1xi64>} : tensor<*xi64>\n"
      "%e = div(%n, %three) : tensor<*xi64>\n"
      "%zero = constant() {value = dense<[0]> : tensor<1xi64>} : tensor<*xi64>\n"
      "%q = slice(%p, %zero, %e, %last) : tensor<*xf32>\n"
      "%i0 = constant() {value = dense<[0]> : tensor<1xi64>} : tensor<*xi64>\n"
      "%seq = gather(%s, %i0) {axis = 0} : tensor<*xi64>\n"
      "%i1 = constant() {value = dense<[1]> : tensor<1xi64>} : tensor<*xi64>\n"
      "%b = gather(%s, %i1) {axis = 0} : tensor<*xi64>\n"
      "%four = constant() {value = dense<[4]> : tensor<1xi64>} : tensor<*xi64>\n"
      "%bh = mul(%b, %four) : tensor<*xi64>\n"
      "%d = constant() {value = dense<[16]> : tensor<1xi64>} : tensor<*xi64>\n"
      "%t = concat(%seq, %bh, %d) {axis = 0} : tensor<*xi64>\n"
      "%y = reshape(%q, %t) : tensor<*xf32>";
  EXPECT_EQ(infer(body, "%p: tensor<\"seq\"x\"batch\"x192xf32>", "q"), "tensor<\"seq\"x\"batch\"x64xf32>");
  EXPECT_EQ(infer(body, "%p: tensor<\"seq\"x\"batch\"x192xf32>", "y"), "tensor<\"seq\"x?x16xf32>");
}

// torch's expand(-1, 1, S, -1) of a [B, 1, 1, S] mask: the target is
// Reshape(Concat(-1, 1, S, -1), [-1]) and the -1 entries are replaced by the
// mask's dims through Where(Equal(t, ConstantOfShape(Shape(t)) * -1), 1, t).
// A known -1 is not an unknown dim, so Equal and Where are evaluated; a
// symbolic S is a size and never equals -1.
std::string torch_expand_mask(const std::string& inputs) {
  std::string body =
      "%s = shape(%ids) : tensor<*xi64>\n"
      "%i1 = constant() {value = dense<[1]> : tensor<i64>} : tensor<*xi64>\n"
      "%seq = gather(%s, %i1) {axis = 0} : tensor<*xi64>\n"
      "%a0 = constant() {value = dense<[0]> : tensor<1xi64>} : tensor<*xi64>\n"
      "%useq = unsqueeze(%seq, %a0) : tensor<*xi64>\n"
      "%m1 = constant() {value = dense<[-1]> : tensor<1xi64>} : tensor<*xi64>\n"
      "%one = constant() {value = dense<[1]> : tensor<1xi64>} : tensor<*xi64>\n"
      "%c = concat(%m1, %one, %useq, %m1) {axis = 0} : tensor<*xi64>\n"
      "%t = reshape(%c, %m1) : tensor<*xi64>\n"
      "%ts = shape(%t) : tensor<*xi64>\n"
      "%ones = constant_of_shape(%ts) {value = dense<[1]> : tensor<1xi64>} : tensor<*xi64>\n"
      "%neg = constant() {value = dense<[-1]> : tensor<i64>} : tensor<*xi64>\n"
      "%negs = mul(%ones, %neg) : tensor<*xi64>\n"
      "%eq = equal(%t, %negs) : tensor<*xbool>\n"
      "%w = where(%eq, %ones, %t) : tensor<*xi64>\n"
      "%y = expand(%mask, %w) : tensor<*xf32>";
  return infer(body, inputs, "y");
}

TEST(ShapeRules, TorchExpandWithMinusOneKeepsTheMasksShape) {
  EXPECT_EQ(torch_expand_mask("%ids: tensor<\"batch\"x64xi64>, %mask: tensor<\"batch\"x1x1x64xf32>"),
            "tensor<\"batch\"x1x64x64xf32>");
  EXPECT_EQ(torch_expand_mask("%ids: tensor<\"batch\"x\"seq\"xi64>, %mask: tensor<\"batch\"x1x1x\"seq\"xf32>"),
            "tensor<\"batch\"x1x\"seq\"x\"seq\"xf32>");
}

// Known contents hold a negative integer as it is, apart from an unknown
// entry: arithmetic keeps it, Equal tells it from a size, and a Reshape
// target reads a known -1 as the dim to infer and refuses any other negative.
TEST(ShapeRules, KnownContentsHoldNegativeIntegers) {
  EXPECT_FALSE(Dim::integer(-1) == Dim::unknown());
  EXPECT_TRUE(Dim::integer(-1).is_integer() && !Dim::integer(-1).is_static() && !Dim::integer(-1).is_unknown());
  EXPECT_EQ(Dim::integer(3), Dim(3));
  EXPECT_EQ(refine(Dim::integer(-1), Dim::unknown()), Dim::integer(-1));
  EXPECT_EQ(refine(Dim::integer(-1), Dim::symbol("N")), std::nullopt);
  EXPECT_EQ(refine(Dim::integer(-1), Dim(1)), std::nullopt);
  // (2 - 3) * 4 + 3 = -1, computed in the graph: a Slice's end counted from
  // the end, and the dim to infer of a Reshape target
  std::string body =
      "%two = constant() {value = dense<[2]> : tensor<1xi64>} : tensor<*xi64>\n"
      "%three = constant() {value = dense<[3]> : tensor<i64>} : tensor<*xi64>\n"
      "%four = constant() {value = dense<[4]> : tensor<i64>} : tensor<*xi64>\n"
      "%d = sub(%two, %three) : tensor<*xi64>\n"
      "%m = mul(%d, %four) : tensor<*xi64>\n"
      "%e = add(%m, %three) : tensor<*xi64>\n"
      "%zero = constant() {value = dense<[0]> : tensor<1xi64>} : tensor<*xi64>\n"
      "%s = slice(%x, %zero, %e, %e) : tensor<*xf32>\n"
      "%sixteen = constant() {value = dense<[16]> : tensor<1xi64>} : tensor<*xi64>\n"
      "%t = concat(%e, %sixteen) {axis = 0} : tensor<*xi64>\n"
      "%y = reshape(%x, %t) : tensor<*xf32>";
  EXPECT_EQ(infer(body, "%x: tensor<\"batch\"x16xf32>", "s"), "tensor<\"batch\"x15xf32>");
  EXPECT_EQ(infer(body, "%x: tensor<\"batch\"x16xf32>", "y"), "tensor<\"batch\"x16xf32>");
  EXPECT_EQ(infer(body, "%x: tensor<2x4x16xf32>", "y"), "tensor<8x16xf32>");
  // -2 is no dimension
  auto g = parse_graph(
      "graph @t(%x: tensor<2x4xf32>) {\n"
      "%a = constant() {value = dense<[-3]> : tensor<1xi64>} : tensor<*xi64>\n"
      "%one = constant() {value = dense<[1]> : tensor<1xi64>} : tensor<*xi64>\n"
      "%t = add(%a, %one) : tensor<*xi64>\n"
      "%y = reshape(%x, %t) : tensor<*xf32>\n return %y\n}");
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.error().str(), "<input>:5:6: invalid dimension -2");
}

// A Slice whose starts or ends are known only at run time leaves the axes it
// does not slice as they were.
TEST(ShapeRules, SliceToARunTimeLengthKeepsTheOtherAxes) {
  std::string body =
      "%zero = constant() {value = dense<[0]> : tensor<1xi64>} : tensor<*xi64>\n"
      "%one = constant() {value = dense<[1]> : tensor<1xi64>} : tensor<*xi64>\n"
      "%a = slice(%x, %zero, %e, %one) : tensor<*xf32>\n"
      "%b = slice(%x, %zero, %e) : tensor<*xf32>";
  std::string inputs = "%x: tensor<\"batch\"x64x16xf32>, %e: tensor<1xi64>";
  EXPECT_EQ(infer(body, inputs, "a"), "tensor<\"batch\"x?x16xf32>");
  EXPECT_EQ(infer(body, inputs, "b"), "tensor<?x64x16xf32>");
}

// A [1, 64, 8] table and a [64, 64] buffer sliced to the sequence length s
// (torch's `pos[:, :s]`, `causal[:s, :s]`): each sliced dim is min(s, 64), no
// symbol, and broadcast against s in an Add it is s, on every input the Add
// accepts (min(s, 64) is s, or 1 where s is too). Range(0, s, 1) has s elements.
TEST(ShapeRules, BufferSlicedToTheSequenceBroadcastsAsTheSequence) {
  std::string body =
      "%sh = shape(%h) : tensor<*xi64>\n"
      "%i1 = constant() {value = dense<[1]> : tensor<1xi64>} : tensor<*xi64>\n"
      "%s = gather(%sh, %i1) {axis = 0} : tensor<*xi64>\n"
      "%zero = constant() {value = dense<[0]> : tensor<1xi64>} : tensor<*xi64>\n"
      "%p = slice(%table, %zero, %s, %i1) : tensor<*xf32>\n"
      "%x = add(%h, %p) : tensor<*xf32>\n"
      "%zz = constant() {value = dense<[0, 0]> : tensor<2xi64>} : tensor<*xi64>\n"
      "%ss = concat(%s, %s) {axis = 0} : tensor<*xi64>\n"
      "%axes = constant() {value = dense<[0, 1]> : tensor<2xi64>} : tensor<*xi64>\n"
      "%c = slice(%causal, %zz, %ss, %axes) : tensor<*xf32>\n"
      "%y = add(%scores, %c) : tensor<*xf32>\n"
      "%t = shape(%other) : tensor<*xi64>\n"
      "%u = gather(%t, %i1) {axis = 0} : tensor<*xi64>\n"
      "%q = slice(%table, %zero, %u, %i1) : tensor<*xf32>\n"
      "%z = add(%h, %q) : tensor<*xf32>\n"
      "%two = constant() {value = dense<[2]> : tensor<1xi64>} : tensor<*xi64>\n"
      "%r = slice(%table, %zero, %s, %i1, %two) : tensor<*xf32>\n"
      "%w = add(%h, %r) : tensor<*xf32>\n"
      "%s0 = constant() {value = dense<[1]> : tensor<i64>} : tensor<*xi64>\n"
      "%sc = gather(%sh, %s0) {axis = 0} : tensor<*xi64>\n"
      "%start = constant() {value = dense<[0]> : tensor<i64>} : tensor<*xi64>\n"
      "%delta = constant() {value = dense<[1]> : tensor<i64>} : tensor<*xi64>\n"
      "%pos = range(%start, %sc, %delta) : tensor<*xi64>";
  std::string inputs =
      "%h: tensor<\"batch\"x\"seq\"x8xf32>, %table: tensor<1x64x8xf32>, %causal: tensor<64x64xf32>, "
      "%scores: tensor<\"batch\"x4x\"seq\"x\"seq\"xf32>, %other: tensor<1x\"len\"xf32>";
  EXPECT_EQ(infer(body, inputs, "p"), "tensor<1x?x8xf32>");
  EXPECT_EQ(infer(body, inputs, "x"), "tensor<\"batch\"x\"seq\"x8xf32>");
  EXPECT_EQ(infer(body, inputs, "c"), "tensor<?x?xf32>");
  EXPECT_EQ(infer(body, inputs, "y"), "tensor<\"batch\"x4x\"seq\"x\"seq\"xf32>");
  EXPECT_EQ(infer(body, inputs, "z"), "tensor<\"batch\"x?x8xf32>");  // min(len, 64): not seq
  EXPECT_EQ(infer(body, inputs, "w"), "tensor<\"batch\"x?x8xf32>");  // every other entry: no min
  EXPECT_EQ(infer(body, inputs, "pos"), "tensor<\"seq\"xi64>");
  // a buffer of one row: min(s, 1) broadcasts to s too
  EXPECT_EQ(infer(body, "%h: tensor<\"batch\"x\"seq\"x8xf32>, %table: tensor<1x1x8xf32>, %causal: "
                        "tensor<64x64xf32>, %scores: tensor<\"batch\"x4x\"seq\"x\"seq\"xf32>, %other: "
                        "tensor<1x\"len\"xf32>",
                  "x"),
            "tensor<\"batch\"x\"seq\"x8xf32>");
  Dim m = Dim::min_of("seq", 64);
  EXPECT_TRUE(m.is_unknown() && m.is_min() && !m.is_symbol() && m.str() == "?" && !(m == Dim::unknown()));
  EXPECT_EQ(refine(Dim::unknown(), m), m);
  EXPECT_EQ(refine(m, Dim::symbol("seq")), Dim::symbol("seq"));
}

TEST(ShapeRules, RefineKeepsTheMorePreciseAndRefusesContradictions) {
  auto t = [](Shape s) { return TensorType{DType::f32, std::move(s)}; };
  Dim seq = Dim::symbol("seq"), n = Dim::symbol("N");
  EXPECT_EQ(refine(t({Dim(), seq, 4}), t({2, Dim(), Dim()}))->str(), "tensor<2x\"seq\"x4xf32>");
  EXPECT_EQ(refine(t({seq}), t({16}))->str(), "tensor<16xf32>");
  EXPECT_EQ(refine(t({seq}), t({n}))->str(), "tensor<\"seq\"xf32>");
  EXPECT_EQ(refine(t(Shape::unranked()), t({n}))->str(), "tensor<\"N\"xf32>");
  EXPECT_EQ(refine(t({3, 4}), t({3, 5})).error(), "tensor<3x4xf32> and tensor<3x5xf32> differ in dim 1");
  EXPECT_EQ(refine(t({3}), t({3, 1})).error(), "tensor<3xf32> and tensor<3x1xf32> differ in rank");
  EXPECT_EQ(refine(t({3}), TensorType{DType::i64, Shape({3})}).error(),
            "tensor<3xf32> and tensor<3xi64> differ in element type");
}

TEST(ShapeRules, LayoutOps) {
  EXPECT_EQ(infer("%y = transpose(%x) {perm = [0, 2, 1]} : tensor<*xf32>", "%x: tensor<2x3x4xf32>", "y"),
            "tensor<2x4x3xf32>");
  EXPECT_EQ(infer("%a = const dense<[1, -1]> : tensor<2xi64>\n%y = unsqueeze(%x, %a) : tensor<*xf32>",
                  "%x: tensor<2x3xf32>", "y"),
            "tensor<2x1x3x1xf32>");
  EXPECT_EQ(
      infer(
          "%s = const dense<[1, 3]> : tensor<2xi64>\n%y, %z = split(%x, %s) {axis = 1} : tensor<*xf32>, tensor<*xf32>",
          "%x: tensor<2x4xf32>", "z"),
      "tensor<2x3xf32>");
  EXPECT_EQ(infer("%b = const dense<[1]> : tensor<1xi64>\n%e = const dense<[-1]> : tensor<1xi64>\n"
                  "%a = const dense<[1]> : tensor<1xi64>\n%y = slice(%x, %b, %e, %a) : tensor<*xf32>",
                  "%x: tensor<2x10xf32>", "y"),
            "tensor<2x8xf32>");
  EXPECT_EQ(infer("%y = flatten(%x) {axis = 1} : tensor<*xf32>", "%x: tensor<\"N\"x512x1x1xf32>", "y"),
            "tensor<\"N\"x512xf32>");
}

TEST(ShapeRules, ReductionsAndCasts) {
  EXPECT_EQ(infer("%y = reduce_mean(%x) {axes = [-1], keepdims = 1} : tensor<*xf32>", "%x: tensor<2x3x4xf32>", "y"),
            "tensor<2x3x1xf32>");
  EXPECT_EQ(infer("%y = argmax(%x) {axis = 1, keepdims = 0} : tensor<*xi64>", "%x: tensor<2x3x4xf32>", "y"),
            "tensor<2x4xi64>");
  EXPECT_EQ(infer("%y = cast(%x) {to = 10} : tensor<*xf16>", "%x: tensor<2xf32>", "y"), "tensor<2xf16>");
}

TEST(ShapeRules, ErrorsNameTheProblem) {
  auto g = parse_graph(
      "graph @t(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {\n"
      "  %y = matmul(%a, %b) : tensor<*xf32> loc(\"mm\")\n  return %y\n}");
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.error().str(), "<input>:2:8: inner dimensions differ: 2x3 and 4x5");
}

// A size that comes from a constant (Expand's shape, Tile's repeats, Pad's
// pads, ConstantOfShape's shape, Range's bounds, a declared type) is checked
// when the types are inferred, before anything could allocate it: past 2^40
// elements is Refinery's limit (a valid model: limitation), past int64 or
// negative is a bad input.
struct Refused {
  const char* inputs;
  const char* body;
  const char* message;
  bool limitation;
};

TEST(ShapeRules, SizesFromConstantsPastTheLimitsAreRefused) {
  const Refused cases[] = {
      {"%x: tensor<1xf32>",
       "%s = const dense<[1048576, 1048576, 1048576]> : tensor<3xi64>\n"
       "%y = expand(%x, %s) : tensor<*xf32>",
       "<input>:3:6: output 0 has dims [1048576, 1048576, 1048576]: more than 2^40 elements, Refinery's limit", true},
      {"%x: tensor<1xf32>",
       "%s = const dense<[2097152, 1048576]> : tensor<2xi64>\n"
       "%y = constant_of_shape(%s) : tensor<*xf32>",
       "<input>:3:6: output 0 has dims [2097152, 1048576]: more than 2^40 elements, Refinery's limit", true},
      {"%x: tensor<1024xf32>",
       "%r = const dense<[2147483648]> : tensor<1xi64>\n"
       "%y = tile(%x, %r) : tensor<*xf32>",
       "<input>:3:6: output 0 has dims [2199023255552]: more than 2^40 elements, Refinery's limit", true},
      {"%x: tensor<2xf32>",
       "%p = const dense<[0, 2199023255552]> : tensor<2xi64>\n"
       "%y = pad(%x, %p) : tensor<*xf32>",
       "<input>:3:6: output 0 has dims [2199023255554]: more than 2^40 elements, Refinery's limit", true},
      {"%x: tensor<1xf32>",
       "%a = const dense<[0]> : tensor<i64>\n%b = const dense<[2199023255552]> : tensor<i64>\n"
       "%d = const dense<[1]> : tensor<i64>\n%y = range(%a, %b, %d) : tensor<*xi64>",
       "<input>:5:6: output 0 has 2199023255552 elements: more than 2^40 elements, Refinery's limit", true},
      {"%x: tensor<1048576x1048576x2xf32>", "%y = relu(%x) : tensor<*xf32>",
       "<input>:1:14: the type has dims [1048576, 1048576, 2]: more than 2^40 elements, Refinery's limit", true},
      {"%x: tensor<4xf32>",
       "%r = const dense<[4611686018427387904]> : tensor<1xi64>\n"
       "%y = tile(%x, %r) : tensor<*xf32>",
       "<input>:3:6: axis 0 tiled 4611686018427387904 times overflows int64", false},
      {"%x: tensor<2xf32>",
       "%s = const dense<[4611686018427387904, 4, -1]> : tensor<3xi64>\n"
       "%y = reshape(%x, %s) : tensor<*xf32>",
       "<input>:3:6: shape has dims [4611686018427387904, 4], whose element count overflows int64", false},
      {"%x: tensor<2xf32>",
       "%p = const dense<[0, -5]> : tensor<2xi64>\n"
       "%y = pad(%x, %p) : tensor<*xf32>",
       "<input>:3:6: axis 0 (2) padded by 0 and -5 is negative", false},
  };
  for (const Refused& c : cases) {
    SCOPED_TRACE(c.body);
    auto g = parse_graph(fmt::format("graph @t({}) {{\n{}\n return %y\n}}", c.inputs, c.body));
    ASSERT_FALSE(g.has_value());
    EXPECT_EQ(g.error().str(), c.message);
    EXPECT_EQ(g.error().limitation, c.limitation);
  }
}

}  // namespace
}  // namespace refinery::ir
