#include "ir/stats.h"

#include <cmath>

#include "ir/work.h"

namespace refinery::ir {

GraphStats compute_stats(const Graph& g) {
  GraphStats s;
  for (ValueId v : g.constants()) {
    s.num_parameters += g.value(v).constant->numel();
    s.parameter_bytes += static_cast<int64_t>(g.value(v).constant->bytes().size());
  }
  for (const Node& n : g.nodes()) {
    ++s.num_nodes;
    ++s.op_histogram[n.op == Op::Opaque ? (n.domain.empty() ? n.op_type : n.domain + "::" + n.op_type)
                                        : std::string(op_info(n.op).onnx_name)];
    Work w = node_work(g, n);
    if (!w.exact)
      ++s.nodes_without_flops;
    else
      s.flops += std::llround(w.flops);
  }
  return s;
}

}  // namespace refinery::ir
