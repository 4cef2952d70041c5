// Each cost model prefers what it should: merging two small MatMuls that
// share an input wins on the GPU (one launch instead of two); a 130-wide
// MatMul costs like a 256-wide one on the TPU (MXU padding to 128); fused
// elementwise ops are nearly free on the GPU; bigger GEMMs are more
// efficient per FLOP on the CPU; constant expressions cost nothing. The
// CpuCost tests are about the analytic model's prices (cpu-analytic); the
// learned model's are learned_test.cpp's.
#include <gtest/gtest.h>

#include <string>

#include "targets/cost_model.h"
#include "tests/targets/graph_builder.h"

namespace refinery::targets {
namespace {

using refinery::testing::GraphBuilder;

std::shared_ptr<const CostModel> model(const char* name) {
  auto t = load_target(name);
  EXPECT_TRUE(t.has_value()) << t.error().str();
  return t->model;
}

ir::Attributes axis(int64_t a) {
  ir::Attributes at;
  at.set("axis", a);
  return at;
}

// y1 = x W1, y2 = x W2 (two kernels), against y = x concat(W1, W2) split.
ir::Graph two_matmuls(int64_t m, int64_t k, int64_t n) {
  GraphBuilder b;
  auto x = b.input("x", {m, k});
  auto w1 = b.weight("w1", {k, n}), w2 = b.weight("w2", {k, n});
  return b.finish({b.op1(ir::Op::MatMul, {x, w1}), b.op1(ir::Op::MatMul, {x, w2})});
}
ir::Graph merged_matmul(int64_t m, int64_t k, int64_t n) {
  GraphBuilder b;
  auto x = b.input("x", {m, k});
  auto w1 = b.weight("w1", {k, n}), w2 = b.weight("w2", {k, n});
  auto w = b.op1(ir::Op::Concat, {w1, w2}, axis(1));  // a constant expression: folded at export
  auto y = b.op1(ir::Op::MatMul, {x, w});
  auto parts = b.op(ir::Op::Split, {y, b.ints("sizes", {n, n})}, axis(1), 2);
  return b.finish({parts[0], parts[1]});
}

ir::Graph one_matmul(int64_t m, int64_t k, int64_t n) {
  GraphBuilder b;
  auto x = b.input("x", {m, k});
  return b.finish({b.op1(ir::Op::MatMul, {x, b.weight("w", {k, n})})});
}

TEST(GpuCost, MergingTwoSmallMatMulsThatShareAnInputWins) {
  for (const char* gpu : {"h100", "h200"}) {
    auto m = model(gpu);
    double separate = graph_cost(*m, two_matmuls(64, 256, 256));
    double merged = graph_cost(*m, merged_matmul(64, 256, 256));
    EXPECT_LT(merged, 0.7 * separate) << gpu << ": " << merged << " vs " << separate;
  }
}

TEST(CpuCost, MergingTwoMatMulsThatShareAnInputWins) {
  auto m = model("cpu-analytic");
  EXPECT_LT(graph_cost(*m, merged_matmul(64, 256, 256)), graph_cost(*m, two_matmuls(64, 256, 256)));
}

TEST(TpuCost, A130WideMatMulCostsLikeA256WideOne) {
  for (const char* tpu : {"tpu_v4", "tpu_v5e"}) {
    auto m = model(tpu);
    double w130 = graph_cost(*m, one_matmul(1024, 1024, 130));
    double w256 = graph_cost(*m, one_matmul(1024, 1024, 256));
    double w128 = graph_cost(*m, one_matmul(1024, 1024, 128));
    EXPECT_NEAR(w130 / w256, 1.0, 0.02) << tpu;
    EXPECT_LT(w128, w130) << tpu;  // one MXU column pass instead of two
  }
  // The GPU pads nothing: 130 wide is cheaper than 256 wide.
  auto gpu = model("h100");
  EXPECT_LT(graph_cost(*gpu, one_matmul(4096, 4096, 130)), graph_cost(*gpu, one_matmul(4096, 4096, 256)));
}

TEST(TpuCost, RowsPadToEightSublanes) {
  auto m = model("tpu_v4");
  EXPECT_NEAR(graph_cost(*m, one_matmul(1, 4096, 4096)) / graph_cost(*m, one_matmul(8, 4096, 4096)), 1.0, 0.02);
}

TEST(GpuCost, ElementwiseOpsFuseIntoTheirProducer) {
  auto m = model("gpu");
  GraphBuilder b;
  auto x = b.input("x", {256, 1024});
  auto y = b.op1(ir::Op::MatMul, {x, b.weight("w", {1024, 1024})});
  auto r = b.op1(ir::Op::Relu, {y});
  ir::Graph g = b.finish({r});
  std::vector<double> c = node_costs(*m, g);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_LT(c[1], 0.05 * c[0]);                // relu rides on the matmul
  EXPECT_LT(c[1], m->spec().kernel_launch_s);  // and pays no launch
  GraphBuilder t;
  auto tx = t.input("x", {256, 1024});
  ir::Attributes perm;
  perm.set("perm", std::vector<int64_t>{1, 0});
  ir::Graph tg = t.finish({t.op1(ir::Op::Transpose, {tx}, perm)});
  EXPECT_GT(graph_cost(*m, tg), m->spec().kernel_launch_s);  // a transpose is its own kernel
}

// The gpu model's fixed costs (docs/targets.md, "Cost models"): each
// kernel pays the in-graph launch and its family's latency, the graph its own
// launch once (run_overhead, not a node's). On a spec whose rates are so
// high that the roofline is nothing, a graph costs exactly those.
TEST(GpuCost, KernelsPayTheirFamilysLatencyAndTheGraphItsLaunchOnce) {
  auto spec = parse_spec(R"({"name": "g", "kind": "gpu", "peak_flops": {"f32": 1e30, "tf32": 1e30},
      "memory_bandwidth": 1e30, "kernel_launch_s": 1e-6, "graph_launch_s": 5e-6,
      "kernel_latency_s": {"conv": 1e-5, "matmul": 2e-6}})");
  ASSERT_TRUE(spec.has_value()) << spec.error().str();
  auto m = make_cost_model(*spec);
  GraphBuilder c;
  auto x = c.input("x", {1, 3, 8, 8});
  ir::Graph conv = c.finish({c.op1(ir::Op::Conv, {x, c.weight("w", {4, 3, 3, 3})})});
  EXPECT_NEAR(graph_cost(*m, conv), 1e-6 + 1e-5, 1e-12);  // a tiny conv costs its family's floor, whatever its FLOPs
  EXPECT_EQ(m->run_overhead(), 5e-6);
  // N small MatMuls in a chain: N in-graph launches and N matmul latencies,
  // and one graph launch, not N.
  for (int n : {1, 4, 16}) {
    GraphBuilder b;
    auto y = b.input("x", {8, 8});
    for (int i = 0; i < n; ++i) y = b.op1(ir::Op::MatMul, {y, b.weight("w" + std::to_string(i), {8, 8})});
    EXPECT_NEAR(graph_cost(*m, b.finish({y})), n * (1e-6 + 2e-6), 1e-12) << n;
  }
  // A family's efficiency divides its peak: the conv's compute at a quarter
  // of the peak takes 4x as long, the fixed costs the same.
  const std::string rated = R"({"name": "r", "kind": "gpu", "peak_flops": {"f32": 1e9, "tf32": 1e9},
      "memory_bandwidth": 1e30, "kernel_launch_s": 1e-6, "kernel_latency_s": {"conv": 1e-5})";
  auto full = parse_spec(rated + "}");
  auto quarter = parse_spec(rated + R"(, "kernel_efficiency": {"conv": 0.25}})");
  ASSERT_TRUE(full.has_value() && quarter.has_value());
  const double compute = graph_cost(*make_cost_model(*full), conv) - 1.1e-5;
  EXPECT_GT(compute, 1e-6);
  EXPECT_NEAR(graph_cost(*make_cost_model(*quarter), conv) - 1.1e-5, 4 * compute, 1e-12);
  // A family the spec does not name (movement here) pays the launch alone.
  GraphBuilder t;
  ir::Attributes perm;
  perm.set("perm", std::vector<int64_t>{1, 0});
  ir::Graph tg = t.finish({t.op1(ir::Op::Transpose, {t.input("x", {8, 8})}, perm)});
  EXPECT_NEAR(graph_cost(*m, tg), 1e-6, 1e-12);
}

// On the shipped H200 spec (fitted, bench/gpu/fit.py) a convolution at
// batch 1 costs at least the conv family's latency, more than a MatMul of
// the same FLOPs: cudnn ran the zoo's batch-1 convolutions for 10-20 us.
TEST(GpuCost, ATinyConvCostsAtLeastTheConvFloorOnTheH200) {
  auto m = model("h200");
  const HardwareSpec& s = m->spec();
  ASSERT_TRUE(s.kernel_latency_s.contains("conv"));
  GraphBuilder c;
  ir::Graph conv = c.finish({c.op1(ir::Op::Conv, {c.input("x", {1, 3, 8, 8}), c.weight("w", {4, 3, 3, 3})})});
  EXPECT_GE(graph_cost(*m, conv), s.kernel_launch_s + s.kernel_latency_s.at("conv"));
  EXPECT_GT(graph_cost(*m, conv), graph_cost(*m, one_matmul(36, 27, 4)));  // the conv's GEMM: [36 x 27] x [27 x 4]
}

// An inference BatchNormalization is a per-channel affine map, as its form
// after bn-as-affine (a Mul and an Add): on the GPU it fuses into its
// producer like them, without a launch. It was a kernel of its own, so
// that rewriting densenet121's BatchNorms (after Concats) into Mul + Add
// looked 1.22x faster.
TEST(GpuCost, ABatchNormFusesLikeItsAffineForm) {
  auto m = model("gpu");
  GraphBuilder b;
  auto x = b.input("x", {1, 256, 14, 14});
  auto y = b.op1(ir::Op::BatchNormalization,
                 {x, b.weight("g", {256}), b.weight("b", {256}), b.weight("m", {256}), b.weight("v", {256})});
  ir::Graph g = b.finish({y});
  EXPECT_LT(graph_cost(*m, g), 0.05 * m->spec().kernel_launch_s);
}

// ONNX Runtime fuses an activation into the Conv that computes its input
// (ConvActivationFusion): the CPU model prices it at nothing, but only when
// the Conv's result has no other use; after a Concat the Relu is its own
// kernel. So relu(concat(conv, conv)) must not look cheaper than
// concat(relu(conv), relu(conv)), which ran 0.95x on squeezenet1_1.
TEST(CpuCost, ActivationsFuseIntoASingleUseConv) {
  auto m = model("cpu-analytic");
  auto conv_relu = [](bool second_use) {
    GraphBuilder b;
    auto x = b.input("x", {1, 16, 32, 32});
    auto y = b.op1(ir::Op::Conv, {x, b.weight("w", {32, 16, 1, 1})});
    auto r = b.op1(ir::Op::Relu, {y});
    return second_use ? b.finish({r, y}) : b.finish({r});
  };
  std::vector<double> fused = node_costs(*m, conv_relu(false)), shared = node_costs(*m, conv_relu(true));
  EXPECT_EQ(fused[1], 0);
  EXPECT_GT(shared[1], m->spec().op_overhead_s);

  auto branches = [](bool relu_after_concat) {
    GraphBuilder b;
    auto x = b.input("x", {1, 16, 32, 32});
    auto y1 = b.op1(ir::Op::Conv, {x, b.weight("w1", {32, 16, 1, 1})});
    auto y2 = b.op1(ir::Op::Conv, {x, b.weight("w2", {32, 16, 1, 1})});
    if (relu_after_concat) return b.finish({b.op1(ir::Op::Relu, {b.op1(ir::Op::Concat, {y1, y2}, axis(1))})});
    return b.finish({b.op1(ir::Op::Concat, {b.op1(ir::Op::Relu, {y1}), b.op1(ir::Op::Relu, {y2})}, axis(1))});
  };
  EXPECT_LT(graph_cost(*m, branches(false)), graph_cost(*m, branches(true)));
}

// ONNX Runtime folds into a Conv only a constant of one value per output
// channel ([1, C, 1, 1] or [C, 1, 1]; a Mul also a rank-0 scalar), and not
// when the Add or Mul is a graph output, and the Sum input of the NCHWc
// Conv (a computed tensor of the result's shape). A folded [1, C, H, W]
// constant ran as an Add kernel of its own with reorders around it (pruned
// mobilenet_v2, docs/measurements.md).
TEST(CpuCost, OnlyAPerChannelConstantFoldsIntoAConv) {
  auto m = model("cpu-analytic");
  auto after_conv = [&](ir::Op op, std::vector<int64_t> dims, bool computed = false, bool output = false) {
    GraphBuilder b;
    auto x = b.input("x", {1, 16, 8, 8});
    auto y = b.op1(ir::Op::Conv, {x, b.weight("w", {32, 16, 1, 1})});
    auto other = computed ? b.op1(ir::Op::Conv, {x, b.weight("v", {32, 16, 1, 1})}) : b.weight("c", dims);
    auto z = b.op1(op, {y, other});
    std::vector<double> costs = node_costs(*m, b.finish({output ? z : b.op1(ir::Op::Relu, {z})}));
    return costs[costs.size() - (output ? 1 : 2)];
  };
  EXPECT_EQ(after_conv(ir::Op::Add, {1, 32, 1, 1}), 0);
  EXPECT_EQ(after_conv(ir::Op::Add, {32, 1, 1}), 0);
  EXPECT_EQ(after_conv(ir::Op::Mul, {1, 32, 1, 1}), 0);
  EXPECT_EQ(after_conv(ir::Op::Mul, {}), 0);
  EXPECT_EQ(after_conv(ir::Op::Add, {}, true), 0);
  for (auto [op, dims] : std::vector<std::pair<ir::Op, std::vector<int64_t>>>{{ir::Op::Add, {1, 32, 8, 8}},
                                                                              {ir::Op::Add, {}},
                                                                              {ir::Op::Add, {1, 1, 1, 1}},
                                                                              {ir::Op::Add, {1, 32, 1, 8}},
                                                                              {ir::Op::Mul, {1, 32, 8, 8}},
                                                                              {ir::Op::Div, {1, 32, 1, 1}}})
    EXPECT_GT(after_conv(op, dims), m->spec().op_overhead_s) << ir::op_name(op) << " " << dims.size();
  EXPECT_GT(after_conv(ir::Op::Add, {1, 32, 1, 1}, false, true), m->spec().op_overhead_s);
  EXPECT_GT(after_conv(ir::Op::Mul, {}, false, true), m->spec().op_overhead_s);
}

// A Transpose that swaps a MatMul operand's last two axes, read by the
// MatMul alone, runs no kernel: ONNX Runtime folds it into a FusedMatMul
// (MatmulTransposeFusion), a GPU or TPU GEMM reads its operand transposed.
// Another permutation, or a second reader, keeps it a kernel.
TEST(Cost, ATransposeOfAMatMulOperandRunsNoKernel) {
  // q [2, 16, 8] by Transpose(k) with k [2, 16, 8] (perm [0, 2, 1]), or by
  // k [8, 2, 16] as [2, 8, 16] (perm [1, 0, 2]).
  auto transposed = [](bool swap_last, bool second_reader) {
    GraphBuilder b;
    ir::Attributes at;
    at.set("perm", swap_last ? std::vector<int64_t>{0, 2, 1} : std::vector<int64_t>{1, 0, 2});
    auto k = b.input("k", swap_last ? std::vector<int64_t>{2, 16, 8} : std::vector<int64_t>{8, 2, 16});
    auto kt = b.op1(ir::Op::Transpose, {k}, at);
    auto y = b.op1(ir::Op::MatMul, {b.input("q", {2, 16, 8}), kt});
    return second_reader ? b.finish({y, kt}) : b.finish({y});
  };
  for (const char* name : {"cpu", "cpu-analytic", "gpu", "tpu"}) {
    auto m = model(name);
    EXPECT_EQ(node_costs(*m, transposed(true, false))[0], 0) << name;
    EXPECT_GT(node_costs(*m, transposed(true, true))[0], 0) << name;
    EXPECT_GT(node_costs(*m, transposed(false, false))[0], 0) << name;
  }
}

TEST(CpuCost, BigGemmsAreMoreEfficientPerFlop) {
  auto m = model("cpu-analytic");
  double small = graph_cost(*m, one_matmul(16, 16, 16)) / (2.0 * 16 * 16 * 16);
  double big = graph_cost(*m, one_matmul(512, 512, 512)) / (2.0 * 512 * 512 * 512);
  EXPECT_LT(big, small / 4);
  // A 512^3 GEMM runs at a realistic fraction of the core's peak.
  double gflops = 2.0 * 512 * 512 * 512 / graph_cost(*m, one_matmul(512, 512, 512)) / 1e9;
  EXPECT_GT(gflops, 30);
  EXPECT_LT(gflops, 78.4);
}

// ARCHITECTURE.md decision 11: a batched MatMul written as an einsum is the
// same work and costs the same on every analytic target (the learned cpu
// model: at least the same, below).
TEST(Cost, AnEinsumCostsAsTheMatMulItIs) {
  auto batched = [](bool as_einsum) {
    GraphBuilder b;
    auto x = b.input("x", {4, 64, 32});
    auto w = b.input("w", {4, 32, 48});
    ir::Attributes eq;
    eq.set("equation", std::string("bij,bjk->bik"));
    return b.finish({as_einsum ? b.op1(ir::Op::Einsum, {x, w}, eq) : b.op1(ir::Op::MatMul, {x, w})});
  };
  for (const char* name : {"cpu-analytic", "gpu", "tpu"}) {
    auto m = model(name);
    EXPECT_DOUBLE_EQ(graph_cost(*m, batched(true)), graph_cost(*m, batched(false))) << name;
  }
  // ONNX Runtime runs the Einsum 1.03-1.22x its MatMul (docs/measurements.md,
  // session 21): the learned model, trained on its timings, prices it at
  // least as the MatMul, so that extraction never trades a MatMul for it.
  auto learned = model("cpu");
  EXPECT_GE(graph_cost(*learned, batched(true)), graph_cost(*learned, batched(false)));
}

TEST(Cost, ConstantExpressionsAreFree) {
  for (const char* t : {"cpu", "cpu-analytic", "gpu", "tpu"}) {
    auto m = model(t);
    GraphBuilder b;
    auto w = b.weight("w", {512, 512});
    auto w2 = b.op1(ir::Op::Mul, {w, b.weight("s", {1})});
    auto x = b.input("x", {8, 512});
    ir::Graph g = b.finish({b.op1(ir::Op::MatMul, {x, w2})});
    std::vector<double> c = node_costs(*m, g);
    EXPECT_EQ(c[0], 0) << t;
    EXPECT_GT(c[1], 0) << t;
  }
}

TEST(Cost, MultiResultOpsShareTheirFixedCost) {
  auto m = model("cpu-analytic");
  GraphBuilder b;
  auto x = b.input("x", {64, 512});
  auto parts = b.op(ir::Op::Split, {x, b.ints("s", {256, 256})}, axis(1), 2);
  ir::Graph g = b.finish({parts[0], parts[1]});
  double two = graph_cost(*m, g);
  EXPECT_GT(two, m->spec().op_overhead_s);
  EXPECT_LT(two, 2 * m->spec().op_overhead_s + 1e-5);
}

}  // namespace
}  // namespace refinery::targets
