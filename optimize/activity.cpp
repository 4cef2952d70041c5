#include "optimize/activity.h"

#include <cmath>
#include <limits>

#include "ir/spiking.h"
#include "runtime/spiking.h"

namespace refinery::optimize {

Expected<std::vector<double>> measure_activity(const ir::Graph& graph, const verify::ValidationOptions& o) {
  constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> nonzero(graph.num_values(), 0.0), total(graph.num_values(), 0.0);
  for (int s = 0; s < o.samples; ++s) {
    auto inputs = runtime::random_spike_inputs(graph, o.sim.steps, o.spike_rate, o.seed + static_cast<uint64_t>(s));
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const std::size_t v = ir::index(graph.inputs()[k]);
      for (int64_t i = 0; i < inputs[k].numel(); ++i) nonzero[v] += inputs[k].as_double(i) != 0;
      total[v] += static_cast<double>(inputs[k].numel());
    }
    auto run = runtime::simulate(graph, inputs, o.sim);
    if (!run) return fail("the graph does not simulate (measuring spike rates): " + run.error().str());
    std::size_t layer = 0;
    for (std::size_t n = 0; n < graph.num_nodes() && layer < run->layers.size(); ++n) {
      if (!ir::is_nir_op(graph.nodes()[n].op)) continue;
      const runtime::LayerTrace& t = run->layers[layer++];
      const std::size_t v = ir::index(graph.nodes()[n].outputs[0]);
      nonzero[v] += static_cast<double>(t.nonzero);
      total[v] += static_cast<double>(t.size * o.sim.steps);
    }
  }
  std::vector<double> activity(graph.num_values(), kUnknown);
  for (std::size_t v = 0; v < activity.size(); ++v)
    if (total[v] > 0) activity[v] = nonzero[v] / total[v];
  return activity;
}

std::vector<double> class_activity(const egraph::tensor::TensorEGraph& g, const egraph::tensor::Origin& origin,
                                   const std::vector<double>& value_activity) {
  if (value_activity.empty()) return {};
  std::vector<double> out(g.num_ids(), std::numeric_limits<double>::quiet_NaN());
  for (std::size_t v = 0; v < origin.value_class.size() && v < value_activity.size(); ++v)
    if (std::isfinite(value_activity[v])) out[egraph::index(g.find(origin.value_class[v]))] = value_activity[v];
  for (int pass = 0; pass < 4; ++pass)
    for (egraph::Id c : g.class_ids()) {
      double& a = out[egraph::index(c)];
      if (std::isfinite(a)) continue;
      for (const auto& n : g[c].nodes) {
        for (egraph::Id k : n.kids)
          if (std::isfinite(out[egraph::index(g.find(k))])) {
            a = out[egraph::index(g.find(k))];
            break;
          }
        if (std::isfinite(a)) break;
      }
    }
  return out;
}

}  // namespace refinery::optimize
