// The interpreter loop: dispatch coverage, constants shared not copied,
// values freed after their last use, errors that name the node, random inputs.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include "tests/runtime/helpers.h"

namespace refinery::runtime::testing {
namespace {

using ir::Op;

ir::NodeId add(ir::Graph& g, Op op, std::vector<ir::ValueId> inputs, std::string name = {},
               ir::Attributes attributes = {}) {
  ir::Node n;
  n.op = op;
  n.name = std::move(name);
  n.inputs = std::move(inputs);
  n.attrs = std::move(attributes);
  std::string out = fmt::format("v{}", g.num_values());
  return g.add_node(std::move(n), {out}, {});
}

ir::ValueId out(const ir::Graph& g, ir::NodeId n) { return g.node(n).outputs[0]; }

// Dense (ONNX) ops all have kernels; NIR spiking ops are stepped through time
// by a separate part of the runtime that does not exist yet.
TEST(Dispatch, EveryOnnxOpOfTheTableHasAKernel) {
  std::vector<std::string> missing, nir_with_kernel;
  for (int i = 0; i < ir::kNumOps; ++i) {
    auto op = static_cast<Op>(i);
    if (op == Op::Opaque) continue;
    bool nir = ir::op_info(op).onnx_name.starts_with("nir.");
    if (!nir && !has_kernel(op)) missing.emplace_back(ir::op_name(op));
    if (nir && has_kernel(op)) nir_with_kernel.emplace_back(ir::op_name(op));
  }
  EXPECT_TRUE(missing.empty()) << fmt::format("no kernel: {}", fmt::join(missing, ", "));
  EXPECT_TRUE(nir_with_kernel.empty()) << fmt::format("update this test: {}", fmt::join(nir_with_kernel, ", "));
  EXPECT_FALSE(has_kernel(Op::Opaque));
}

// libtorch comes in with the interpreter module (runtime/module.h), on the
// first call that needs a kernel, not at the start of the process. Checked
// in a fresh process (the threadsafe death-test style re-executes this test
// alone), since another test of this binary may have loaded it already.
bool libtorch_mapped() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("libtorch_cpu") != std::string::npos) return true;
  return false;
}

// Exits 0 when libtorch is absent after drawing random inputs and present
// after asking for a kernel.
[[noreturn]] void load_libtorch_on_demand() {
  const ir::TensorType type{ir::DType::f32, ir::Shape({2, 3})};
  const bool early = libtorch_mapped() || random_tensor(type, 1).dims().size() != 2 || libtorch_mapped();
  const bool loaded = has_kernel(Op::Relu) && libtorch_mapped();
  std::fprintf(stderr, "early %d loaded %d\n", early, loaded);
  std::exit(!early && loaded ? 0 : 1);
}

TEST(Module, LibtorchIsLoadedOnlyWhenAKernelIsNeeded) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(load_libtorch_on_demand(), ::testing::ExitedWithCode(0), "early 0 loaded 1");
}

TEST(Constants, AreSharedNotCopied) {
  ir::Graph g;
  auto weight = std::make_shared<const ir::Tensor>(f32({2}, {1, 2}));
  ir::ValueId x = g.add_input("x", {ir::DType::f32, ir::Shape({2})});
  ir::ValueId w = g.add_constant("w", weight);
  ir::NodeId a = add(g, Op::Add, {x, w});
  ir::NodeId m = add(g, Op::Mul, {out(g, a), w});
  ir::NodeId id = add(g, Op::Identity, {w});
  g.set_outputs({out(g, m), w, out(g, id)});
  ASSERT_TRUE(g.infer_shapes());
  RunStats stats;
  auto r = run(g, {f32({2}, {1, 1})}, {.stats = &stats});
  ASSERT_TRUE(r) << r.error().str();
  expect_near((*r)[0], {2, 6});
  // The constant reaches the outputs without a copy: same bytes as the graph's.
  EXPECT_EQ((*r)[1].data(), weight->data());
  EXPECT_EQ((*r)[2].data(), weight->data());
  EXPECT_EQ(stats.constants_converted, 1u);  // once per run, though used four times
  EXPECT_EQ(stats.constants_copied, 0u);
}

// A wide run computes in f64: (x + 1e4) - 1e4 gives x back exactly (x has 24
// significant bits, x + 1e4 needs 38 of f64's 53), where f32 drops x's low
// bits. Float outputs come back as f64, other outputs keep their type.
TEST(WideFloats, ComputeInF64) {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", {ir::DType::f32, ir::Shape({2})});
  ir::ValueId c = g.add_constant("c", std::make_shared<const ir::Tensor>(f32({1}, {1e4f})));
  ir::NodeId a = add(g, Op::Add, {x, c});
  ir::NodeId y = add(g, Op::Sub, {out(g, a), c});
  ir::NodeId cast = add(g, Op::Cast, {out(g, y)}, "to_f32", attrs({{"to", int64_t{1}}}));  // a Cast to f32
  ir::NodeId shape = add(g, Op::Shape, {x});
  g.set_outputs({out(g, y), out(g, cast), out(g, shape)});
  ASSERT_TRUE(g.infer_shapes());
  const float third = 1.0f / 3.0f;
  auto narrow = run(g, {f32({2}, {third, -third})});
  ASSERT_TRUE(narrow) << narrow.error().str();
  EXPECT_EQ((*narrow)[0].dtype(), ir::DType::f32);
  EXPECT_NE((*narrow)[0].as_double(0), static_cast<double>(third));

  auto wide = run(g, {f32({2}, {third, -third})}, {.wide_floats = true});
  ASSERT_TRUE(wide) << wide.error().str();
  EXPECT_EQ((*wide)[0].dtype(), ir::DType::f64);
  EXPECT_EQ((*wide)[0].as_double(0), static_cast<double>(third));
  EXPECT_EQ((*wide)[0].as_double(1), -static_cast<double>(third));
  EXPECT_EQ((*wide)[1].dtype(), ir::DType::f64);  // widened again after the Cast
  EXPECT_EQ((*wide)[2].dtype(), ir::DType::i64);
  EXPECT_EQ((*wide)[2].as_double(0), 2);
}

TEST(Values, AreFreedAfterTheirLastUse) {
  ir::Graph g;
  ir::ValueId v = g.add_input("x", {ir::DType::f32, ir::Shape({4})});
  for (int i = 0; i < 20; ++i) v = out(g, add(g, Op::Neg, {v}));
  g.set_outputs({v});
  RunStats stats;
  auto r = run(g, {f32({4}, {1, 2, 3, 4})}, {.stats = &stats});
  ASSERT_TRUE(r);
  expect_near((*r)[0], {1, 2, 3, 4});
  EXPECT_LE(stats.peak_live_values, 2u);
}

TEST(Errors, OpaqueOpNamesTheNode) {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", {ir::DType::f32, ir::Shape({2})});
  ir::Node n;
  n.op = Op::Opaque;
  n.op_type = "FancyOp";
  n.domain = "com.example";
  n.name = "fancy_1";
  n.inputs = {x};
  ir::NodeId id = g.add_node(std::move(n), {"y"}, {});
  ir::NodeId r = add(g, Op::Relu, {out(g, id)});
  g.set_outputs({out(g, r)});
  EXPECT_EQ(unsupported_ops(g), std::vector<std::string>{"com.example:FancyOp"});
  auto result = run(g, {f32({2}, {1, 2})});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().where, "node 'fancy_1'");
  EXPECT_NE(result.error().message.find("FancyOp"), std::string::npos) << result.error().message;
}

TEST(Errors, AtenExceptionsBecomeDiagsNamingTheNode) {
  ir::Graph g;
  ir::ValueId a = g.add_input("a", {ir::DType::f32, ir::Shape({ir::Dim::symbol("N"), 3})});
  ir::ValueId b = g.add_input("b", {ir::DType::f32, ir::Shape({ir::Dim::symbol("K"), 2})});
  ir::NodeId mm = add(g, Op::MatMul, {a, b}, "project");
  g.set_outputs({out(g, mm)});
  auto r = run(g, {f32({1, 3}, {1, 2, 3}), f32({2, 2}, {1, 2, 3, 4})});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().where, "node 'project'");
  EXPECT_EQ(r.error().str().rfind("node 'project': ", 0), 0u) << r.error().str();
  // Unnamed nodes are labelled by index and op.
  ir::Graph h;
  ir::ValueId x = h.add_input("x", {ir::DType::i32, ir::Shape({1})});
  ir::NodeId d = add(h, Op::Div, {x, x});
  h.set_outputs({out(h, d)});
  auto z = run(h, {i32({1}, {0})});
  ASSERT_FALSE(z);
  EXPECT_EQ(z.error().where, "node '#0 div'");
}

TEST(Errors, WrongInputsAreRejected) {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", {ir::DType::f32, ir::Shape({2})});
  g.set_outputs({out(g, add(g, Op::Relu, {x}))});
  EXPECT_FALSE(run(g, {}));
  auto dtype = run(g, {i64({2}, {1, 2})});
  ASSERT_FALSE(dtype);
  EXPECT_EQ(dtype.error().where, "input 'x'");
  EXPECT_FALSE(run(g, {f32({3}, {1, 2, 3})}));
  // A node with the wrong number of inputs fails at run time, naming the node.
  ir::Graph h;
  ir::ValueId y = h.add_input("y", {ir::DType::f32, ir::Shape({2})});
  h.set_outputs({out(h, add(h, Op::Add, {y}, "lonely_add"))});
  auto r = run(h, {f32({2}, {1, 2})});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().where, "node 'lonely_add'");
}

TEST(RandomInputs, AreSeededAndInRange) {
  ir::Graph g;
  g.add_input("f", {ir::DType::f32, ir::Shape({ir::Dim::symbol("N"), 50})});
  g.add_input("i", {ir::DType::i64, ir::Shape({100})});
  g.add_input("b", {ir::DType::boolean, ir::Shape({200})});
  g.add_input("h", {ir::DType::f16, ir::Shape({ir::Dim::unknown()})});
  auto a = random_inputs(g, 42, {{"N", 3}}, 5);
  auto b = random_inputs(g, 42, {{"N", 3}}, 5);
  auto c = random_inputs(g, 43, {{"N", 3}}, 5);
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[0].dims(), (std::vector<int64_t>{3, 50}));
  EXPECT_EQ(a[3].dims(), (std::vector<int64_t>{1}));
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(a[i].bitwise_equal(b[i]));
  EXPECT_FALSE(a[0].bitwise_equal(c[0]));
  for (double v : values(a[0])) {
    EXPECT_GE(v, -1.0);
    EXPECT_LT(v, 1.0);
  }
  std::vector<int64_t> drawn = ints(a[1]);
  std::set<int64_t> seen(drawn.begin(), drawn.end());
  EXPECT_EQ(seen, (std::set<int64_t>{0, 1, 2, 3, 4}));
  int64_t trues = 0;
  for (int64_t v : ints(a[2])) trues += v;
  EXPECT_GT(trues, 60);
  EXPECT_LT(trues, 140);
  // The values are fixed across versions: the first f32 for seed 42.
  EXPECT_FLOAT_EQ(static_cast<float>(values(a[0])[0]), static_cast<float>(values(b[0])[0]));
}

TEST(Run, MultiNodeGraphWithInferredShapes) {
  // y = softmax(relu(x @ w + b)) over a 2x2 weight, all hand-computable.
  ir::Graph g;
  ir::ValueId x = g.add_input("x", {ir::DType::f32, ir::Shape({1, 2})});
  ir::ValueId w = g.add_constant("w", std::make_shared<const ir::Tensor>(f32({2, 2}, {1, 0, 0, 1})));
  ir::ValueId b = g.add_constant("b", std::make_shared<const ir::Tensor>(f32({2}, {0, -10})));
  ir::NodeId mm = add(g, Op::MatMul, {x, w});
  ir::NodeId ad = add(g, Op::Add, {out(g, mm), b});
  ir::NodeId re = add(g, Op::Relu, {out(g, ad)});
  ir::NodeId sm = add(g, Op::Softmax, {out(g, re)});
  g.set_outputs({out(g, sm)});
  ASSERT_TRUE(g.infer_shapes());
  auto r = run(g, {f32({1, 2}, {0, 3})});
  ASSERT_TRUE(r) << r.error().str();
  expect_near((*r)[0], {0.5, 0.5});  // relu([0, -7]) = [0, 0]
  EXPECT_EQ((*r)[0].dims(), (std::vector<int64_t>{1, 2}));
}

}  // namespace
}  // namespace refinery::runtime::testing
