// The independent check: Refinery's spiking runtime and tools/nir_sim.py (numpy,
// written from NIR's equations) run the same networks on the same inputs, and
// their spike trains (and output values) must agree exactly, step by step.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "frontends/nir.h"
#include "nir_test_files.h"
#include "runtime/spiking.h"

namespace refinery {
namespace {

namespace fs = std::filesystem;
using runtime::Discretisation;
using runtime::Reset;

struct Case {
  std::string file;  // shared name, or "gen:NAME" for a generated network
  double dt;
  double rate;  // input spike probability per step
};
// How gtest and ctest name a case (else as its bytes).
void PrintTo(const Case& c, std::ostream* os) { *os << fmt::format("{} dt={:g} rate={:g}", c.file, c.dt, c.rate); }

fs::path path_of(const Case& c) {
  if (c.file.starts_with("gen:")) return test::generated_nir() / c.file.substr(4);
  return test::shared_nir(c.file);
}

// Runs both simulators; returns the number of spikes compared.
int64_t agree(const Case& c, const runtime::SimOptions& o, uint64_t seed) {
  auto g = frontends::import_nir(path_of(c));
  EXPECT_TRUE(g.has_value()) << (g ? "" : g.error().str());
  if (!g) return 0;
  auto inputs = runtime::random_spike_inputs(*g, o.steps, c.rate, seed);
  fs::path dir = fs::path(REFINERY_BINARY_DIR) / "tests" / "nir" / "agree";
  fs::create_directories(dir);
  std::string stem = fmt::format("{}_{}_{}", path_of(c).stem().string(), runtime::discretisation_name(o.discretisation),
                                 runtime::reset_name(o.reset));
  fs::path in = dir / (stem + ".in.bin"), out = dir / (stem + ".py.txt");
  {
    std::ofstream f(in, std::ios::binary);
    for (const auto& t : inputs)
      f.write(static_cast<const char*>(t.data()), static_cast<std::streamsize>(t.bytes().size()));
  }
  auto mine = runtime::simulate(*g, inputs, o);
  EXPECT_TRUE(mine.has_value()) << (mine ? "" : mine.error().str());
  if (!mine) return 0;
  std::string cmd = fmt::format(
      "{} {}/tools/nir_sim.py {} --steps {} --dt {:.17g} --discretisation {} --reset {} "
      "--input {} --out {}",
      test::kPython, REFINERY_SOURCE_DIR, path_of(c).string(), o.steps, o.dt,
      runtime::discretisation_name(o.discretisation), runtime::reset_name(o.reset), in.string(), out.string());
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream f(out);
  std::string line;
  int64_t compared = 0, lines = 0;
  while (std::getline(f, line)) {
    std::istringstream ls(line);
    std::string kind, name, data;
    std::getline(ls, kind, '\t');
    std::getline(ls, name, '\t');
    std::getline(ls, data);
    ++lines;
    if (kind == "spikes") {
      auto it = std::find_if(mine->layers.begin(), mine->layers.end(), [&](const auto& l) { return l.name == name; });
      EXPECT_NE(it, mine->layers.end()) << name;
      if (it == mine->layers.end()) continue;
      std::string bits;
      for (uint8_t b : it->spikes) bits += b ? '1' : '0';
      EXPECT_EQ(bits.size(), data.size()) << name;
      for (size_t i = 0; i < bits.size() && i < data.size(); ++i)
        if (bits[i] != data[i]) {
          ADD_FAILURE() << stem << ": layer " << name << " differs first at step " << i / static_cast<size_t>(it->size)
                        << ", neuron " << i % static_cast<size_t>(it->size);
          return compared;
        }
      compared += it->spike_count;
    } else {
      size_t k = 0;
      for (; k < g->outputs().size(); ++k)
        if (g->value(g->outputs()[k]).name == name) break;
      if (k == g->outputs().size()) {
        ADD_FAILURE() << "no output " << name;
        continue;
      }
      std::istringstream vs(data);
      std::string hex;
      for (int64_t i = 0; vs >> hex; ++i)
        if (std::strtod(hex.c_str(), nullptr) != mine->outputs[k].as_double(i)) {
          ADD_FAILURE() << stem << ": output " << name << " differs first at element " << i << ": numpy " << hex
                        << ", refinery " << fmt::format("{:a}", mine->outputs[k].as_double(i));
          return compared;
        }
    }
  }
  EXPECT_GT(lines, 0) << "no output from " << cmd;
  return compared;
}

class Agreement : public ::testing::TestWithParam<Case> {};

TEST_P(Agreement, SpikeTrainsAreEqual) {
  if (!test::python_ready()) FAIL() << test::kPythonMissing;
  if (GetParam().file.starts_with("gen:")) {
    ASSERT_FALSE(test::generated_nir().empty()) << "tools/make_nir_examples.py failed";
  }
  int64_t total = 0;
  for (auto d : {Discretisation::Euler, Discretisation::Exact})
    for (auto r : {Reset::ToValue, Reset::Subtract}) {
      runtime::SimOptions o{.dt = GetParam().dt, .steps = 120, .discretisation = d, .reset = r};
      int64_t n = agree(GetParam(), o, 7);
      fmt::print("  {} {}: {} spikes agree\n", GetParam().file, runtime::describe(o), n);
      total += n;
    }
  EXPECT_GT(total, 0) << "the network never spiked: the check would be empty";
}

INSTANTIATE_TEST_SUITE_P(
    Nir, Agreement,
    ::testing::Values(Case{"paper_01_lif_lif_norse.nir", 1e-4, 0.5}, Case{"paper_01_lif_lif_rockpool.nir", 1e-4, 0.5},
                      Case{"paper_02_cnn_cnn_sinabs.nir", 1.0, 0.3},
                      Case{"paper_03_rnn_braille_noDelay_bias_zero.nir", 1e-4, 0.4},
                      Case{"NIRTorch_tests_feedback_graph.nir", 1e-3, 0.5}, Case{"gen:gen_lif.nir", 1e-3, 0.3},
                      Case{"gen:gen_cubalif.nir", 1e-3, 0.3}, Case{"gen:gen_if.nir", 0.5, 0.3},
                      Case{"gen:gen_recurrent.nir", 1e-3, 0.3}, Case{"gen:gen_nested.nir", 1e-3, 0.4},
                      Case{"gen:gen_loop.nir", 1e-3, 0.3}, Case{"gen:gen_loop_renamed.nir", 1e-3, 0.3}),
    [](const auto& info) {
      std::string s =
          fs::path(info.param.file.starts_with("gen:") ? info.param.file.substr(4) : info.param.file).stem().string();
      for (char& ch : s)
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return s;
    });

}  // namespace
}  // namespace refinery
