// End-to-end tests of the refinery command on NIR files (docs/nir.md): inspect
// on every shared file that loads, the malformed ones' one-line errors,
// convert to .ir and back, and seeded spiking runs.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "frontends/nir.h"
#include "ir/spiking.h"
#include "ir/stats.h"
#include "ir/text.h"
#include "tests/cli/cli_runner.h"
#include "tests/nir/nir_test_files.h"

namespace refinery::testing {
namespace {

namespace fs = std::filesystem;

struct SharedFile {
  const char* file;
  const char* version;
  const char* figures;  // the spiking line of inspect
};
void PrintTo(const SharedFile& f, std::ostream* os) { *os << f.file; }

const SharedFile kLoads[] = {
    {"paper_01_lif_lif_norse.nir", "0.1.1", "spiking: 2 layers, 1 neurons, 1 synapses"},
    {"paper_01_lif_lif_rockpool.nir", "0.2.0", "spiking: 2 layers, 1 neurons, 1 synapses"},
    {"paper_02_cnn_cnn_sinabs.nir", "0.2.0", "spiking: 13 layers,"},
    {"paper_03_rnn_braille_noDelay_bias_zero.nir", "0.2.0", "spiking: 5 layers, 45 neurons, 2166 synapses"},
    {"NIRTorch_tests_feedback_graph.nir", "1.0.7.dev8+gaf2635601", "spiking: 5 layers,"},
};

fs::path nir_scratch(const std::string& name) { return scratch_file("refinery_cli_nir_test", name); }

std::string shared(const char* file) { return test::shared_nir(file).string(); }

class NirShared : public ::testing::TestWithParam<SharedFile> {};

TEST_P(NirShared, InspectShowsLayersNeuronsSynapsesAndParameters) {
  CliResult r = run_cli("inspect " + shared(GetParam().file));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  for (std::string want : {std::string("graph @main, NIR graph, NIR version ") + GetParam().version + "\n",
                           std::string(GetParam().figures), std::string("parameters:"), std::string(" per step\n"),
                           std::string("synaptic operations: "), std::string("multiply-adds per step")})
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  EXPECT_EQ(r.out.find("opsets"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("nir."), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("FLOPs: 0 "), std::string::npos) << r.out;
}

// .nir -> .ir -> .nir: the last file imports to the same graph as the first.
TEST_P(NirShared, ConvertToTextAndBackRoundTrips) {
  std::string stem = fs::path(GetParam().file).stem().string();
  fs::path ir = nir_scratch(stem + ".ir"), back = nir_scratch(stem + "_back.nir");
  CliResult r = run_cli("convert " + shared(GetParam().file) + " " + ir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  r = run_cli("convert " + ir.string() + " " + back.string());
  ASSERT_EQ(r.code, 0) << r.err;
  auto a = frontends::import_nir(shared(GetParam().file));
  auto b = frontends::import_nir(back);
  ASSERT_TRUE(a.has_value()) << a.error().str();
  ASSERT_TRUE(b.has_value()) << b.error().str();
  EXPECT_EQ(ir::graph_difference(*a, *b), "");
}

TEST_P(NirShared, RunPrintsSpikeCountsAndItsParameters) {
  CliResult r = run_cli("run " + shared(GetParam().file) + " --steps 100");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("run: steps=100 dt=0.001 discretisation=euler reset=zero input-rate=0.2 seed=0\n", 0), 0u)
      << r.out;
  EXPECT_NE(r.out.find("spike counts per layer:\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" spikes\n"), std::string::npos) << r.out;
}

// Every valid NIR file optimizes (exit 0): rewritten and validated by
// simulation, or written unchanged with the reason (a recurrent edge is a
// cycle the e-graph does not hold yet; seeding one segfaulted).
TEST_P(NirShared, OptimizeWritesAValidatedOrUnchangedGraph) {
  std::string stem = fs::path(GetParam().file).stem().string();
  fs::path out = nir_scratch(stem + ".opt.nir");
  CliResult r = run_cli("optimize " + shared(GetParam().file) + " -o " + out.string());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  auto a = frontends::import_nir(shared(GetParam().file));
  auto b = frontends::import_nir(out);
  ASSERT_TRUE(a.has_value() && b.has_value());
  // The extractor asked for is named, even where none ran (a recurrent graph).
  EXPECT_NE(r.out.find(", extractor greedy, "), std::string::npos) << r.out;
  if (r.out.find("result:     optimized") != std::string::npos) {
    EXPECT_NE(r.out.find(" layers: pass ("), std::string::npos) << r.out;
  } else {
    ASSERT_NE(r.out.find("result:     kept original"), std::string::npos) << r.out;
    EXPECT_EQ(ir::graph_difference(*a, *b), "");
  }
  if (ir::spiking_stats(*a).recurrent_edges > 0) {
    EXPECT_NE(r.out.find("recurrent edge"), std::string::npos) << r.out;
  }
}

INSTANTIATE_TEST_SUITE_P(Files, NirShared, ::testing::ValuesIn(kLoads), [](const auto& info) {
  std::string n = fs::path(info.param.file).stem().string();
  std::replace_if(
      n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return n;
});

TEST(NirCli, RunIsDeterministicForASeed) {
  std::string model = shared("NIRTorch_tests_feedback_graph.nir");
  CliResult a = run_cli("run " + model + " --steps 100 --seed 3");
  CliResult b = run_cli("run " + model + " --steps 100 --seed 3");
  CliResult c = run_cli("run " + model + " --steps 100 --seed 4");
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, c.out);
  EXPECT_NE(a.out.find("seed=3"), std::string::npos) << a.out;
}

TEST(NirCli, RunShowsTheChosenDiscretisationAndReset) {
  CliResult r = run_cli("run " + shared("paper_03_rnn_braille_noDelay_bias_zero.nir") +
                        " --steps 50 --dt 1e-4 --discretisation exact --reset subtract --seed 2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("run: steps=50 dt=0.0001 discretisation=exact reset=subtract input-rate=0.2 seed=2\n", 0), 0u)
      << r.out;
  // the braille network's two CubaLIF layers
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1 + 1 + 2 + 1) << r.out;
}

struct Malformed {
  const char* file;
  const char* fault;  // the graph, node or edge the message names
};
void PrintTo(const Malformed& m, std::ostream* os) { *os << m.file; }

class NirMalformed : public ::testing::TestWithParam<Malformed> {};

TEST_P(NirMalformed, OneLineNamingFileAndFaultExitTwoNothingWritten) {
  std::string model = shared(GetParam().file);
  std::string message = "refinery: error: " + model + ":" + GetParam().fault;
  for (std::string cmd : {"inspect " + model, "run " + model + " --steps 10"}) {
    CliResult r = run_cli(cmd);
    EXPECT_EQ(r.code, 2) << cmd;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind(message, 0), 0u) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  fs::path out = nir_scratch("malformed_out.ir");
  CliResult r = run_cli("convert " + model + " " + out.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind(message, 0), 0u) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

INSTANTIATE_TEST_SUITE_P(
    Files, NirMalformed,
    ::testing::Values(Malformed{"NIR-demo-repo_norse_demo_scnn_model.nir", "top-level graph: has no 'edges' dataset"},
                      Malformed{"paper_03_rnn_extras_braille_noDelay_bias_zero_subgraph.nir",
                                "graph 'lif1': edge 'input' -> 'lif': names no node 'lif'"}),
    [](const auto& info) { return std::string(info.index == 0 ? "NoEdges" : "EdgeToMissingNode"); });

// A nested graph: inspect, and .nir -> .ir -> .nir keeps it (re-nested on export).
TEST(NirCli, NestedGraphInspectsAndRoundTrips) {
  fs::path dir = test::generated_nir("cli");
  if (dir.empty()) FAIL() << test::kPythonMissing;
  fs::path model = dir / "gen_nested.nir", ir = nir_scratch("nested.ir"), back = nir_scratch("nested_back.nir");
  CliResult r = run_cli("inspect " + model.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("1 recurrent edges"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CubaLIF"), std::string::npos) << r.out;
  ASSERT_EQ(run_cli("convert " + model.string() + " " + ir.string()).code, 0);
  r = run_cli("convert " + ir.string() + " " + back.string());
  ASSERT_EQ(r.code, 0) << r.err;
  auto a = frontends::import_nir(model);
  auto b = frontends::import_nir(back);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(ir::graph_difference(*a, *b), "");
}

// `run --input X.npz` drives a spiking graph with X (an array [T, shape...]
// per Input node, as numpy.savez writes it); `--save-traces` writes every
// spiking layer's train, which numpy reads back and whose sums are the
// counts printed.
namespace spiking_io {

std::string py(const std::string& code) { return std::string(test::kPython) + " -c \"" + code + "\""; }

int64_t printed_spikes(const std::string& out, const std::string& layer) {
  auto at = out.find("  " + layer + " ");
  if (at == std::string::npos) return -1;
  auto line = out.substr(at, out.find('\n', at) - at);
  auto end = line.rfind(" spikes");
  auto start = line.rfind(' ', end - 1);
  return std::stoll(line.substr(start + 1, end - start - 1));
}

TEST(NirCli, RunUsesTheGivenInputsAndSavesTraces) {
  fs::path dir = test::generated_nir("cli");
  if (dir.empty()) FAIL() << test::kPythonMissing;
  std::string model = (dir / "gen_loop.nir").string();
  fs::path x = nir_scratch("x.npz"), zeros = nir_scratch("zeros.npz"), t1 = nir_scratch("t1.npz");
  ASSERT_EQ(std::system(py("import numpy as np; r = np.random.default_rng(5); "
                           "np.savez_compressed('" +
                           x.string() +
                           "', input=(r.random((80, 12)) < 0.3).astype(np.float32)); "
                           "np.savez('" +
                           zeros.string() + "', input=np.zeros((80, 12)))")
                            .c_str()),
            0);
  CliResult a = run_cli("run " + model + " --input " + x.string() + " --save-traces " + t1.string());
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out.rfind("run: steps=80 dt=0.001 discretisation=euler reset=zero input=" + x.string() + "\n", 0), 0u)
      << a.out;
  CliResult b = run_cli("run " + model + " --input " + x.string() + " --save-traces " + t1.string());
  EXPECT_EQ(a.out, b.out);
  CliResult seeded = run_cli("run " + model + " --steps 80");
  EXPECT_NE(a.out.substr(a.out.find('\n')), seeded.out.substr(seeded.out.find('\n'))) << "the input was ignored";
  CliResult z = run_cli("run " + model + " --input " + zeros.string());
  ASSERT_EQ(z.code, 0) << z.err;
  EXPECT_EQ(printed_spikes(z.out, "lif_a"), 0) << z.out;
  int64_t lif_a = printed_spikes(a.out, "lif_a"), lif_b = printed_spikes(a.out, "lif_b");
  EXPECT_GT(lif_a, 0) << a.out;
  std::string check = py("import numpy as np; t = np.load('" + t1.string() + "'); "
                         "assert sorted(t.keys()) == ['lif_a', 'lif_b', 'output:output'], list(t.keys()); "
                         "assert t['lif_a'].shape == (80, 12) and t['lif_b'].shape == (80, 6); "
                         "assert t['output:output'].shape == (80, 6); "
                         "assert int(t['lif_a'].sum()) == " + std::to_string(lif_a) +
                         " and int(t['lif_b'].sum()) == " + std::to_string(lif_b) +
                         "; assert (t['lif_b'] == t['output:output']).all()");
  EXPECT_EQ(std::system(check.c_str()), 0) << check;
}

TEST(NirCli, RunWithAnInputThatDoesNotFitFailsNamingIt) {
  fs::path dir = test::generated_nir("cli");
  if (dir.empty()) FAIL() << test::kPythonMissing;
  std::string model = (dir / "gen_loop.nir").string();
  fs::path wrong = nir_scratch("wrong.npz"), shape = nir_scratch("shape.npz"), missing = nir_scratch("missing.npz");
  fs::path traces = nir_scratch("never.npz"), five = nir_scratch("five.npz");
  ASSERT_EQ(std::system(py("import numpy as np; np.savez('" + wrong.string() + "', inptu=np.zeros((5, 12))); "
                           "np.savez('" + shape.string() + "', input=np.zeros((5, 11))); "
                           "np.savez('" + five.string() + "', input=np.zeros((5, 12)))").c_str()),
            0);
  struct Case {
    fs::path file;
    std::string message;
  } cases[] = {
      {missing, missing.string() + ": cannot open"},
      {wrong, wrong.string() + ": array 'inptu' names no Input node (the graph's inputs: input)"},
      {shape, shape.string() + ": array 'input' is [5, 11], expected [T, 12]"},
  };
  for (const auto& c : cases) {
    CliResult r = run_cli("run " + model + " --input " + c.file.string() + " --save-traces " + traces.string());
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.err.rfind("refinery: error: " + c.message, 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_FALSE(fs::exists(traces));
  }
  CliResult steps = run_cli("run " + model + " --input " + five.string() + " --steps 7");
  EXPECT_EQ(steps.code, 2);
  EXPECT_EQ(steps.err, "refinery: error: " + five.string() + ": array 'input' has 5 steps, --steps says 7\n");
}

}  // namespace spiking_io

namespace neuromorphic {

// The .ir text written as a NIR file, in this process (a CLI call less).
void write_nir(const std::string& text, const fs::path& file) {
  auto g = ir::parse_graph(text);
  ASSERT_TRUE(g.has_value()) << g.error().str();
  auto ok = frontends::export_nir(*g, file);
  ASSERT_TRUE(ok.has_value()) << ok.error().str();
}

// tests/nir/data/two_affines.ir: x[8] -> affine [16x8] -> affine [4x16] ->
// lif[4] (its comment says why), shared with tests/report/pages_test.sh.
std::string two_affines_ir() { return slurp(source_path("tests/nir/data/two_affines.ir")); }

TEST(NirCli, OptimizeForLoihi2MergesSynapsesOntoFewerCoresAndValidatesSpikes) {
  fs::path nir = nir_scratch("two_affines.nir"), out = nir_scratch("two_affines.loihi2.nir"),
           report = nir_scratch("two_affines.loihi2.json");
  write_nir(two_affines_ir(), nir);
  CliResult r = run_cli("optimize " + nir.string() + " -o " + out.string() + " --target loihi2 --report " +
                        report.string());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("result:     optimized"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("chip (loihi2): 2 -> 1 cores, 20 -> 4 neurons, 169 -> 31 synapses"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("affine-affine (1)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("spike trains identical in 1 of 1 layers: pass (exact)"), std::string::npos) << r.out;
  auto j = nlohmann::json::parse(slurp(report));
  EXPECT_EQ(j["refinery_report"], 9);
  EXPECT_EQ(j["cost"]["unit"], "joules per time step");
  EXPECT_EQ(j["cost"]["model_kind"], "analytic");  // the chip's mapping: no learned model
  EXPECT_TRUE(j["cost"]["model_file"].is_null());
  const auto& n = j["neuromorphic"];
  EXPECT_EQ(n["before"]["cores"], 2);
  EXPECT_EQ(n["after"]["cores"], 1);
  EXPECT_LT(n["after"]["energy_per_inference_j"].get<double>(), n["before"]["energy_per_inference_j"].get<double>());
  EXPECT_LT(n["after"]["synaptic_events_per_step"].get<double>(),
            n["before"]["synaptic_events_per_step"].get<double>());
  for (const auto& t : j["validation"]["spike_trains"]) EXPECT_TRUE(t["identical"].get<bool>()) << t;
  auto written = frontends::import_nir(out);
  ASSERT_TRUE(written.has_value()) << written.error().str();
  EXPECT_EQ(ir::compute_stats(*written).op_histogram.at("nir.Affine"), 1);
  // The merged synapse layer computes y: it keeps y's name (the layer's name in NIR).
  auto y = written->find_value("y");
  ASSERT_TRUE(y.has_value());
  EXPECT_EQ(written->node(written->value(*y).producer).op, ir::Op::Affine);
}

// A Scale, then a synaptic delay of one length, then a Linear: the Scale's
// graded result needs a relay population on a chip. delay-scale-rev moves
// the delay in front of the Scale, and linear-absorb-scale folds the Scale
// into the weights: one population left, identical spikes.
TEST(NirCli, OptimizeForLoihi2MovesADelaySoThatAScaleIsAbsorbed) {
  fs::path nir = nir_scratch("scale_delay.nir"), out = nir_scratch("scale_delay.loihi2.nir"),
           report = nir_scratch("scale_delay.loihi2.json");
  std::vector<std::string> w;
  for (int i = 0; i < 4 * 8; ++i) w.push_back(fmt::format("{}", ((i * 5) % 7 - 2) * 0.25));
  write_nir(fmt::format(R"(graph @main(%x: tensor<8xf32>) attributes {{ir_version = 8, opsets = {{}}}} {{
  %s = const dense<[2.0, 0.5, 1.5, 1.0, 2.0, 0.5, 1.5, 1.0]> : tensor<8xf32>
  %d = const dense<[{}]> : tensor<8xf32>
  %w = const dense<[{}]> : tensor<4x8xf32>
  %tau = const dense<[0.01]> : tensor<f32>
  %r = const dense<[1.0]> : tensor<f32>
  %leak = const dense<[0.0]> : tensor<f32>
  %thr = const dense<[1.0]> : tensor<f32>
  %reset = const dense<[0.0]> : tensor<f32>
  %y = scale(%x, %s) : tensor<8xf32>
  %z = delay(%y, %d) : tensor<8xf32>
  %h = linear(%z, %w) : tensor<4xf32>
  %o = lif(%h, %tau, %r, %leak, %thr, %reset) : tensor<4xf32>
  return %o
}})",
                        fmt::join(std::vector<std::string>(8, "0.002"), ", "), fmt::join(w, ", ")),
            nir);
  CliResult r = run_cli("optimize " + nir.string() + " -o " + out.string() + " --target loihi2 --report " +
                        report.string());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("chip (loihi2): 2 -> 1 cores, 12 -> 4 neurons"), std::string::npos) << r.out;
  auto j = nlohmann::json::parse(slurp(report));
  EXPECT_EQ(j["rules_fired"].value("delay-scale-rev", 0), 1) << j["rules_fired"];
  for (const auto& t : j["validation"]["spike_trains"]) EXPECT_TRUE(t["identical"].get<bool>()) << t;
  auto written = frontends::import_nir(out);
  ASSERT_TRUE(written.has_value()) << written.error().str();
  const auto ops = ir::compute_stats(*written).op_histogram;
  EXPECT_EQ(ops.count("nir.Scale"), 0u);
  EXPECT_EQ(ops.at("nir.Delay"), 1);
}

// Weights that are 3/8 x integers up to 100 need 10 bits with a power-of-two
// scale (the chip's shared exponent); divided by 3, with the neuron's r
// times 3, they fit Loihi 2's 8 bits: optimize writes that form, spike for
// spike the same, though no rule made it cheaper.
TEST(NirCli, OptimizeForLoihi2RescalesWeightsIntoTheChipsFormat) {
  fs::path nir = nir_scratch("odd_scale.nir"), out = nir_scratch("odd_scale.loihi2.nir"),
           report = nir_scratch("odd_scale.loihi2.json");
  std::vector<std::string> w, b;
  for (int i = 0; i < 8 * 16; ++i) w.push_back(fmt::format("{}", 0.375 * ((i * 37) % 201 - 100)));
  for (int i = 0; i < 8; ++i) b.push_back(fmt::format("{}", 0.375 * (i % 5 - 2)));
  write_nir(fmt::format(R"(graph @main(%x: tensor<16xf32>) attributes {{ir_version = 8, opsets = {{}}}} {{
  %w = const dense<[{}]> : tensor<8x16xf32>
  %b = const dense<[{}]> : tensor<8xf32>
  %tau = const dense<[0.01]> : tensor<f32>
  %r = const dense<[1.0]> : tensor<f32>
  %leak = const dense<[0.0]> : tensor<f32>
  %thr = const dense<[20.0]> : tensor<f32>
  %reset = const dense<[0.0]> : tensor<f32>
  %h = affine(%x, %w, %b) : tensor<8xf32>
  %o = lif(%h, %tau, %r, %leak, %thr, %reset) : tensor<8xf32>
  return %o
}})",
                        fmt::join(w, ", "), fmt::join(b, ", ")),
            nir);
  CliResult r = run_cli("optimize " + nir.string() + " -o " + out.string() + " --target loihi2 --report " +
                        report.string());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("result:     optimized"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("weights:    1 of 1 synapse layers are exactly 8-bit integers"), std::string::npos) << r.out;
  auto j = nlohmann::json::parse(slurp(report));
  ASSERT_EQ(j["neuromorphic"]["rescaled"].size(), 1u) << j["neuromorphic"];
  EXPECT_EQ(j["neuromorphic"]["rescaled"][0],
            nlohmann::json::parse(R"({"layer": "h", "neuron": "o", "factor": 3, "bits_before": 10, "bits_after": 8})"));
  EXPECT_NE(r.out.find("rescaled:   'h' weights / 3 and 'o' input gain x 3 (10 -> 8 bits)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" layers: pass ("), std::string::npos) << r.out;
  auto written = frontends::import_nir(out);
  ASSERT_TRUE(written.has_value()) << written.error().str();
  for (const ir::Node& n : written->nodes())
    if (n.op == ir::Op::Affine) {
      EXPECT_DOUBLE_EQ(written->value(n.inputs[1]).constant->as_double(0), 0.125 * -100);
    }
}

// tests/nir/data/pruned_mlp.nir (make_pruned_mlp.py: a torch MLP 20-16-12-4
// with half the neurons of its first two layers pruned by
// prune.ln_structured, biases too): the dead neurons go with their fan-out
// (the *-dead-neurons-* rules), the written file reads back with the
// smaller layers, and its spikes are the original's.
TEST(NirCli, OptimizeForLoihi2PrunesDeadNeuronsWithTheirFanOut) {
  fs::path out = nir_scratch("pruned_mlp.loihi2.nir"), report = nir_scratch("pruned_mlp.loihi2.json");
  CliResult r = run_cli("optimize " + source_path("tests/nir/data/pruned_mlp.nir") + " -o " + out.string() +
                        " --target loihi2 --report " + report.string());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("result:     optimized"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lif-dead-neurons-affine-affine"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pass (exact)"), std::string::npos) << r.out;
  auto j = nlohmann::json::parse(slurp(report));
  // Per population in graph order: neurons, and the synapses into it (the
  // pruned neurons' outgoing weights go with them: 6 x 8 and 4 x 6 left).
  auto layers = [&](const char* side) {
    std::vector<std::pair<int64_t, int64_t>> v;
    for (const auto& p : j["neuromorphic"][side]["populations"])
      v.emplace_back(p["neurons"].get<int64_t>(), p["synapses"].get<int64_t>());
    return v;
  };
  using L = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(layers("before"), (L{{16, 160}, {12, 96}, {4, 48}}));
  EXPECT_EQ(layers("after"), (L{{8, 160}, {6, 48}, {4, 24}}));
  EXPECT_NE(r.out.find("32 -> 18 neurons, 304 -> 232 synapses"), std::string::npos) << r.out;
  for (const auto& t : j["validation"]["spike_trains"]) EXPECT_TRUE(t["identical"].get<bool>()) << t;
  auto written = frontends::import_nir(out);
  ASSERT_TRUE(written.has_value()) << written.error().str();
  for (const ir::Node& n : written->nodes())
    if (n.op == ir::Op::Affine) {
      const auto& dims = written->value(n.inputs[1]).type.shape.sizes();
      EXPECT_TRUE(dims == std::vector<int64_t>({8, 20}) || dims == std::vector<int64_t>({6, 8}) ||
                  dims == std::vector<int64_t>({4, 6}))
          << fmt::format("{}", fmt::join(dims, "x"));
    }
}

TEST(NirCli, OptimizeForAChipTheGraphDoesNotFitExitsThreeNamingTheLimit) {
  fs::path nir = nir_scratch("wide.nir"), out = nir_scratch("wide.loihi1.nir");
  write_nir(fmt::format(R"(graph @main(%x: tensor<5000xf32>) attributes {{ir_version = 8, opsets = {{}}}} {{
  %w = const dense<[{}]> : tensor<2x5000xf32>
  %tau = const dense<[0.01]> : tensor<f32>
  %r = const dense<[1.0]> : tensor<f32>
  %leak = const dense<[0.0]> : tensor<f32>
  %thr = const dense<[1.0]> : tensor<f32>
  %reset = const dense<[0.0]> : tensor<f32>
  %y = linear(%x, %w) : tensor<2xf32>
  %s = lif(%y, %tau, %r, %leak, %thr, %reset) : tensor<2xf32>
  return %s
}})",
                        fmt::join(std::vector<std::string>(10000, "1.0"), ", ")),
            nir);
  CliResult r = run_cli("optimize " + nir.string() + " -o " + out.string() + " --target loihi1");
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("one neuron reads 5000 distinct inputs, a core takes 4096 input axons (over by 904)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(out));
}

// The README's NIR optimize example, run as the README writes it (paths
// made absolute), prints the lines the README quotes.
TEST(NirCli, ReadmeNeuromorphicExampleRunsAsWritten) {
  std::string readme = slurp(source_path("README.md"));
  const std::string start = "    build/cli/refinery optimize ../shared/nir/";
  std::size_t at = readme.find(start);
  ASSERT_NE(at, std::string::npos) << "README lost its NIR optimize example";
  std::string command;
  for (std::size_t end = readme.find('\n', at);; end = readme.find('\n', at)) {
    std::string line = readme.substr(at, end - at);
    bool more = line.ends_with("\\");
    command += line.substr(0, line.size() - (more ? 1 : 0));
    at = end + 1;
    if (!more) break;
  }
  command.erase(0, command.find("optimize"));
  auto replace_all = [&](const std::string& from, const std::string& to) {
    for (std::size_t p = command.find(from); p != std::string::npos; p = command.find(from, p + to.size()))
      command.replace(p, from.size(), to);
  };
  // The README's /tmp/ outputs first: the source tree may itself be under /tmp.
  replace_all("/tmp/", nir_scratch("readme.loihi2").parent_path().string() + "/readme.");
  replace_all("../shared/", source_path("../shared/"));
  CliResult r = run_cli(command);
  ASSERT_EQ(r.code, 0) << command << "\n" << r.out << r.err;
  std::string prose = readme;
  std::replace(prose.begin(), prose.end(), '\n', ' ');
  for (const char* quoted : {"chip (loihi2): 2 -> 2 cores, 45 -> 45 neurons, 2166 -> 2166 synapses",
                             "'fc2' needs 38 bits (over by 30)"}) {
    EXPECT_NE(prose.find(quoted), std::string::npos) << "the README no longer quotes: " << quoted;
    EXPECT_NE(r.out.find(quoted), std::string::npos) << r.out;
  }
}

}  // namespace neuromorphic

}  // namespace
}  // namespace refinery::testing
