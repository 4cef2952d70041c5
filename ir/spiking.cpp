// Figures of spiking graphs (see ir/spiking.h).
#include "ir/spiking.h"

namespace refinery::ir {

bool is_spiking_graph(const Graph& graph) {
  for (const Node& n : graph.nodes())
    if (n.op != Op::Opaque && op_info(n.op).stateful) return true;
  return false;
}

SpikingStats spiking_stats(const Graph& graph) {
  SpikingStats s;
  for (ValueId c : graph.constants()) s.parameters += graph.value(c).constant->numel();
  for (size_t i = 0; i < graph.num_nodes(); ++i) {
    const Node& n = graph.nodes()[i];
    for (ValueId in : n.inputs) {
      if (in == kNoValue) continue;
      const Value& v = graph.value(in);
      if (v.kind == ValueKind::NodeResult && index(v.producer) >= i) ++s.recurrent_edges;
    }
    if (!is_nir_op(n.op)) continue;
    ++s.layers;
    int64_t out = graph.value(n.outputs[0]).type.shape.num_elements().value_or(0);
    if (op_info(n.op).stateful && n.op != Op::Delay) s.neurons += out;
    if (n.op == Op::Affine || n.op == Op::Linear) {
      s.synapses += graph.value(n.inputs[1]).type.shape.num_elements().value_or(0);
    } else if (n.op == Op::NirConv1d || n.op == Op::NirConv2d) {
      // each output element sees C/group x kernel inputs
      const Shape& w = graph.value(n.inputs[1]).type.shape;
      int64_t fan_in = 1;
      for (int64_t d = 1; d < w.rank(); ++d) fan_in *= w[d].size();
      s.synapses += out * fan_in;
    }
  }
  return s;
}

}  // namespace refinery::ir
