// The pipeline on small graphs with small rule sets: it refines, folds the
// constant expressions it creates, validates, keeps the original when
// nothing is cheaper, refuses a wrong rule naming the first diverging value,
// and reports the rules used, from the e-graph's explanations.
#include <array>
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "frontends/onnx.h"
#include "ir/io.h"
#include "ir/text.h"
#include "optimize/optimize.h"
#include "tests/optimize/pruned.h"
#include "tests/targets/graph_builder.h"

namespace refinery::optimize {
namespace {

using refinery::testing::GraphBuilder;

rules::RuleSet rule_set(const char* text) {
  auto set = rules::parse_rules(text, "test.rules");
  EXPECT_TRUE(set.has_value()) << set.error().str();
  return set ? std::move(*set) : rules::RuleSet{};
}

const char* kReluRelu = "(rule relu-relu (relu (relu ?x)) => (relu ?x))";
// Wrong on purpose: validation must catch it.
const char* kWrongReluIsIdentity = "(rule relu-is-identity (relu ?x) => ?x)";
const char* kMergeMatMuls = R"(
(rule merge-parallel-matmuls
  ?y1 = (matmul ?x ?w1) ?y2 = (matmul ?x ?w2)
  => ?y1 = (split :axis -1 :out 0 :nout 2 (matmul ?x (concat :axis -1 ?w1 ?w2)) ?s)
     ?y2 = (split :axis -1 :out 1 :nout 2 (matmul ?x (concat :axis -1 ?w1 ?w2)) ?s)
  :when ((rank ?w1 2) (rank ?w2 2) (constant ?w1) (constant ?w2) (different ?y1 ?y2))
  :let ((?s (split-sizes ?w1 ?w2 -1)))))";

targets::Target target(const char* name) {
  auto t = targets::load_target(name);
  EXPECT_TRUE(t.has_value());
  return *t;
}

ir::Graph relu_chain() {
  GraphBuilder b;
  auto x = b.input("x", {4, 64});
  auto r1 = b.op1(ir::Op::Relu, {x});
  auto r2 = b.op1(ir::Op::Relu, {r1});
  auto r3 = b.op1(ir::Op::Relu, {r2});
  return b.finish({b.op1(ir::Op::Add, {r3, x})});
}

ir::Graph two_matmuls() {
  GraphBuilder b;
  auto x = b.input("x", {16, 128});
  // Distinct weights, so that the merge is not a no-op.
  std::vector<float> v1(128 * 96), v2(128 * 64);
  for (size_t i = 0; i < v1.size(); ++i) v1[i] = static_cast<float>((i * 7) % 13) / 13.f - 0.5f;
  for (size_t i = 0; i < v2.size(); ++i) v2[i] = static_cast<float>((i * 5) % 11) / 11.f - 0.5f;
  auto w1 = b.graph().add_constant(
      "w1", std::make_shared<const ir::Tensor>(ir::Tensor::from_values<float>(ir::DType::f32, {128, 96}, v1)));
  auto w2 = b.graph().add_constant(
      "w2", std::make_shared<const ir::Tensor>(ir::Tensor::from_values<float>(ir::DType::f32, {128, 64}, v2)));
  auto y1 = b.op1(ir::Op::MatMul, {x, w1});
  auto y2 = b.op1(ir::Op::MatMul, {x, w2});
  return b.finish({b.op1(ir::Op::Relu, {y1}), b.op1(ir::Op::Tanh, {y2})});
}

OptimizeResult run(const ir::Graph& g, const char* rules, const char* t = "cpu") {
  auto r = optimize(g, rule_set(rules), target(t), OptimizeOptions{});
  EXPECT_TRUE(r.has_value()) << r.error().str();
  return std::move(*r);
}

TEST(Pipeline, RemovesRedundantRelusAndSaysWhichRuleDidIt) {
  ir::Graph g = relu_chain();
  OptimizeResult r = run(g, kReluRelu);
  EXPECT_TRUE(r.changed());
  EXPECT_TRUE(r.valid());
  EXPECT_EQ(r.report.outcome, Outcome::Optimized);
  EXPECT_EQ(r.report.ops_after.at("Relu"), 1);
  EXPECT_LT(r.report.cost_after, r.report.cost_before);
  EXPECT_GT(r.report.saturation.rules_fired.at("relu-relu"), 0u);
  ASSERT_TRUE(r.report.validation.has_value());
  EXPECT_EQ(r.report.validation->max_abs_error, 0);
  EXPECT_EQ(r.report.saturation.stop_reason.kind, egraph::StopKind::Saturated);
  // relu-relu adds no node (relu(x) is there already): it only unites
  // classes, and the explanations still credit it.
  EXPECT_EQ(r.report.extraction.rules_used.count("relu-relu"), 1u);
  ASSERT_EQ(r.report.extraction.explanations.size(), 2u);  // relu(r1) and relu(r2) are now relu(x)
  for (const ValueExplanation& e : r.report.extraction.explanations) {
    ASSERT_FALSE(e.steps.empty()) << e.value;
    for (const std::string& step : e.steps) EXPECT_TRUE(step.starts_with("relu-relu")) << step;
  }
}

// A caller fetches outputs by name: the refined graph has the original's,
// whatever value now computes each (a renamed new node, or an Identity on an
// input, on another output, or on an original value keeping its own name).
TEST(Pipeline, TheRefinedGraphKeepsEveryOutputsName) {
  auto g = ir::parse_graph(R"(graph @main(%x: tensor<4x64xf32>) attributes {ir_version = 8, opsets = {"" = 17}} {
  %a = relu(%x) : tensor<4x64xf32>
  %b = relu(%a) : tensor<4x64xf32>
  %c = identity(%x) : tensor<4x64xf32>
  %d = sigmoid(%x) : tensor<4x64xf32>
  %e = relu(%d) : tensor<4x64xf32>
  %f = relu(%e) : tensor<4x64xf32>
  return %a, %b, %c, %f
})");
  ASSERT_TRUE(g.has_value()) << g.error().str();
  std::string rules = std::string(kReluRelu) + "(rule identity-away (identity ?x) => ?x)";
  OptimizeResult r = run(*g, rules.c_str());
  ASSERT_TRUE(r.changed() && r.valid());
  std::vector<std::string> names;
  for (ir::ValueId v : r.graph.outputs()) names.push_back(r.graph.value(v).name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "f"}));
  EXPECT_EQ(r.report.ops_after.at("Relu"), 2);      // a and relu(d): f is e's value now
  EXPECT_EQ(r.report.ops_after.at("Identity"), 3);  // b on a, c on x, f on the original e
  EXPECT_TRUE(r.graph.verify().has_value());
}

// LayerNorm as torch exports it at opset 13 meets the library's rule
// (rules/lib/norm.rules, layer-norm-decomposed), but the nine ops are priced
// as the one LayerNormalization ONNX Runtime fuses them into when it loads
// the model (targets::fused_by_runtime), on every target: the layer_norm the
// rule makes is no cheaper, and the original is kept.
TEST(Pipeline, DecomposedLayerNormIsPricedAsTheLayerNormItIs) {
  auto g = ir::parse_graph(R"(graph @main(%x: tensor<2x5x8xf32>) attributes {ir_version = 8, opsets = {"" = 13}} {
  %g = const dense<[0.75, 0.875, 1.0, 1.125, 1.25, 1.375, 1.5, 1.625]> : tensor<8xf32>
  %b = const dense<[-0.25, -0.1875, -0.125, -0.0625, 0.0, 0.0625, 0.125, 0.1875]> : tensor<8xf32>
  %two = const dense<[2.0]> : tensor<f32>
  %eps = const dense<[1e-12]> : tensor<f32>
  %m = reduce_mean(%x) {axes = [-1]} : tensor<2x5x1xf32>
  %d = sub(%x, %m) : tensor<2x5x8xf32>
  %p = pow(%d, %two) : tensor<2x5x8xf32>
  %v = reduce_mean(%p) {axes = [-1]} : tensor<2x5x1xf32>
  %ve = add(%v, %eps) : tensor<2x5x1xf32>
  %s = sqrt(%ve) : tensor<2x5x1xf32>
  %n = div(%d, %s) : tensor<2x5x8xf32>
  %sc = mul(%n, %g) : tensor<2x5x8xf32>
  %y = add(%sc, %b) : tensor<2x5x8xf32>
  return %y
})");
  ASSERT_TRUE(g.has_value()) << g.error().str();
  auto text = ir::read_file(std::string(REFINERY_SOURCE_DIR) + "/rules/lib/norm.rules");
  ASSERT_TRUE(text.has_value()) << text.error().str();
  for (const char* t : {"cpu", "gpu"}) {
    OptimizeResult r = run(*g, text->c_str(), t);
    EXPECT_EQ(r.report.outcome, Outcome::KeptOriginal) << t << ": " << r.report.reason;
    EXPECT_GT(r.report.saturation.rules_fired.at("layer-norm-decomposed"), 0u) << t;
    EXPECT_GT(r.report.cost_before, 0) << t;
    EXPECT_EQ(r.report.cost_after, r.report.cost_before) << t;
  }
}

// A model read at opset 13 (the lowest the reader takes) is written at 13:
// every op a library rule makes is then defined at 13 or written as older
// ops by export. HardSwish (14) was not: x * hard_sigmoid(x), torch's
// opset-13 Hardswish, became a HardSwish that the checker refused.
TEST(Pipeline, EveryOpTheLibraryMakesCanBeWrittenAtOpset13) {
  auto lib = rules::load_library();
  ASSERT_TRUE(lib.has_value()) << lib.error().str();
  std::set<std::string> unwritable;
  for (const rules::Rule& r : lib->rules())
    for (ir::Op op : rules::ops_made(r))
      if (ir::op_info(op).onnx_domain.empty() && !ir::op_info(op).onnx_name.starts_with("nir.") &&  // NIR: never in ONNX
          !frontends::onnx_can_write(op, 13))
        unwritable.insert(fmt::format("{} ({})", ir::op_name(op), r.name));
  EXPECT_EQ(unwritable, std::set<std::string>{});
  EXPECT_FALSE(frontends::onnx_can_write(ir::Op::Trilu, 13));  // the check can fail
  EXPECT_TRUE(frontends::onnx_can_write(ir::Op::Trilu, 14));
}

// GELU as torch exports it (nn.GELU below opset 20) meets the library's
// rule (rules/lib/activations.rules, gelu-erf), and is priced as the one
// Gelu ONNX Runtime fuses it into (targets::fused_by_runtime): the gelu the
// rule makes is no cheaper, and the original is kept.
TEST(Pipeline, TorchGeluIsPricedAsTheGeluItIs) {
  auto g = ir::parse_graph(R"(graph @main(%x: tensor<4x32xf32>) attributes {ir_version = 8, opsets = {"" = 17}} {
  %s = const dense<[1.4142135381698608]> : tensor<f32>
  %one = const dense<[1.0]> : tensor<f32>
  %half = const dense<[0.5]> : tensor<f32>
  %a = div(%x, %s) : tensor<4x32xf32>
  %e = erf(%a) : tensor<4x32xf32>
  %p = add(%e, %one) : tensor<4x32xf32>
  %q = mul(%x, %p) : tensor<4x32xf32>
  %y = mul(%q, %half) : tensor<4x32xf32>
  return %y
})");
  ASSERT_TRUE(g.has_value()) << g.error().str();
  auto text = ir::read_file(std::string(REFINERY_SOURCE_DIR) + "/rules/lib/activations.rules");
  ASSERT_TRUE(text.has_value()) << text.error().str();
  OptimizeResult r = run(*g, text->c_str());
  EXPECT_EQ(r.report.outcome, Outcome::KeptOriginal) << r.report.reason;
  EXPECT_GT(r.report.saturation.rules_fired.at("gelu-erf"), 0u);
  EXPECT_GT(r.report.cost_before, 0);
  EXPECT_EQ(r.report.cost_after, r.report.cost_before);
}

// On a chip target, an extraction that gives back the original graph keeps
// the original's mapping: its spike rates are not simulated a second time.
TEST(Pipeline, AnUnchangedSpikingGraphIsMappedOnce) {
  // Two synapse layers and a LIF (tests/nir/data/two_affines.ir); with
  // relu-relu alone, nothing rewrites it.
  auto text = ir::read_file(std::string(REFINERY_SOURCE_DIR) + "/tests/nir/data/two_affines.ir");
  ASSERT_TRUE(text.has_value()) << text.error().str();
  auto g = ir::parse_graph(*text);
  ASSERT_TRUE(g.has_value()) << g.error().str();
  OptimizeResult r = run(*g, kReluRelu, "loihi2");
  EXPECT_EQ(r.report.outcome, Outcome::KeptOriginal) << r.report.reason;
  ASSERT_TRUE(r.report.neuromorphic.has_value());
  EXPECT_EQ(r.report.neuromorphic->after.synaptic_events_per_step, r.report.neuromorphic->before.synaptic_events_per_step);
  EXPECT_GT(r.report.neuromorphic->before.synaptic_events_per_step, 0);
  std::vector<std::string> stages;
  for (const auto& [stage, s] : r.report.stage_seconds) stages.push_back(stage);
  EXPECT_EQ(std::count(stages.begin(), stages.end(), "map to cores (refined)"), 0) << fmt::format("{}", fmt::join(stages, ", "));
  EXPECT_EQ(std::count(stages.begin(), stages.end(), "map to cores"), 1) << fmt::format("{}", fmt::join(stages, ", "));
}

TEST(Pipeline, MergesParallelMatMulsAndFoldsTheConcatenatedWeights) {
  ir::Graph g = two_matmuls();
  for (const char* t : {"gpu", "h200", "tpu"}) {
    OptimizeResult r = run(g, kMergeMatMuls, t);
    ASSERT_EQ(r.report.outcome, Outcome::Optimized) << t << ": " << r.report.reason;
    EXPECT_EQ(r.report.ops_after.at("MatMul"), 1) << t;
    EXPECT_EQ(r.report.ops_after.at("Split"), 1) << t;
    EXPECT_EQ(r.report.ops_after.count("Concat"), 0u) << t;  // folded into an initializer
    EXPECT_EQ(r.report.constants_folded, 1u) << t;
    EXPECT_EQ(r.report.extraction.rules_used.count("merge-parallel-matmuls"), 1u) << t;
    ASSERT_TRUE(r.report.validation.has_value());
    EXPECT_TRUE(r.report.validation->passed) << r.report.validation->first_divergence;
    EXPECT_LT(r.report.validation->max_abs_error, 1e-4);
    // The folded weights replace w1 and w2.
    EXPECT_EQ(r.graph.constants().size(), 2u) << ir::print_graph(r.graph);  // weights and split sizes
  }
}

TEST(Pipeline, KeepsTheOriginalWhenNothingIsCheaper) {
  ir::Graph g = relu_chain();
  OptimizeResult r = run(g, "");
  EXPECT_FALSE(r.changed());
  EXPECT_EQ(r.report.outcome, Outcome::KeptOriginal);
  EXPECT_NE(r.report.reason.find("not cheaper"), std::string::npos);
  EXPECT_EQ(ir::graph_difference(g, r.graph), "");
  EXPECT_TRUE(r.report.extraction.rules_used.empty());
}

TEST(Pipeline, AWrongRewriteFailsValidationNamingTheFirstDivergingValue) {
  ir::Graph g = relu_chain();
  OptimizeResult r = run(g, kWrongReluIsIdentity);
  EXPECT_FALSE(r.valid());
  EXPECT_EQ(r.report.outcome, Outcome::ValidationFailed);
  ASSERT_TRUE(r.report.validation.has_value());
  EXPECT_FALSE(r.report.validation->passed);
  EXPECT_GT(r.report.validation->max_abs_error, 0.1);
  // All relus are gone, so the first value both graphs share that differs
  // is the add (the output).
  EXPECT_NE(r.report.reason.find("first diverging value: value '"), std::string::npos) << r.report.reason;
  EXPECT_NE(r.report.reason.find("add"), std::string::npos) << r.report.reason;
  // The f64 rounding check ran and saw the change of meaning.
  EXPECT_TRUE(r.report.validation->rounding_checked);
  EXPECT_NE(r.report.reason.find("not f32 rounding: the graphs differ in f64 too"), std::string::npos)
      << r.report.reason;
}

TEST(Pipeline, IlpExtractorGivesTheSameAnswerOnSmallGraphs) {
  ir::Graph g = two_matmuls();
  OptimizeOptions o;
  o.extractor = ExtractorKind::Ilp;
  auto r = optimize(g, rule_set(kMergeMatMuls), target("gpu"), o);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->report.outcome, Outcome::Optimized) << r->report.extraction.status;
  EXPECT_EQ(r->report.ops_after.at("MatMul"), 1);
  EXPECT_NE(r->report.extraction.status.find("optimal"), std::string::npos) << r->report.extraction.status;
}

// The guard on modelled gains: four ReLUs and three Concats become three
// Concats and one ReLU (concat-relu). The same FLOPs and bytes move, yet
// the CPU model, which charges each op its dispatch, prices it 1.75x
// cheaper: the report flags the gain as the model's.
TEST(GainGuard, FlagsAModelledGainWithTheSameWork) {
  GraphBuilder b;
  std::vector<ir::ValueId> r;
  for (int i = 0; i < 4; ++i) r.push_back(b.op1(ir::Op::Relu, {b.input("x" + std::to_string(i), {1, 8})}));
  ir::Attributes axis;
  axis.set("axis", int64_t{1});
  auto c = b.op1(ir::Op::Concat, {b.op1(ir::Op::Concat, {r[0], r[1]}, axis), b.op1(ir::Op::Concat, {r[2], r[3]}, axis)},
                 axis);
  OptimizeResult res =
      run(b.finish({c}), "(rule concat-relu (concat :axis ?ax (relu ?a) (relu ?b)) <=> (relu (concat :axis ?ax ?a ?b)))");
  const Report& rep = res.report;
  ASSERT_EQ(rep.outcome, Outcome::Optimized) << rep.reason;
  EXPECT_EQ(rep.ops_after.at("Relu"), 1);
  EXPECT_GT(rep.cost_before / rep.cost_after, kFlaggedSpeedup);
  EXPECT_GT(rep.flops_before, 0);
  EXPECT_EQ(rep.flops_before, rep.flops_after);
  EXPECT_EQ(rep.bytes_before, rep.bytes_after);
  EXPECT_TRUE(gain_from_model(rep));
  std::string json = to_json(rep);
  EXPECT_NE(json.find("\"gain_flag\": \"gain from the model, not from less work\""), std::string::npos) << json;
}

// The flag needs both: a gain over 1.5x, and FLOPs and bytes each within 1%.
TEST(GainGuard, NeedsAGainOverOneAndAHalfAndTheSameWork) {
  Report r;
  r.cost_before = 3, r.cost_after = 1;
  r.flops_before = 1e9, r.flops_after = 1e9 * 1.009;
  r.bytes_before = 4e6, r.bytes_after = 4e6 * 0.995;
  EXPECT_TRUE(gain_from_model(r));
  Report less_flops = r;
  less_flops.flops_after = 0.98e9;
  EXPECT_FALSE(gain_from_model(less_flops));
  Report less_bytes = r;
  less_bytes.bytes_after = 3.9e6;
  EXPECT_FALSE(gain_from_model(less_bytes));
  Report small_gain = r;
  small_gain.cost_after = 2.1;  // 1.43x
  EXPECT_FALSE(gain_from_model(small_gain));
  EXPECT_NE(to_json(small_gain).find("\"gain_flag\": null"), std::string::npos);
  auto cost = nlohmann::json::parse(to_json(r))["cost"];
  EXPECT_EQ(cost["flops_before"].get<double>(), r.flops_before);
  EXPECT_EQ(cost["flops_after"].get<double>(), r.flops_after);
  EXPECT_EQ(cost["bytes_before"].get<double>(), r.bytes_before);
  EXPECT_EQ(cost["bytes_after"].get<double>(), r.bytes_after);
  EXPECT_EQ(cost["gain_flag"].get<std::string>(), kGainFromModel);
}


// One attribute, for the nodes the attention tests build.
ir::Attributes attr(const char* name, ir::AttrValue v) {
  ir::Attributes a;
  a.set(name, std::move(v));
  return a;
}

// A packed projection (a fused QKV Linear): x [B, S, H] times w [H, 3H]
// plus c (added first where `bias_first`, as torch's baddbmm-era exports
// write it), split in three, each part viewed as heads [B, h, S, H / h]:
// Reshape to [0, 0, h, H / h], Transpose [0, 2, 1, 3], K's by `k_perm`.
std::array<ir::ValueId, 3> packed_heads(GraphBuilder& b, ir::ValueId x, int64_t hidden, int64_t heads,
                                        bool bias_first = false, std::vector<int64_t> k_perm = {0, 2, 1, 3}) {
  auto w = pruned::filled(b, "w", {hidden, 3 * hidden}, 10);
  auto c = pruned::filled(b, "c", {3 * hidden}, 11);
  auto xw = b.op1(ir::Op::MatMul, {x, w});
  auto qkv = b.op1(ir::Op::Add, bias_first ? std::vector<ir::ValueId>{c, xw} : std::vector<ir::ValueId>{xw, c});
  auto parts = b.op(ir::Op::Split, {qkv, b.ints("sizes", {hidden, hidden, hidden})}, attr("axis", int64_t{-1}), 3);
  std::array<ir::ValueId, 3> out;
  for (size_t i = 0; i < 3; ++i) {
    auto r = b.op1(ir::Op::Reshape, {parts[i], b.ints("heads" + std::to_string(i), {0, 0, heads, hidden / heads})});
    out[i] = b.op1(ir::Op::Transpose, {r}, attr("perm", i == 1 ? k_perm : std::vector<int64_t>{0, 2, 1, 3}));
  }
  return out;
}

// `r` computes its attention as one ONNX Runtime Attention, by `rule`, with
// no Softmax left.
void expect_one_attention(const OptimizeResult& r, const char* rule) {
  EXPECT_EQ(r.report.ops_after.count("Attention") ? r.report.ops_after.at("Attention") : 0, 1)
      << ir::print_graph(r.graph);
  EXPECT_EQ(r.report.extraction.rules_used.count(rule), 1u)
      << fmt::format("{}", fmt::join(r.report.extraction.rules_used, ", "));
  EXPECT_EQ(r.report.ops_after.count("Softmax"), 0u);
}

// peft's LoRA form, x W + b + ((x A) B) s: one MatMul by W + s A B, with
// both cpu models. By lowrank-merge-bias with the analytic model; the
// learned one prices a Sub below the Add of the same operands (its labels'
// law is counted, not held: docs/targets.md) and writes the bias as the Sub
// of its negation, whichever merge rule made the product.
TEST(Pipeline, AnUnmergedLoraAdapterBecomesOneMatMul) {
  GraphBuilder b;
  auto x = b.input("x", {2, 16, 64});
  auto w = pruned::filled(b, "w", {64, 64}, 5);
  auto c = pruned::filled(b, "c", {64}, 6);
  auto a = pruned::filled(b, "a", {64, 4}, 7);
  auto bb = pruned::filled(b, "bb", {4, 64}, 8);
  auto s = b.graph().add_constant("s", std::make_shared<const ir::Tensor>(ir::Tensor::scalar_f32(2.0f)));
  auto base = b.op1(ir::Op::Add, {c, b.op1(ir::Op::MatMul, {x, w})});
  auto lora = b.op1(ir::Op::Mul, {b.op1(ir::Op::MatMul, {b.op1(ir::Op::MatMul, {x, a}), bb}), s});
  ir::Graph g = b.finish({b.op1(ir::Op::Add, {base, lora})});
  auto lib = rules::load_library();
  ASSERT_TRUE(lib.has_value()) << lib.error().str();
  for (const char* t : {"cpu-analytic", "cpu"}) {
    SCOPED_TRACE(t);
    auto r = optimize(g, *lib, target(t), OptimizeOptions{});
    ASSERT_TRUE(r.has_value()) << r.error().str();
    ASSERT_EQ(r->report.outcome, Outcome::Optimized) << r->report.reason;
    EXPECT_TRUE(r->report.validation->passed) << r->report.validation->first_divergence;
    EXPECT_EQ(r->report.ops_after.at("MatMul"), 1) << ir::print_graph(r->graph);
    EXPECT_EQ(r->report.ops_after.count("Mul"), 0u);
    // The one MatMul reads x by a constant 64 x 64 weight: W + s A B.
    for (const ir::Node& n : r->graph.nodes())
      if (n.op == ir::Op::MatMul) {
        EXPECT_EQ(r->graph.value(n.inputs[1]).kind, ir::ValueKind::Constant) << ir::print_graph(r->graph);
        EXPECT_EQ(r->graph.value(n.inputs[1]).type.shape, ir::Shape::of({64, 64})) << ir::print_graph(r->graph);
      }
    if (std::string_view(t) == "cpu-analytic") {
      EXPECT_EQ(r->report.extraction.rules_used.count("lowrank-merge-bias"), 1u)
          << fmt::format("{}", fmt::join(r->report.extraction.rules_used, ", "));
    }
  }
}

// Hugging Face BERT's attention with LoRA on Q and V (lora_encoder's form):
// three projections, the score divided by sqrt(32), not a power of two. Its
// adapters merge (W + s A B, a constant expression), and the attention
// becomes ONNX Runtime's Attention with the divisor folded into Q's weight
// and bias (attention-separate-div-fold); the folded weights are written as
// constants, nothing of the division is left to run.
TEST(Pipeline, LoraAttentionDividedBySqrtOfTheHeadDimIsFused) {
  GraphBuilder b;
  const int64_t batch = 2, seq = 4, hidden = 64, heads = 2, head = 32;
  auto x = b.input("x", {batch, seq, hidden});
  auto perm = [](std::vector<int64_t> p) {
    ir::Attributes a;
    a.set("perm", std::move(p));
    return a;
  };
  auto lora_scale = b.graph().add_constant("s", std::make_shared<const ir::Tensor>(ir::Tensor::scalar_f32(2.0f)));
  auto projection = [&](const std::string& n, uint32_t seed, bool lora) {
    auto w = pruned::filled(b, "w" + n, {hidden, hidden}, seed);
    auto c = pruned::filled(b, "b" + n, {hidden}, seed + 1);
    auto base = b.op1(ir::Op::Add, {c, b.op1(ir::Op::MatMul, {x, w})});
    if (!lora) return base;
    auto a = pruned::filled(b, "a" + n, {hidden, 4}, seed + 2);
    auto bb = pruned::filled(b, "bb" + n, {4, hidden}, seed + 3);
    auto delta = b.op1(ir::Op::Mul, {b.op1(ir::Op::MatMul, {b.op1(ir::Op::MatMul, {x, a}), bb}), lora_scale});
    return b.op1(ir::Op::Add, {base, delta});
  };
  auto heads_of = [&](ir::ValueId t, std::vector<int64_t> p) {
    auto split = b.ints("heads" + std::to_string(ir::index(t)), {batch, seq, heads, head});
    return b.op1(ir::Op::Transpose, {b.op1(ir::Op::Reshape, {t, split})}, perm(std::move(p)));
  };
  auto q = heads_of(projection("q", 10, true), {0, 2, 1, 3});
  auto k = heads_of(projection("k", 20, false), {0, 2, 3, 1});
  auto v = heads_of(projection("v", 30, true), {0, 2, 1, 3});
  auto root = b.graph().add_constant(
      "sqrt_d", std::make_shared<const ir::Tensor>(ir::Tensor::scalar_f32(std::sqrt(static_cast<float>(head)))));
  ir::Attributes last;
  last.set("axis", int64_t{-1});
  auto p = b.op1(ir::Op::Softmax, {b.op1(ir::Op::Div, {b.op1(ir::Op::MatMul, {q, k}), root})}, last);
  auto ctx = b.op1(ir::Op::Transpose, {b.op1(ir::Op::MatMul, {p, v})}, perm({0, 2, 1, 3}));
  ir::Graph g = b.finish({b.op1(ir::Op::Reshape, {ctx, b.ints("joined", {batch, seq, hidden})})});
  std::optional<OptimizeResult> r;
  ASSERT_NO_FATAL_FAILURE(pruned::optimize_validated(g, r));
  ASSERT_EQ(r->report.ops_after.count("Attention"), 1u) << ir::print_graph(r->graph);
  EXPECT_EQ(r->report.ops_after.at("Attention"), 1);
  EXPECT_EQ(r->report.extraction.rules_used.count("attention-separate-div-fold"), 1u)
      << fmt::format("{}", fmt::join(r->report.extraction.rules_used, ", "));
  for (const char* op : {"Div", "Softmax", "Concat", "Mul"}) EXPECT_EQ(r->report.ops_after.count(op), 0u) << op;
}

// Hugging Face BERT's attention with a padding mask that torch's
// expand(-1, 1, S, -1) made: Where(Equal(t, ConstantOfShape(Shape(t)) * -1),
// 1, t) of t = Reshape(Concat(-1, 1, S, -1), [-1]). Its -1 entries are known
// values (not unknown dims), so the mask is [B, 1, S, S], and the attention
// (the score divided by sqrt(32), the mask added) becomes ONNX Runtime's
// Attention with the mask as its input (attention-separate-div-bias-fold).
TEST(Pipeline, AttentionWithTorchsExpandedPaddingMaskIsFused) {
  GraphBuilder b;
  const int64_t batch = 2, seq = 4, hidden = 64, heads = 2, head = 32;
  auto x = b.input("x", {batch, seq, hidden});
  auto keep = b.input("keep", {batch, seq});
  auto axis0 = attr("axis", int64_t{0});
  auto s_len = b.op1(ir::Op::Gather, {b.op1(ir::Op::Shape, {x}), b.ints("at1", {1})}, axis0);
  auto parts = b.op1(ir::Op::Concat, {b.ints("m1", {-1}), b.ints("one", {1}), s_len, b.ints("m2", {-1})}, axis0);
  auto t = b.op1(ir::Op::Reshape, {parts, b.ints("flat", {-1})});
  auto ones = b.op1(ir::Op::ConstantOfShape, {b.op1(ir::Op::Shape, {t})},
                    attr("value", std::make_shared<const ir::Tensor>(ir::Tensor::vector_i64({1}))));
  auto minus = b.op1(ir::Op::Mul, {ones, b.ints("neg", {-1})});
  auto target = b.op1(ir::Op::Where, {b.op1(ir::Op::Equal, {t, minus}), ones, t});
  auto keep4 = b.op1(ir::Op::Unsqueeze, {b.op1(ir::Op::Unsqueeze, {keep, b.ints("a1", {1})}), b.ints("a2", {2})});
  auto expanded = b.op1(ir::Op::Expand, {keep4, target});
  ASSERT_EQ(b.graph().value(expanded).type.shape.str(), "2x1x4x4");
  auto one_f = b.graph().add_constant("1f", std::make_shared<const ir::Tensor>(ir::Tensor::scalar_f32(1.0f)));
  auto big = b.graph().add_constant("-1e4", std::make_shared<const ir::Tensor>(ir::Tensor::scalar_f32(-10000.0f)));
  auto mask = b.op1(ir::Op::Mul, {b.op1(ir::Op::Sub, {one_f, expanded}), big});
  auto perm = [&](std::vector<int64_t> p) { return attr("perm", std::move(p)); };
  auto heads_of = [&](const std::string& n, uint32_t seed, std::vector<int64_t> p) {
    auto w = pruned::filled(b, "w" + n, {hidden, hidden}, seed);
    auto c = pruned::filled(b, "b" + n, {hidden}, seed + 1);
    auto proj = b.op1(ir::Op::Add, {c, b.op1(ir::Op::MatMul, {x, w})});
    auto split = b.ints("heads" + n, {batch, seq, heads, head});
    return b.op1(ir::Op::Transpose, {b.op1(ir::Op::Reshape, {proj, split})}, perm(std::move(p)));
  };
  auto q = heads_of("q", 10, {0, 2, 1, 3}), k = heads_of("k", 20, {0, 2, 3, 1}), v = heads_of("v", 30, {0, 2, 1, 3});
  auto root = b.graph().add_constant(
      "sqrt_d", std::make_shared<const ir::Tensor>(ir::Tensor::scalar_f32(std::sqrt(static_cast<float>(head)))));
  auto score = b.op1(ir::Op::Add, {b.op1(ir::Op::Div, {b.op1(ir::Op::MatMul, {q, k}), root}), mask});
  auto p = b.op1(ir::Op::Softmax, {score}, attr("axis", int64_t{-1}));
  auto ctx = b.op1(ir::Op::Transpose, {b.op1(ir::Op::MatMul, {p, v})}, perm({0, 2, 1, 3}));
  ir::Graph g = b.finish({b.op1(ir::Op::Reshape, {ctx, b.ints("joined", {batch, seq, hidden})})});
  std::optional<OptimizeResult> r;
  ASSERT_NO_FATAL_FAILURE(pruned::optimize_validated(g, r));
  expect_one_attention(*r, "attention-separate-div-bias-fold");
}

// bert_masked's form: positions from a [1, 16, 64] table sliced to the
// sequence (`position[:, :s]`, a dim min(s, 16) that the Add makes s), the
// packed projection split in three, and a key padding mask [B, 1, 1, S]
// ((1 - keep) * -10000, unsqueezed) added to the scores. The op reads its
// mask as [B, 1, S, S], so it is expanded against [1, 1, S, 1] at run time
// (attention-packed-bias-keys); batch and sequence stay symbolic.
TEST(Pipeline, AttentionWithAKeyPaddingMaskAndSlicedPositionsIsFused) {
  GraphBuilder b;
  const int64_t hidden = 64, heads = 4;
  auto sym = [](const char* n) { return ir::Dim::symbol(n); };
  auto h = b.graph().add_input("h", ir::TensorType{ir::DType::f32, ir::Shape{sym("batch"), sym("seq"), hidden}});
  auto keep = b.graph().add_input("keep", ir::TensorType{ir::DType::f32, ir::Shape{sym("batch"), sym("seq")}});
  auto seq = b.op1(ir::Op::Gather, {b.op1(ir::Op::Shape, {h}), b.ints("at1", {1})}, attr("axis", int64_t{0}));
  auto table = pruned::filled(b, "table", {1, 16, hidden}, 3);
  auto pos = b.op1(ir::Op::Slice, {table, b.ints("zero", {0}), seq, b.ints("axis1", {1})});
  auto x = b.op1(ir::Op::Add, {h, pos});
  ASSERT_EQ(b.graph().value(x).type.shape.str(), "\"batch\"x\"seq\"x64");
  auto one_f = b.graph().add_constant("1f", std::make_shared<const ir::Tensor>(ir::Tensor::scalar_f32(1.0f)));
  auto big = b.graph().add_constant("-1e4", std::make_shared<const ir::Tensor>(ir::Tensor::scalar_f32(-10000.0f)));
  auto keep4 = b.op1(ir::Op::Unsqueeze, {keep, b.ints("a12", {1, 2})});
  auto mask = b.op1(ir::Op::Mul, {b.op1(ir::Op::Sub, {one_f, keep4}), big});
  auto [q, k, v] = packed_heads(b, x, hidden, heads, false, {0, 2, 3, 1});
  auto scale = b.graph().add_constant("scale", std::make_shared<const ir::Tensor>(ir::Tensor::scalar_f32(0.25f)));
  auto score = b.op1(ir::Op::Add, {b.op1(ir::Op::Mul, {b.op1(ir::Op::MatMul, {q, k}), scale}), mask});
  auto p = b.op1(ir::Op::Softmax, {score}, attr("axis", int64_t{-1}));
  auto ctx = b.op1(ir::Op::Transpose, {b.op1(ir::Op::MatMul, {p, v})}, attr("perm", std::vector<int64_t>{0, 2, 1, 3}));
  ir::Graph g = b.finish({b.op1(ir::Op::Reshape, {ctx, b.ints("joined", {0, 0, hidden})})});
  OptimizeOptions options;
  options.validation.dims = {{"batch", 2}, {"seq", 5}};
  std::optional<OptimizeResult> r;
  ASSERT_NO_FATAL_FAILURE(pruned::optimize_validated(g, r, options));
  expect_one_attention(*r, "attention-packed-bias-keys");
}

// torch.einsum's attention (attn_einsum): the scores "bhqd,bhkd->bhqk" and
// the context "bhqk,bhkd->bhqd" are MatMuls (einsum-attention-scores,
// einsum-attention-context), and the attention becomes ONNX Runtime's.
TEST(Pipeline, AttentionWrittenWithEinsumIsFused) {
  GraphBuilder b;
  const int64_t batch = 2, seq = 4, hidden = 64, heads = 4;
  auto x = b.input("x", {batch, seq, hidden});
  auto [q, k, v] = packed_heads(b, x, hidden, heads);
  auto scale = b.graph().add_constant("scale", std::make_shared<const ir::Tensor>(ir::Tensor::scalar_f32(0.25f)));
  auto qk = b.op1(ir::Op::Einsum, {q, k}, attr("equation", std::string("bhqd,bhkd->bhqk")));
  auto p = b.op1(ir::Op::Softmax, {b.op1(ir::Op::Mul, {qk, scale})}, attr("axis", int64_t{-1}));
  auto pv = b.op1(ir::Op::Einsum, {p, v}, attr("equation", std::string("bhqk,bhkd->bhqd")));
  auto ctx = b.op1(ir::Op::Transpose, {pv}, attr("perm", std::vector<int64_t>{0, 2, 1, 3}));
  ir::Graph g = b.finish({b.op1(ir::Op::Reshape, {ctx, b.ints("joined", {batch, seq, hidden})})});
  std::optional<OptimizeResult> r;
  ASSERT_NO_FATAL_FAILURE(pruned::optimize_validated(g, r));
  EXPECT_EQ(r->report.ops_after.count("Attention") ? r->report.ops_after.at("Attention") : 0, 1)
      << ir::print_graph(r->graph);
  EXPECT_EQ(r->report.ops_after.count("Einsum"), 0u);
}

// gpt_scaled_q_op17's form: the query scaled before Q K^T (`(q * d^-0.5) @
// k`, the scale moved onto the scores by the library) and a
// causal bias [S, S] of 0 and -inf added to the scores: one Attention
// (attention-packed-bias2d), no Mul left.
TEST(Pipeline, CausalAttentionWithTheQueryScaledFirstIsFused) {
  GraphBuilder b;
  const int64_t batch = 2, seq = 4, hidden = 64, heads = 4;
  auto x = b.input("x", {batch, seq, hidden});
  auto [q, k, v] = packed_heads(b, x, hidden, heads, false, {0, 2, 3, 1});
  std::vector<float> causal(seq * seq, 0.0f);
  for (int64_t i = 0; i < seq; ++i)
    for (int64_t j = i + 1; j < seq; ++j) causal[i * seq + j] = -std::numeric_limits<float>::infinity();
  auto mask = b.graph().add_constant(
      "causal", std::make_shared<const ir::Tensor>(ir::Tensor::from_values<float>(ir::DType::f32, {seq, seq}, causal)));
  auto scale = b.graph().add_constant("scale", std::make_shared<const ir::Tensor>(ir::Tensor::scalar_f32(0.25f)));
  auto score = b.op1(ir::Op::Add, {b.op1(ir::Op::MatMul, {b.op1(ir::Op::Mul, {q, scale}), k}), mask});
  auto p = b.op1(ir::Op::Softmax, {score}, attr("axis", int64_t{-1}));
  auto ctx = b.op1(ir::Op::Transpose, {b.op1(ir::Op::MatMul, {p, v})}, attr("perm", std::vector<int64_t>{0, 2, 1, 3}));
  ir::Graph g = b.finish({b.op1(ir::Op::Reshape, {ctx, b.ints("joined", {batch, seq, hidden})})});
  std::optional<OptimizeResult> r;
  OptimizeOptions options;
  options.saturation.iter_limit = 4;  // fused in explore's first iterations; the rest costs seconds
  ASSERT_NO_FATAL_FAILURE(pruned::optimize_validated(g, r, options));
  expect_one_attention(*r, "attention-packed-bias2d");
  EXPECT_EQ(r->report.ops_after.count("Mul"), 0u) << ir::print_graph(r->graph);
}

// lora_encoder_mlp's cause: exporters write each projection's bias first,
// Add(b, MatMul(x, W)), and the fused rules read (add (matmul ?x ?w) ?b).
// add-comm reaches that only in the explore phase, where a graph with more
// Adds than its backoff threshold (64) bans it at once; bias-last puts the
// bias last in the simplify phase. A threshold of 1 stands for such a graph.
TEST(Pipeline, BiasFirstLoraAttentionIsFusedWithAddCommBanned) {
  GraphBuilder b;
  const int64_t batch = 2, seq = 4, hidden = 64, heads = 4, head = 16;
  auto x = b.input("x", {batch, seq, hidden});
  auto s = b.graph().add_constant("s", std::make_shared<const ir::Tensor>(ir::Tensor::scalar_f32(2.0f)));
  auto heads_of = [&](const std::string& n, uint32_t seed, std::vector<int64_t> p) {
    auto base = b.op1(ir::Op::Add, {pruned::filled(b, "b" + n, {hidden}, seed),
                                    b.op1(ir::Op::MatMul, {x, pruned::filled(b, "w" + n, {hidden, hidden}, seed)})});
    auto xa = b.op1(ir::Op::MatMul, {x, pruned::filled(b, "a" + n, {hidden, 4}, seed + 1)});
    auto lora =
        b.op1(ir::Op::Mul, {b.op1(ir::Op::MatMul, {xa, pruned::filled(b, "bb" + n, {4, hidden}, seed + 2)}), s});
    auto split = b.ints("heads" + n, {batch, seq, heads, head});
    auto t = b.op1(ir::Op::Reshape, {b.op1(ir::Op::Add, {base, lora}), split});
    return b.op1(ir::Op::Transpose, {t}, attr("perm", std::move(p)));
  };
  auto q = heads_of("q", 10, {0, 2, 1, 3}), k = heads_of("k", 20, {0, 2, 3, 1}), v = heads_of("v", 30, {0, 2, 1, 3});
  auto root = b.graph().add_constant("d", std::make_shared<const ir::Tensor>(ir::Tensor::scalar_f32(5.656854f)));
  auto p =
      b.op1(ir::Op::Softmax, {b.op1(ir::Op::Div, {b.op1(ir::Op::MatMul, {q, k}), root})}, attr("axis", int64_t{-1}));
  auto ctx = b.op1(ir::Op::Transpose, {b.op1(ir::Op::MatMul, {p, v})}, attr("perm", std::vector<int64_t>{0, 2, 1, 3}));
  ir::Graph g = b.finish({b.op1(ir::Op::Reshape, {ctx, b.ints("joined", {batch, seq, hidden})})});
  OptimizeOptions options;
  options.saturation.permuting_match_limit = 1;
  std::optional<OptimizeResult> r;
  ASSERT_NO_FATAL_FAILURE(pruned::optimize_validated(g, r, options));
  expect_one_attention(*r, "attention-separate-div-fold");
}

// torch.baddbmm's scores (attn_baddbmm, GPT-2 and BLOOM): Q and K [B, h, S, d]
// reshaped to [B h, S, d], baddbmm(zeros, q, k^T, alpha) exported as MatMul,
// Mul by alpha and Add of beta * zeros, then viewed as [B, h, S, S]. The zero
// tensor goes (add-zero-tensor), the heads are put back
// (matmul-heads-unmerged-scaled), and the attention is ONNX Runtime's.
TEST(Pipeline, AttentionWithHeadsMergedIntoTheBatchIsFused) {
  GraphBuilder b;
  const int64_t batch = 2, seq = 4, hidden = 64, heads = 4, head = 16;
  auto x = b.input("x", {batch, seq, hidden});
  auto [q, k, v] = packed_heads(b, x, hidden, heads, /*bias_first=*/true);
  auto merged = [&](ir::ValueId t, const char* n) {
    return b.op1(ir::Op::Reshape, {t, b.ints(n, {batch * heads, seq, head})});
  };
  auto kt = b.op1(ir::Op::Transpose, {merged(k, "mk")}, attr("perm", std::vector<int64_t>{0, 2, 1}));
  auto alpha = b.graph().add_constant("alpha", std::make_shared<const ir::Tensor>(ir::Tensor::scalar_f32(0.25f)));
  auto zeros = b.op1(ir::Op::ConstantOfShape, {b.ints("zshape", {batch * heads, seq, seq})});
  auto scores =
      b.op1(ir::Op::Add, {b.op1(ir::Op::Mul, {b.op1(ir::Op::MatMul, {merged(q, "mq"), kt}), alpha}), zeros});
  auto p = b.op1(ir::Op::Softmax, {b.op1(ir::Op::Reshape, {scores, b.ints("unmerged", {batch, heads, seq, seq})})},
                 attr("axis", int64_t{-1}));
  auto ctx = b.op1(ir::Op::Transpose, {b.op1(ir::Op::MatMul, {p, v})},
                   attr("perm", std::vector<int64_t>{0, 2, 1, 3}));
  ir::Graph g = b.finish({b.op1(ir::Op::Reshape, {ctx, b.ints("joined", {batch, seq, hidden})})});
  std::optional<OptimizeResult> r;
  OptimizeOptions options;
  options.saturation.iter_limit = 4;  // the attention is fused in explore's first; the rest costs seconds
  ASSERT_NO_FATAL_FAILURE(pruned::optimize_validated(g, r, options));
  expect_one_attention(*r, "attention-packed");
  EXPECT_EQ(r->report.ops_after.count("MatMul"), 0u) << ir::print_graph(r->graph);
}

}  // namespace
}  // namespace refinery::optimize
