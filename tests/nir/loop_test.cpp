// Recurrent loops: which edges read the previous step depends on the graph,
// not on node names (docs/nir.md). gen_loop.nir and gen_loop_renamed.nir are
// one network under names whose order is reversed.
#include <gtest/gtest.h>

#include <set>

#include "frontends/nir.h"
#include "nir_test_files.h"
#include "runtime/spiking.h"

namespace refinery {
namespace {

using Edge = std::pair<std::string, std::string>;

// (producer, consumer) of every operand that reads the previous step.
std::set<Edge> recurrent_edges(const ir::Graph& g) {
  std::set<Edge> out;
  for (size_t i = 0; i < g.num_nodes(); ++i)
    for (ir::ValueId in : g.nodes()[i].inputs) {
      if (in == ir::kNoValue) continue;
      const ir::Value& v = g.value(in);
      if (v.kind == ir::ValueKind::NodeResult && ir::index(v.producer) >= i)
        out.emplace(g.node(v.producer).name, g.nodes()[i].name);
    }
  return out;
}

ir::Graph load(const std::string& name) {
  if (test::generated_nir().empty()) ADD_FAILURE() << test::kPythonMissing;
  auto g = frontends::import_nir(test::generated_nir() / name);
  EXPECT_TRUE(g.has_value()) << (g ? "" : g.error().str());
  return g ? *g : ir::Graph{};
}

TEST(NirLoop, TheDelayClosesTheLoopWhateverTheNames) {
  // front sums the input and lif_a's spikes: it reads lif_a's previous step,
  // so the input reaches lif_a within the step; the second loop closes at the
  // edge back into lif_a.
  EXPECT_EQ(recurrent_edges(load("gen_loop.nir")),
            (std::set<Edge>{{"lif_a", "front:in"}, {"fc_back", "lif_a:in"}}));
  EXPECT_EQ(recurrent_edges(load("gen_loop_renamed.nir")),
            (std::set<Edge>{{"y_lif", "z_front:in"}, {"a_fc", "y_lif:in"}}));
}

TEST(NirLoop, RenamingNodesKeepsTheSpikeTrains) {
  ir::Graph a = load("gen_loop.nir"), b = load("gen_loop_renamed.nir");
  ASSERT_EQ(a.inputs().size(), 1u);
  int64_t spikes = 0;
  for (auto d : {runtime::Discretisation::Euler, runtime::Discretisation::Exact})
    for (auto r : {runtime::Reset::ToValue, runtime::Reset::Subtract}) {
      runtime::SimOptions o{.dt = 1e-3, .steps = 150, .discretisation = d, .reset = r};
      auto in = runtime::random_spike_inputs(a, o.steps, 0.3, 11);
      auto ra = runtime::simulate(a, in, o), rb = runtime::simulate(b, in, o);
      ASSERT_TRUE(ra && rb);
      auto train = [](const runtime::SimResult& s, const std::string& name) {
        for (const auto& l : s.layers)
          if (l.name == name) return l.spikes;
        ADD_FAILURE() << "no layer " << name;
        return std::vector<uint8_t>{};
      };
      EXPECT_EQ(train(*ra, "lif_a"), train(*rb, "y_lif")) << runtime::describe(o);
      EXPECT_EQ(train(*ra, "lif_b"), train(*rb, "b_lif")) << runtime::describe(o);
      for (const auto& l : ra->layers) spikes += l.spike_count;
    }
  EXPECT_GT(spikes, 0) << "the network never spiked: the check would be empty";
}

}  // namespace
}  // namespace refinery
