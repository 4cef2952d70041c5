// The learned CPU cost model's parts: the kernels ONNX Runtime forms (a
// fused epilogue joins its producer), a kernel cut out as a micro-model with
// its shapes varied, deterministic training, and the shipped model pricing
// as the timings it was trained on say (bigger work costs more; views are
// free; the run overhead is counted once), chosen with --cost-model.
#include <gtest/gtest.h>

#include <unistd.h>
#include <xgboost/c_api.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "targets/cost_model.h"
#include "targets/kernels.h"
#include "targets/learned.h"
#include "tests/targets/graph_builder.h"

namespace refinery::targets {
namespace {

using refinery::testing::GraphBuilder;

ir::Attributes conv_attrs(int64_t k) {
  ir::Attributes a;
  a.set("kernel_shape", std::vector<int64_t>{k, k});
  a.set("pads", std::vector<int64_t>{k / 2, k / 2, k / 2, k / 2});
  return a;
}

// x -> Conv(3x3) -> Relu -> Reshape -> MatMul -> Add(bias)
ir::Graph conv_relu_matmul_add(int64_t channels, int64_t size) {
  GraphBuilder b;
  auto x = b.input("x", {1, channels, size, size});
  auto c = b.op1(ir::Op::Conv, {x, b.weight("w", {channels, channels, 3, 3}), b.weight("b", {channels})}, conv_attrs(3));
  auto r = b.op1(ir::Op::Relu, {c});
  auto flat = b.op1(ir::Op::Reshape, {r, b.ints("shape", {1, channels * size * size})});
  auto m = b.op1(ir::Op::MatMul, {flat, b.weight("fc", {channels * size * size, 10})});
  return b.finish({b.op1(ir::Op::Add, {m, b.weight("fcb", {10})})});
}

TEST(Kernels, EpiloguesJoinTheKernelTheyFuseInto) {
  ir::Graph g = conv_relu_matmul_add(8, 16);
  std::vector<Kernel> ks = ort_cpu_kernels(g);
  ASSERT_EQ(ks.size(), 2u);  // Conv+Relu, MatMul+Add; the Reshape is a view
  EXPECT_EQ(ks[0].nodes, (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(ks[1].nodes, (std::vector<std::size_t>{3, 4}));
}

TEST(Kernels, AKernelAsAMicroModelWithVariedShapes) {
  ir::Graph g = conv_relu_matmul_add(8, 16);
  auto micro = kernel_graph(g, ort_cpu_kernels(g)[0], {.batch = 2, .spatial = 0.5});
  ASSERT_TRUE(micro.has_value()) << micro.error().str();
  ASSERT_EQ(micro->num_nodes(), 2u);
  ASSERT_EQ(micro->inputs().size(), 1u);
  EXPECT_EQ(micro->constants().size(), 2u);  // the weights and the bias
  EXPECT_EQ(micro->value(micro->outputs()[0]).type.shape, ir::Shape::of({2, 8, 8, 8}));
  // The MatMul's input [1, 2048] has no spatial dims; its batch dim grows.
  auto mm = kernel_graph(g, ort_cpu_kernels(g)[1], {.batch = 3, .spatial = 0.5});
  ASSERT_TRUE(mm.has_value()) << mm.error().str();
  EXPECT_EQ(mm->value(mm->outputs()[0]).type.shape, ir::Shape::of({3, 10}));
  // A Reshape to a fixed shape does not fit a bigger batch.
  GraphBuilder b;
  auto x = b.input("x", {2, 8});
  ir::Graph r = b.finish({b.op1(ir::Op::Relu, {b.op1(ir::Op::Reshape, {x, b.ints("s", {4, 4})})})});
  EXPECT_FALSE(kernel_graph(r, Kernel{{0}}, {.batch = 2, .spatial = 1}).has_value());
}

// ONNX Runtime's optimized graph of x -> MatMul -> Add(bias, 3-D) -> Softmax
// -> Relu as its profiler names it: MatMul and Add fused into one kernel
// that computes the Add's result, the Softmax on an NCHWc-style path (a
// kernel named "<value>_nchwc" and a ReorderOutput restoring the value),
// the Relu as it was.
TEST(Kernels, InContextTimesShareEachProfiledKernelAmongItsNodes) {
  GraphBuilder b;
  auto x = b.input("x", {1, 16, 64});
  auto m = b.op1(ir::Op::MatMul, {x, b.weight("w", {64, 64})});
  auto a = b.op1(ir::Op::Add, {m, b.weight("b", {64})});
  ir::Graph g = b.finish({b.op1(ir::Op::Relu, {b.op1(ir::Op::Softmax, {a})})});
  ASSERT_EQ(g.value(a).name, "v1");
  ir::Graph opt;
  ir::ValueId v = opt.add_input("x", g.value(x).type);
  for (auto [name, out] :
       {std::pair{"MatMulAddFusion", "v1"}, {"v2_nchwc", "reorder_token_0"}, {"ReorderOutput", "v2"}, {"relu", "v3"}}) {
    ir::Node n;
    n.name = name;
    n.op_type = "Fused";
    n.inputs = {v};
    v = opt.node(opt.add_node(std::move(n), {out}, {g.value(x).type})).outputs[0];
  }
  std::vector<ProfiledKernel> profile{
      {"MatMulAddFusion", 30}, {"v2_nchwc", 8}, {"ReorderOutput", 2}, {"relu", 10}, {"NotInTheGraph", 5}};
  auto baseline = learned_baseline(*find_spec("cpu"));
  // The matched kernels sum to 50 us; the run took 46: 1 us less per kernel.
  auto t = in_context_times(g, opt, profile, 0.046, *baseline);
  ASSERT_TRUE(t.has_value()) << t.error().str();
  EXPECT_EQ(t->kernels, 5u);
  EXPECT_EQ(t->unmatched, 1u);
  EXPECT_NEAR(t->dispatch_ms, -0.001, 1e-9);
  ASSERT_EQ(t->ms.size(), 4u);
  EXPECT_NEAR(t->ms[0] + t->ms[1], 0.029, 1e-9);  // MatMul and Add: one kernel
  EXPECT_GT(t->ms[0], t->ms[1]);                  // shared by their work
  EXPECT_NEAR(t->ms[2], 0.008, 1e-9);             // Softmax: its kernel and the reorder
  EXPECT_NEAR(t->ms[3], 0.009, 1e-9);
  EXPECT_EQ(t->scale, 1);
  // A run shorter than the kernels' floors cannot be shared.
  EXPECT_FALSE(in_context_times(g, opt, profile, 1e-5, *baseline).has_value());
  // Profiled at twice the run (wall time under load): 5 ms of matched
  // kernels for a 2.5 ms run. A constant per kernel (-0.625 ms) would leave
  // the Softmax at the floor; at most 0.02 ms per kernel is taken, the
  // rest by scaling every kernel: 5 s - 4 * 0.02 = 2.5, s = 0.516.
  std::vector<ProfiledKernel> loaded{{"MatMulAddFusion", 3000}, {"v2_nchwc", 800}, {"ReorderOutput", 200},
                                     {"relu", 1000}};
  t = in_context_times(g, opt, loaded, 2.5, *baseline);
  ASSERT_TRUE(t.has_value()) << t.error().str();
  EXPECT_NEAR(t->dispatch_ms, -kMaxDispatchMs, 1e-12);
  EXPECT_NEAR(t->scale, 0.516, 1e-9);
  EXPECT_NEAR(t->ms[0] + t->ms[1], 1.528, 1e-9);
  EXPECT_NEAR(t->ms[2], 0.476, 1e-9);
  EXPECT_NEAR(t->ms[3], 0.496, 1e-9);
  // A node the file leaves unnamed (refinery's extractions): ORT's profile
  // and saved graph name it "<op type>_<index>" and not at all.
  GraphBuilder u;
  ir::Graph unnamed = u.finish({u.op1(ir::Op::Relu, {u.op1(ir::Op::Softmax, {u.input("x", {1, 64})})})});
  ASSERT_TRUE(unnamed.nodes()[1].name.empty());
  ir::Graph saved;
  saved.add_input("x", unnamed.value(unnamed.inputs()[0]).type);
  t = in_context_times(unnamed, saved, {{"Softmax_0", 6}, {"Relu_1", 4}}, 0.010, *baseline);
  ASSERT_TRUE(t.has_value()) << t.error().str();
  EXPECT_EQ(t->unmatched, 0u);
  EXPECT_NEAR(t->ms[0], 0.006, 1e-9);
  EXPECT_NEAR(t->ms[1], 0.004, 1e-9);
  // The profile to CPU time: between the runs' CPU per wall (every kernel's
  // median counted the others' time) and 1 (none did), the factor that makes
  // the kernels sum to the run. bert_encoder at load ~4: 8.847 ms of
  // kernels, a run of 8.257 ms of CPU, the runs at 0.482 CPU per wall.
  EXPECT_NEAR(profile_cpu_factor(8.847, 8.257, 0.482), 8.257 / 8.847, 1e-12);
  EXPECT_EQ(profile_cpu_factor(140, 60, 0.5), 0.5);     // long kernels, all preempted: the runs' figure
  EXPECT_EQ(profile_cpu_factor(0.75, 0.13, 1.0), 1.0);  // the profiler's own cost: in_context_times's dispatch
  EXPECT_EQ(profile_cpu_factor(5, 6, 0.5), 1.0);
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Learned, TrainingIsDeterministicAndLearnsTheTrend) {
  // Latency = 1 us per 1000 FLOPs plus 2 us: the model must order sizes.
  std::vector<Sample> samples;
  for (int i = 0; i < 200; ++i) {
    Sample s;
    double flops = 1000.0 * (1 + i * 37 % 500);
    s.features[0] = static_cast<float>(i % 3);
    s.features[2] = static_cast<float>(std::log2(1 + flops));
    s.ms = 2e-3 + flops / 1e6;
    samples.push_back(s);
  }
  auto dir = std::filesystem::temp_directory_path() / ("refinery_learned_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(train_cost_model(samples, 0.01, 0, dir / "a.ubj").has_value());
  ASSERT_TRUE(train_cost_model(samples, 0.01, 0, dir / "b.ubj").has_value());
  EXPECT_EQ(slurp(dir / "a.ubj"), slurp(dir / "b.ubj"));
  auto booster = Booster::load(dir / "a.ubj");
  ASSERT_TRUE(booster.has_value()) << booster.error().str();
  EXPECT_DOUBLE_EQ((*booster)->run_overhead_ms(), 0.01);
  // The kernel dispatch, when measured, is stored and is the least a kernel
  // costs (else the spec's op_overhead_s, 1.5 us): a one-element Relu.
  EXPECT_EQ((*booster)->kernel_dispatch_ms(), 0);
  ASSERT_TRUE(train_cost_model(samples, 0.01, 0.05, dir / "d.ubj", {.rounds = 10}).has_value());
  auto with_dispatch = Booster::load(dir / "d.ubj");
  ASSERT_TRUE(with_dispatch.has_value()) << with_dispatch.error().str();
  EXPECT_DOUBLE_EQ((*with_dispatch)->kernel_dispatch_ms(), 0.05);
  {
    GraphBuilder b;
    ir::Graph relu = b.finish({b.op1(ir::Op::Relu, {b.input("x", {1})})});
    auto measured = make_learned_cpu_model(*find_spec("cpu"), dir / "d.ubj");
    auto spec_floor = make_learned_cpu_model(*find_spec("cpu"), dir / "a.ubj");
    ASSERT_TRUE(measured.has_value() && spec_floor.has_value());
    EXPECT_DOUBLE_EQ(graph_cost(**measured, relu), 50e-6);
    EXPECT_LT(graph_cost(**spec_floor, relu), 50e-6);
    EXPECT_GE(graph_cost(**spec_floor, relu), 1.5e-6);
  }
  Features small{}, big{};
  small[2] = static_cast<float>(std::log2(1 + 5e3));
  big[2] = static_cast<float>(std::log2(1 + 4e5));
  std::vector<double> p = (*booster)->predict_ms({small, big});
  EXPECT_NEAR(p[0], 7e-3, 2e-3);
  EXPECT_NEAR(p[1], 0.402, 0.06);
  EXPECT_FALSE(train_cost_model({samples.begin(), samples.begin() + 3}, 0, 0, dir / "c.ubj").has_value());
  EXPECT_FALSE(Booster::load(dir / "missing.ubj").has_value());
  // A model of other features (trained before they changed) is refused.
  std::vector<float> x(10 * 3, 1.0f), y(10, 1.0f);
  for (int i = 0; i < 10; ++i)
    x[static_cast<std::size_t>(i) * 3] = static_cast<float>(i), y[static_cast<std::size_t>(i)] = static_cast<float>(i);
  DMatrixHandle dm = nullptr;
  BoosterHandle other = nullptr;
  ASSERT_EQ(XGDMatrixCreateFromMat(x.data(), 10, 3, NAN, &dm), 0);
  ASSERT_EQ(XGDMatrixSetFloatInfo(dm, "label", y.data(), y.size()), 0);
  ASSERT_EQ(XGBoosterCreate(&dm, 1, &other), 0);
  ASSERT_EQ(XGBoosterUpdateOneIter(other, 0, dm), 0);
  ASSERT_EQ(XGBoosterSetAttr(other, "run_overhead_ms", "0.01"), 0);
  ASSERT_EQ(XGBoosterSaveModel(other, (dir / "other.ubj").c_str()), 0);
  XGBoosterFree(other);
  XGDMatrixFree(dm);
  auto refused = Booster::load(dir / "other.ubj");
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().str().find("reads 3 features"), std::string::npos) << refused.error().str();
  // As is one of these features in their form from before the canonical
  // forms (kernel_features): a model written without kFeatureForm.
  BoosterHandle old = nullptr;
  ASSERT_EQ(XGBoosterCreate(nullptr, 0, &old), 0);
  ASSERT_EQ(XGBoosterLoadModel(old, (dir / "a.ubj").c_str()), 0);
  ASSERT_EQ(XGBoosterSetAttr(old, "feature_form", nullptr), 0);
  ASSERT_EQ(XGBoosterSaveModel(old, (dir / "old.ubj").c_str()), 0);
  XGBoosterFree(old);
  refused = Booster::load(dir / "old.ubj");
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().str().find("before canonical forms"), std::string::npos) << refused.error().str();
  std::filesystem::remove_all(dir);
}

// XGBoost runs on OpenMP: without its regions kept to one thread, loading
// the model started a team whose idle thread spun after each region
// (optimize 1.3x slower with the learned model). Loading and predicting
// start no thread. (ctest runs each test in a process of its own.)
TEST(Learned, LoadingAndPredictingStartNoThread) {
  auto threads = [] {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
    return n;
  };
  const std::size_t before = threads();
  auto t = load_target("cpu", "learned");
  ASSERT_TRUE(t.has_value()) << t.error().str();
  ir::Graph g = conv_relu_matmul_add(8, 16);
  EXPECT_GT(graph_cost(*t->model, g), 0);
  EXPECT_EQ(threads(), before);
}

TEST(Learned, TheShippedCpuModelPricesKernelsByTheirWork) {
  auto t = load_target("cpu", "learned");
  ASSERT_TRUE(t.has_value()) << t.error().str();
  EXPECT_GT(t->model->run_overhead(), 0);
  ir::Graph small = conv_relu_matmul_add(8, 16), big = conv_relu_matmul_add(64, 56);
  std::vector<double> costs = node_costs(*t->model, small);
  EXPECT_GT(costs[0], 0);         // the Conv
  EXPECT_EQ(costs[2], 0);         // the Reshape: a view
  EXPECT_GT(graph_cost(*t->model, big), 10 * graph_cost(*t->model, small));
  // A 64-channel 3x3 Conv at 56x56 (231 MFLOP) runs in milliseconds on one core, not micro- or seconds.
  double conv = node_costs(*t->model, big)[0];
  EXPECT_GT(conv, 5e-4);
  EXPECT_LT(conv, 5e-2);
  // Every kernel it prices costs at least the dispatch, however small (the
  // small ops of vit_tiny's learned extraction, priced 0.2-1 us before):
  // the kernel dispatch measured with its dataset (a chain of Adds) where
  // the model stores one (the shipped model does), else the spec's (a
  // model trained before the dispatch was measured).
  auto shipped = Booster::load(learned_model_file(t->model->spec()));
  ASSERT_TRUE(shipped.has_value()) << shipped.error().str();
  const double dispatch_s = (*shipped)->kernel_dispatch_ms() > 0 ? (*shipped)->kernel_dispatch_ms() * 1e-3
                                                                  : t->model->spec().op_overhead_s;
  for (ir::Op op : {ir::Op::Relu, ir::Op::Sub, ir::Op::Mul, ir::Op::Gather}) {
    GraphBuilder tiny;
    auto x = tiny.input("x", {1, 3, 8});
    auto y = op == ir::Op::Relu     ? tiny.op1(op, {x})
             : op == ir::Op::Gather ? tiny.op1(op, {x, tiny.ints("i", {0})})
                                    : tiny.op1(op, {x, tiny.input("y", {1, 3, 8})});
    EXPECT_GE(node_costs(*t->model, tiny.finish({y}))[0], dispatch_s) << ir::op_name(op);
  }
  // A Gemm's constant C is its epilogue: the same kernel with and without it
  // (attn_2d's q/k/v projections, which extraction split into Gemm + Add).
  auto gemm = [&](bool with_c) {
    GraphBuilder b;
    ir::Attributes trans_b;
    trans_b.set("transB", int64_t{1});
    std::vector<ir::ValueId> in{b.input("a", {1, 64}), b.weight("w", {64, 64})};
    if (with_c) in.push_back(b.weight("c", {64}));
    return graph_cost(*t->model, b.finish({b.op1(ir::Op::Gemm, in, trans_b)}));
  };
  EXPECT_EQ(gemm(true), gemm(false));
  // com.microsoft Attention, which no zoo model has (the trees never saw it),
  // is priced as the kernels of its decomposition (attention_parts), less the
  // dispatches of all but one: bert_encoder's, hidden 256 in 4 heads.
  {
    GraphBuilder b;
    ir::Attributes heads;
    heads.set("num_heads", int64_t{4});
    auto x = b.input("x", {1, 64, 256});
    ir::Graph fused =
        b.finish({b.op1(ir::Op::MsAttention, {x, b.weight("w", {256, 768}), b.weight("bias", {768})}, heads)});
    GraphBuilder d;
    auto packed = d.op1(ir::Op::MatMul, {d.input("x", {1, 64, 256}), d.weight("w", {256, 768})});
    auto q = d.input("q", {1, 4, 64, 64});
    auto scores = d.op1(ir::Op::Softmax, {d.op1(ir::Op::MatMul, {q, d.input("kt", {1, 4, 64, 64})})});
    ir::Graph parts = d.finish({packed, d.op1(ir::Op::MatMul, {scores, q})});
    EXPECT_NEAR(graph_cost(*t->model, fused), graph_cost(*t->model, parts) - 3 * dispatch_s, 1e-12);
  }
  // cpu-analytic is the analytic model (target_test.cpp: which target gets which model).
  auto analytic = load_target("cpu-analytic");
  ASSERT_TRUE(analytic.has_value());
  EXPECT_EQ(analytic->model->run_overhead(), 0);
  EXPECT_NE(graph_cost(*analytic->model, big), graph_cost(*t->model, big));
  // --cost-model is only for a cpu target; a missing file is an error.
  EXPECT_FALSE(load_target("gpu", "learned").has_value());
  EXPECT_FALSE(load_target("cpu", "/nonexistent/cpu.ubj").has_value());
}

// Ops the trees saw in few records, priced as ONNX Runtime runs them
// (docs/measurements.md, session 22): a BatchNormalization that no Conv
// folds (densenet's, after a Concat) is one per-channel pass, cheaper than
// its Mul + Add form (ORT: 1.3-1.7x); Max of x and a scalar is ReLU's work
// in a binary kernel (ORT: 1.07-1.14x the ReLU). Priced the other way round,
// extraction split densenet121's BatchNorms and ReLUs: 0.89x under ORT.
TEST(Learned, AStandaloneBatchNormIsOnePassAndMaxIsNoCheaperThanReLU) {
  auto t = load_target("cpu", "learned");
  ASSERT_TRUE(t.has_value()) << t.error().str();
  for (auto [channels, side] : std::vector<std::pair<int64_t, int64_t>>{{64, 56}, {96, 56}, {256, 28}, {1024, 7}}) {
    auto priced = [&](int form) {
      GraphBuilder b;
      auto x = b.input("x", {1, channels, side, side});
      ir::ValueId y;
      if (form == 0) {
        y = b.op1(ir::Op::BatchNormalization, {x, b.weight("s", {channels}), b.weight("b", {channels}),
                                              b.weight("m", {channels}), b.weight("v", {channels})});
      } else if (form == 1) {
        y = b.op1(ir::Op::Add, {b.op1(ir::Op::Mul, {x, b.weight("k", {1, channels, 1, 1})}),
                                b.weight("c", {1, channels, 1, 1})});
      } else if (form == 2) {
        y = b.op1(ir::Op::Relu, {x});
      } else {
        y = b.op1(ir::Op::Max, {x, b.weight("zero", {})});
      }
      return graph_cost(*t->model, b.finish({y}));
    };
    EXPECT_LT(priced(0), priced(1)) << channels;
    EXPECT_GE(priced(3), priced(2)) << channels;
  }
}

}  // namespace
}  // namespace refinery::targets
