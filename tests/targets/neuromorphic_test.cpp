// The neuromorphic target: its specs, the partition onto cores (every
// per-core limit respected), the cost of a step from measured activity, the
// weight-format check, and the message of a graph that does not fit.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "ir/text.h"
#include "targets/cost_model.h"
#include "targets/neuromorphic.h"
#include "targets/spec.h"

namespace refinery::targets {
namespace {

HardwareSpec spec(const char* name) {
  auto s = find_spec(name);
  EXPECT_TRUE(s.has_value()) << s.error().str();
  return *s;
}

// x[n_in] -> affine (weights as given, bias 0) -> lif[n_out].
ir::Graph affine_lif(int64_t n_in, int64_t n_out, const std::vector<double>& weights) {
  std::string w = fmt::format("{}", fmt::join(weights, ", "));
  std::string text = fmt::format(
      R"(graph @main(%x: tensor<{0}xf32>) attributes {{ir_version = 8, opsets = {{}}}} {{
  %w = const dense<[{2}]> : tensor<{1}x{0}xf32>
  %b = const dense<[{3}]> : tensor<{1}xf32>
  %tau = const dense<[0.01]> : tensor<f32>
  %r = const dense<[1.0]> : tensor<f32>
  %leak = const dense<[0.0]> : tensor<f32>
  %thr = const dense<[1.0]> : tensor<f32>
  %reset = const dense<[0.0]> : tensor<f32>
  %y = affine(%x, %w, %b) : tensor<{1}xf32>
  %s = lif(%y, %tau, %r, %leak, %thr, %reset) : tensor<{1}xf32>
  return %s
}})",
      n_in, n_out, w, fmt::join(std::vector<double>(static_cast<std::size_t>(n_out), 0.0), ", "));
  auto g = ir::parse_graph(text, "affine_lif");
  EXPECT_TRUE(g.has_value()) << g.error().str();
  return std::move(*g);
}

// x[n] -> scale by a scalar -> lif[n]: one synapse per neuron.
ir::Graph scale_lif(int64_t n) {
  auto g = ir::parse_graph(fmt::format(R"(graph @main(%x: tensor<{0}xf32>) attributes {{ir_version = 8, opsets = {{}}}} {{
  %k = const dense<[2.0]> : tensor<f32>
  %tau = const dense<[0.01]> : tensor<f32>
  %r = const dense<[1.0]> : tensor<f32>
  %leak = const dense<[0.0]> : tensor<f32>
  %thr = const dense<[1.0]> : tensor<f32>
  %reset = const dense<[0.0]> : tensor<f32>
  %y = scale(%x, %k) : tensor<{0}xf32>
  %s = lif(%y, %tau, %r, %leak, %thr, %reset) : tensor<{0}xf32>
  return %s
}})",
                                       n),
                           "scale_lif");
  EXPECT_TRUE(g.has_value()) << g.error().str();
  return std::move(*g);
}

TEST(NeuromorphicSpec, BundledSpecsLoadWithTheirFigures) {
  HardwareSpec l1 = spec("loihi1");
  EXPECT_EQ(l1.kind, TargetKind::Neuromorphic);
  EXPECT_EQ(l1.neuromorphic.cores, 128);
  EXPECT_EQ(l1.neuromorphic.neurons_per_core, 1024);
  EXPECT_EQ(l1.neuromorphic.weight_bits, 9);
  EXPECT_DOUBLE_EQ(l1.neuromorphic.energy_per_synaptic_op, 23.6e-12);  // Davies et al. 2018, Table 2
  EXPECT_TRUE(l1.neuromorphic.secondary.empty()) << "Loihi 1's figures are all from Davies et al. 2018";
  HardwareSpec l2 = spec("loihi2");
  EXPECT_EQ(l2.neuromorphic.neurons_per_core, 8192);
  EXPECT_TRUE(l2.neuromorphic.secondary.contains("energy_per_synaptic_op_j")) << "say which figures are secondary";
  HardwareSpec s2 = spec("spinnaker2");
  EXPECT_EQ(s2.neuromorphic.cores, 152);
  EXPECT_EQ(s2.neuromorphic.energy_per_neuron_update, 0) << "no published figure: left out, not invented";
}

TEST(NeuromorphicSpec, BadSpecsNameTheField) {
  auto missing = parse_spec(R"({"name": "x", "kind": "neuromorphic", "neuromorphic": {"cores": 1}})", "x.json");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().str(), "x.json: missing field 'neuromorphic.neurons_per_core'");
  auto unknown = parse_spec(R"({"name": "x", "kind": "neuromorphic", "neuromorphic": {"cores": 1,
      "neurons_per_core": 1, "synaptic_memory_bits_per_core": 1, "fan_in_per_core": 1, "fan_out_per_core": 1,
      "weight_bits": 8, "secondary": {"neurons": "typo"}}})",
                            "x.json");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().str(), "x.json: field 'neuromorphic.secondary.neurons' names no figure of the spec");
}

// A small chip, so that each limit binds on a small graph.
HardwareSpec tiny_chip() {
  auto s = parse_spec(R"({"name": "tiny", "kind": "neuromorphic", "neuromorphic": {"cores": 64,
      "neurons_per_core": 16, "synaptic_memory_bits_per_core": 512, "fan_in_per_core": 64, "fan_out_per_core": 64,
      "weight_bits": 8, "energy_per_synaptic_op_j": 2e-12, "energy_per_neuron_update_j": 5e-12}})");
  EXPECT_TRUE(s.has_value()) << s.error().str();
  return *s;
}

TEST(NeuromorphicMap, PartitionRespectsSynapticMemory) {
  // 10 inputs x 8 bits = 80 bits per neuron: 6 neurons fill a core's 512
  // bits, so 40 neurons take 7 cores (3 by the neuron count alone).
  ir::Graph g = affine_lif(10, 40, std::vector<double>(400, 0.5));
  auto m = map_to_cores(g, tiny_chip(), {});
  ASSERT_TRUE(m.has_value()) << m.error().str();
  ASSERT_EQ(m->populations.size(), 1u);
  EXPECT_EQ(m->populations[0].fan_in, 10);
  EXPECT_EQ(m->populations[0].neurons_per_core, 6);
  EXPECT_EQ(m->cores, 7);
  EXPECT_EQ(m->synapses, 400);
}

TEST(NeuromorphicMap, PrunedWeightsStoreAndFireLess) {
  std::vector<double> w(400, 0.5);
  for (std::size_t i = 0; i < w.size(); i += 2) w[i] = 0;  // the even columns pruned
  ir::Graph g = affine_lif(10, 40, w);
  std::vector<double> activity(g.num_values(), std::numeric_limits<double>::quiet_NaN());
  activity[ir::index(g.inputs()[0])] = 0.1;
  auto m = map_to_cores(g, tiny_chip(), activity);
  ASSERT_TRUE(m.has_value()) << m.error().str();
  EXPECT_EQ(m->synapses, 200);
  EXPECT_EQ(m->populations[0].fan_in, 5);
  EXPECT_EQ(m->populations[0].input_axons, 5);
  EXPECT_EQ(m->cores, 4);  // 12 neurons per core
  EXPECT_DOUBLE_EQ(m->synaptic_events_per_step, 0.1 * 200);
  EXPECT_DOUBLE_EQ(m->neuron_updates_per_step, 40);
  EXPECT_DOUBLE_EQ(m->energy_per_step, 0.1 * 200 * 2e-12 + 40 * 5e-12);
}

TEST(NeuromorphicMap, NeuronCountBoundsACore) {
  auto m = map_to_cores(scale_lif(3000), spec("loihi1"), {});
  ASSERT_TRUE(m.has_value()) << m.error().str();
  EXPECT_EQ(m->populations[0].neurons_per_core, 1024);
  EXPECT_EQ(m->cores, 3);
}

TEST(NeuromorphicMap, FanOutSplitsTheSendingLayer) {
  // x[8] -> scale -> lif a[8] -> affine -> lif b[200]: b takes 8 inputs x 8
  // bits per neuron, 8 per core, 25 cores; a neuron of a sends to all 25,
  // so a core of a holds 64 / 25 = 2 of them: 4 cores.
  auto g = ir::parse_graph(fmt::format(R"(graph @main(%x: tensor<8xf32>) attributes {{ir_version = 8, opsets = {{}}}} {{
  %k = const dense<[2.0]> : tensor<f32>
  %w = const dense<[{}]> : tensor<200x8xf32>
  %b = const dense<[{}]> : tensor<200xf32>
  %tau = const dense<[0.01]> : tensor<f32>
  %r = const dense<[1.0]> : tensor<f32>
  %leak = const dense<[0.0]> : tensor<f32>
  %thr = const dense<[1.0]> : tensor<f32>
  %reset = const dense<[0.0]> : tensor<f32>
  %y = scale(%x, %k) : tensor<8xf32>
  %a = lif(%y, %tau, %r, %leak, %thr, %reset) : tensor<8xf32>
  %h = affine(%a, %w, %b) : tensor<200xf32>
  %s = lif(%h, %tau, %r, %leak, %thr, %reset) : tensor<200xf32>
  return %s
}})",
                                       fmt::join(std::vector<double>(1600, 1.0), ", "),
                                       fmt::join(std::vector<double>(200, 0.0), ", ")));
  ASSERT_TRUE(g.has_value()) << g.error().str();
  auto m = map_to_cores(*g, tiny_chip(), {});
  ASSERT_TRUE(m.has_value()) << m.error().str();
  ASSERT_EQ(m->populations.size(), 2u);
  EXPECT_EQ(m->populations[1].cores, 25);
  EXPECT_EQ(m->populations[0].neurons_per_core, 2);
  EXPECT_EQ(m->populations[0].cores, 4);
  EXPECT_EQ(m->cores, 29);
}

TEST(NeuromorphicMap, TooManyInputsNamesTheLimitAndByHowMuch) {
  auto m = map_to_cores(affine_lif(5000, 2, std::vector<double>(10000, 1.0)), spec("loihi1"), {});
  ASSERT_FALSE(m.has_value());
  EXPECT_TRUE(m.error().limitation);
  EXPECT_EQ(m.error().message,
            "layer '#1 lif' (lif) does not fit a loihi1 core: one neuron reads 5000 distinct inputs, a core takes "
            "4096 input axons (over by 904)");
}

TEST(NeuromorphicMap, ConvolutionChunksAreBoundByTheInputRowsTheyRead) {
  // x [1, 8, 8] -> 3x3 conv (pads 1) -> if_neuron [1, 8, 8]. A chunk of c
  // neurons spans ceil(c / 8) + 1 output rows and reads the input rows under
  // them, 8 wide: 16 neurons read 5 rows = 40 sources, over the 36 axons
  // of this chip; 8 neurons read 4 rows = 32.
  auto g = ir::parse_graph(R"(graph @main(%x: tensor<1x8x8xf32>) attributes {ir_version = 8, opsets = {}} {
  %w = const dense<[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]> : tensor<1x1x3x3xf32>
  %b = const dense<[0.0]> : tensor<1xf32>
  %r = const dense<[1.0]> : tensor<f32>
  %thr = const dense<[1.0]> : tensor<f32>
  %reset = const dense<[0.0]> : tensor<f32>
  %y = nir_conv2d(%x, %w, %b) {pads = [1, 1, 1, 1]} : tensor<1x8x8xf32>
  %s = if_neuron(%y, %r, %thr, %reset) : tensor<1x8x8xf32>
  return %s
})");
  ASSERT_TRUE(g.has_value()) << g.error().str();
  HardwareSpec chip = tiny_chip();
  chip.neuromorphic.fan_in_per_core = 36;
  chip.neuromorphic.synaptic_memory_bits_per_core = 4096;  // memory not the bound here
  auto m = map_to_cores(*g, chip, {});
  ASSERT_TRUE(m.has_value()) << m.error().str();
  EXPECT_EQ(m->populations[0].fan_in, 9);
  EXPECT_EQ(m->populations[0].synapses, 9 * 64);
  EXPECT_EQ(m->populations[0].neurons_per_core, 8);
  EXPECT_EQ(m->cores, 8);
  chip.neuromorphic.fan_in_per_core = 8;  // one neuron reads 9
  auto over = map_to_cores(*g, chip, {});
  ASSERT_FALSE(over.has_value());
  EXPECT_NE(over.error().message.find("one neuron reads 9 distinct inputs, a core takes 8 input axons (over by 1)"),
            std::string::npos)
      << over.error().message;
}

TEST(NeuromorphicMap, TooManyCoresForTheChip) {
  auto m = map_to_cores(scale_lif(65 * 16), tiny_chip(), {});
  ASSERT_FALSE(m.has_value());
  EXPECT_TRUE(m.error().limitation);
  EXPECT_EQ(m.error().message,
            "the graph needs 65 cores, a tiny chip has 64 (over by 1); the largest layer, '#1 lif', takes 65");
}

TEST(NeuromorphicMap, OpsNoCoreRunsAreRefused) {
  auto g = ir::parse_graph(R"(graph @main(%x: tensor<4xf32>) attributes {ir_version = 8, opsets = {}} {
  %y = relu(%x) : tensor<4xf32>
  return %y
})");
  ASSERT_TRUE(g.has_value()) << g.error().str();
  auto m = map_to_cores(*g, spec("loihi2"), {});
  ASSERT_FALSE(m.has_value());
  EXPECT_TRUE(m.error().limitation);
  EXPECT_NE(m.error().message.find("node '#0 relu' (relu) has no neuromorphic mapping"), std::string::npos)
      << m.error().message;
}

TEST(NeuromorphicMap, WeightsFitWhenExactlyAScaleTimesSmallIntegers) {
  // 0.25 x {2, -6, 1, 0}: 3 magnitude bits and a sign
  auto fits = map_to_cores(affine_lif(2, 2, {0.5, -1.5, 0.25, 0.0}), spec("loihi2"), {});
  ASSERT_TRUE(fits.has_value()) << fits.error().str();
  ASSERT_EQ(fits->weights.size(), 1u);
  EXPECT_EQ(fits->weights[0].bits_needed, 4);
  EXPECT_DOUBLE_EQ(fits->weights[0].scale, 0.25);
  EXPECT_TRUE(fits->weights[0].fits());
  // 0.1 and 0.3 (as f32) share no scale that leaves small integers
  auto wide = map_to_cores(affine_lif(2, 1, {0.1, 0.3}), spec("loihi2"), {});
  ASSERT_TRUE(wide.has_value());
  EXPECT_FALSE(wide->weights[0].fits());
  EXPECT_GT(wide->weights[0].bits_needed, 20);
  // 0.75 x {1, -2, 4} = 2^-2 x {3, -6, 12}: the scale is a power of two
  // (the chip's shared exponent), and 3 is the integers' common odd factor
  auto odd = map_to_cores(affine_lif(3, 1, {0.75, -1.5, 3.0}), spec("loihi2"), {});
  ASSERT_TRUE(odd.has_value());
  EXPECT_EQ(odd->weights[0].bits_needed, 5);
  EXPECT_DOUBLE_EQ(odd->weights[0].scale, 0.25);
  EXPECT_EQ(odd->weights[0].odd_factor, 3u);
}

TEST(NeuromorphicModel, PricesAStepByNeuronsAndDenseSynapses) {
  auto t = load_target("loihi2");
  ASSERT_TRUE(t.has_value()) << t.error().str();
  ir::Graph g = affine_lif(3, 4, std::vector<double>(12, 1.0));
  // types alone: 12 synapses fire for an always-active input, 4 neurons update
  EXPECT_NEAR(graph_cost(*t->model, g), 12 * 23.6e-12 + 4 * 52e-12, 1e-18);
}

}  // namespace
}  // namespace refinery::targets
