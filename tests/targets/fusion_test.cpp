// The groups ONNX Runtime fuses when it loads a graph (fused_by_runtime):
// a LayerNormalization or Gelu written at opset 13 by export (the older ops
// frontends/onnx_lower.cpp writes) is priced as the op itself on every
// target, and the same ops with a value read outside the group, an epsilon
// that is not a constant or a mean over more than the last axis are not.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "frontends/onnx.h"
#include "targets/cost_model.h"
#include "targets/kernels.h"
#include "targets/learned.h"
#include "tests/targets/graph_builder.h"

namespace refinery::targets {
namespace {

using refinery::testing::GraphBuilder;

// y = op(x, ...) in a model of opset 13, and the graph export writes for it, read back.
struct Written {
  ir::Graph fused, written;
};

// `params`: the LayerNormalization's scale and bias dims.
Written write_at_opset13(ir::Op op, ir::Attributes attrs, std::vector<int64_t> params = {64}) {
  GraphBuilder b;
  b.graph().info.opsets[""] = 13;
  auto x = b.input("x", {4, 16, 64});
  std::vector<ir::ValueId> in{x};
  if (op == ir::Op::LayerNormalization) in = {x, b.filled("scale", params, 0.1), b.filled("bias", params, 0.7)};
  ir::Graph fused = b.finish({b.op1(op, in, std::move(attrs))});
  const auto file = std::filesystem::temp_directory_path() /
                    ("refinery_fusion_test_" + std::string(ir::op_name(op)) + std::to_string(::getpid()) + ".onnx");
  auto ok = frontends::export_onnx(fused, file);
  EXPECT_TRUE(ok.has_value()) << ok.error().str();
  auto written = frontends::import_onnx(file);
  std::filesystem::remove(file);
  EXPECT_TRUE(written.has_value()) << written.error().str();
  return {std::move(fused), written ? std::move(*written) : ir::Graph{}};
}

std::size_t count(const ir::Graph& g, ir::Op op) {
  return static_cast<std::size_t>(std::ranges::count_if(g.nodes(), [&](const ir::Node& n) { return n.op == op; }));
}

// The first node running `op` whose input `pos` is computed by `producer`.
std::size_t find_node(const ir::Graph& g, ir::Op op, std::size_t pos, ir::Op producer) {
  for (std::size_t i = 0; i < g.num_nodes(); ++i) {
    const ir::Node& n = g.nodes()[i];
    if (n.op != op || pos >= n.inputs.size()) continue;
    const ir::Value& v = g.value(n.inputs[pos]);
    if (v.kind == ir::ValueKind::NodeResult && g.node(v.producer).op == producer) return i;
  }
  ADD_FAILURE() << "no " << ir::op_name(op) << " reading a " << ir::op_name(producer);
  return 0;
}

void expect_priced_as_fused(const Written& w) {
  for (const char* name : {"cpu", "cpu-analytic", "gpu", "tpu"}) {
    SCOPED_TRACE(name);
    auto t = load_target(name);
    ASSERT_TRUE(t.has_value()) << t.error().str();
    const double fused = graph_cost(*t->model, w.fused), written = graph_cost(*t->model, w.written);
    EXPECT_GT(fused, 0);
    EXPECT_NEAR(written / fused, 1.0, 0.01);
  }
}

// `w.written` holds `op` as its decomposition (one `marker` op among its
// nodes, no `op`), which fused_by_runtime finds as one group of `nodes`
// nodes and every target prices as the fused op. Returns the groups found.
std::vector<RuntimeFusion> expect_one_fusion(const Written& w, ir::Op op, ir::Op marker, std::size_t nodes) {
  EXPECT_EQ(count(w.written, op), 0u);
  EXPECT_EQ(count(w.written, marker), 1u);
  std::vector<RuntimeFusion> f = fused_by_runtime(w.written);
  EXPECT_EQ(f.size(), 1u);
  if (f.size() == 1) {
    EXPECT_EQ(f[0].op, op);
    EXPECT_EQ(f[0].nodes.size(), nodes);
  }
  expect_priced_as_fused(w);
  return f;
}

// Priced as its parts: clear of the fused op (1%) on the learned cpu model.
void expect_priced_as_parts(const ir::Graph& g, const ir::Graph& fused) {
  EXPECT_TRUE(fused_by_runtime(g).empty());
  auto t = load_target("cpu");
  ASSERT_TRUE(t.has_value()) << t.error().str();
  EXPECT_GT(graph_cost(*t->model, g), 1.1 * graph_cost(*t->model, fused));
}

TEST(RuntimeFusion, LayerNormAsExportWritesItIsPricedAsOne) {
  ir::Attributes a;
  a.set("epsilon", 1e-5f);
  Written w = write_at_opset13(ir::Op::LayerNormalization, a);
  std::vector<RuntimeFusion> f = expect_one_fusion(w, ir::Op::LayerNormalization, ir::Op::Pow, 9);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_FLOAT_EQ(ir::OpAttrs(f[0].op, f[0].attrs).get_float("epsilon"), 1e-5f);
}

TEST(RuntimeFusion, GeluAsExportWritesItIsPricedAsOne) {
  expect_one_fusion(write_at_opset13(ir::Op::Gelu, {}), ir::Op::Gelu, ir::Op::Erf, 5);
}

// torch's other order, x * 0.5 first (ONNX Runtime 1.30 fuses it too:
// docs/measurements.md, session 26), built here as the exporter writes it.
TEST(RuntimeFusion, GeluWithTheHalfFirstIsPricedAsOne) {
  GraphBuilder b;
  auto x = b.input("x", {4, 16, 64});
  auto scalar = [&](const char* name, float v) {
    return b.graph().add_constant(name, std::make_shared<const ir::Tensor>(ir::Tensor::scalar_f32(v)));
  };
  auto half = b.op1(ir::Op::Mul, {x, scalar("half", 0.5f)});
  auto erf = b.op1(ir::Op::Erf, {b.op1(ir::Op::Div, {x, scalar("sqrt2", static_cast<float>(std::sqrt(2.0)))})});
  Written w{.fused = {},
            .written = b.finish({b.op1(ir::Op::Mul, {half, b.op1(ir::Op::Add, {erf, scalar("one", 1)})})})};
  GraphBuilder one;
  w.fused = one.finish({one.op1(ir::Op::Gelu, {one.input("x", {4, 16, 64})})});
  std::vector<RuntimeFusion> f = fused_by_runtime(w.written);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].nodes.size(), 5u);
  expect_priced_as_fused(w);
}

// In context (in_context_times): ONNX Runtime's LayerNormalization kernel,
// computing the group's result, is the group's one priced node, its last,
// and all of the kernel's time is its own.
TEST(RuntimeFusion, InContextTheFusedKernelIsItsLastNodes) {
  Written w = write_at_opset13(ir::Op::LayerNormalization, {});
  std::vector<RuntimeFusion> f = fused_by_runtime(w.written);
  ASSERT_EQ(f.size(), 1u);
  ir::Graph opt;
  ir::Node ln;
  ln.name = "LayerNormFusion/";
  ln.op_type = "LayerNormalization";
  ln.inputs = {opt.add_input("x", w.written.value(w.written.inputs()[0]).type)};
  const ir::Value& y = w.written.value(w.written.outputs()[0]);
  opt.add_node(std::move(ln), {y.name}, {y.type});
  auto baseline = learned_baseline(*find_spec("cpu"));
  auto t = in_context_times(w.written, opt, {{"LayerNormFusion/", 6}}, 0.006, *baseline);
  ASSERT_TRUE(t.has_value()) << t.error().str();
  for (std::size_t n : f[0].nodes)
    if (n != f[0].nodes.back()) {
      EXPECT_EQ(t->ms[n], -1) << n;
    }
  EXPECT_NEAR(t->ms[f[0].nodes.back()], 0.006, 1e-12);
  EXPECT_EQ(runtime_descs(w.written, f)[f[0].nodes.back()].op, ir::Op::LayerNormalization);
}

TEST(RuntimeFusion, AValueReadOutsideTheGroupIsNotFused) {
  for (ir::Op op : {ir::Op::LayerNormalization, ir::Op::Gelu}) {
    SCOPED_TRACE(std::string(ir::op_name(op)));
    Written w = write_at_opset13(op, {});
    // A third reader of the centred value (LayerNorm; the Pow and the Div
    // read it), a second of the Erf's result (Gelu).
    const ir::ValueId inner = op == ir::Op::Gelu
                                  ? w.written.nodes()[find_node(w.written, ir::Op::Erf, 0, ir::Op::Div)].outputs[0]
                                  : w.written.nodes()[find_node(w.written, ir::Op::Pow, 0, ir::Op::Sub)].inputs[0];
    ir::Node neg;
    neg.op = ir::Op::Neg;
    neg.inputs = {inner};
    const ir::TensorType t = w.written.value(neg.inputs[0]).type;
    ir::NodeId id = w.written.add_node(std::move(neg), {"read_again"}, {t});
    std::vector<ir::ValueId> outputs = w.written.outputs();
    outputs.push_back(w.written.node(id).outputs[0]);
    w.written.set_outputs(std::move(outputs));
    ASSERT_TRUE(w.written.verify().has_value());
    expect_priced_as_parts(w.written, w.fused);
  }
}

TEST(RuntimeFusion, AnEpsilonThatIsNoConstantIsNotFused) {
  Written w = write_at_opset13(ir::Op::LayerNormalization, {});
  const std::size_t add = find_node(w.written, ir::Op::Add, 0, ir::Op::ReduceMean);
  ir::ValueId eps = w.written.add_input("epsilon", ir::TensorType{ir::DType::f32, ir::Shape::of({})});
  w.written.node(ir::NodeId(static_cast<uint32_t>(add))).inputs[1] = eps;
  ASSERT_TRUE(w.written.verify().has_value());
  expect_priced_as_parts(w.written, w.fused);
}

TEST(RuntimeFusion, AMeanOverMoreThanTheLastAxisIsNotFused) {
  ir::Attributes a;
  a.set("axis", int64_t{-2});
  // A scale and bias of the last axis alone (broadcast over the other), so
  // that only the means say which axes are normalized.
  Written w = write_at_opset13(ir::Op::LayerNormalization, a, {64});
  ASSERT_EQ(count(w.written, ir::Op::Pow), 1u);
  expect_priced_as_parts(w.written, w.fused);
}

}  // namespace
}  // namespace refinery::targets
