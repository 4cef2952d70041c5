// Structural comparison of graphs, for round-trip tests.
#include <fmt/format.h>

#include "ir/text.h"

namespace refinery::ir {
namespace {

std::string name_of(const Graph& g, ValueId v) { return v == kNoValue ? "none" : g.value(v).name; }

}  // namespace

std::string graph_difference(const Graph& a, const Graph& b) {
  if (a.inputs().size() != b.inputs().size())
    return fmt::format("{} inputs vs {}", a.inputs().size(), b.inputs().size());
  for (size_t i = 0; i < a.inputs().size(); ++i) {
    const Value &x = a.value(a.inputs()[i]), &y = b.value(b.inputs()[i]);
    if (x.name != y.name || x.type != y.type)
      return fmt::format("input {}: {} {} vs {} {}", i, x.name, x.type.str(), y.name, y.type.str());
  }
  if (a.constants().size() != b.constants().size())
    return fmt::format("{} constants vs {}", a.constants().size(), b.constants().size());
  for (size_t i = 0; i < a.constants().size(); ++i) {
    const Value &x = a.value(a.constants()[i]), &y = b.value(b.constants()[i]);
    if (x.name != y.name) return fmt::format("constant {}: {} vs {}", i, x.name, y.name);
    if (!x.constant->bitwise_equal(*y.constant)) return fmt::format("constant {}: contents differ", x.name);
  }
  if (a.num_nodes() != b.num_nodes()) return fmt::format("{} nodes vs {}", a.num_nodes(), b.num_nodes());
  for (size_t n = 0; n < a.num_nodes(); ++n) {
    const Node &x = a.nodes()[n], &y = b.nodes()[n];
    std::string label = a.node_label(NodeId{static_cast<uint32_t>(n)});
    if (x.op != y.op || x.domain != y.domain || x.op_type != y.op_type)
      return fmt::format("node {}: op differs", label);
    if (x.name != y.name) return fmt::format("node {}: name '{}' vs '{}'", label, x.name, y.name);
    if (!(x.attrs == y.attrs)) return fmt::format("node {}: attributes differ", label);
    if (x.inputs.size() != y.inputs.size()) return fmt::format("node {}: input count differs", label);
    for (size_t i = 0; i < x.inputs.size(); ++i)
      if (name_of(a, x.inputs[i]) != name_of(b, y.inputs[i]))
        return fmt::format("node {}: input {} is {} vs {}", label, i, name_of(a, x.inputs[i]), name_of(b, y.inputs[i]));
    if (x.outputs.size() != y.outputs.size()) return fmt::format("node {}: output count differs", label);
    for (size_t i = 0; i < x.outputs.size(); ++i) {
      const Value &u = a.value(x.outputs[i]), &w = b.value(y.outputs[i]);
      if (u.name != w.name || u.type != w.type)
        return fmt::format("node {}: output {} is {} {} vs {} {}", label, i, u.name, u.type.str(), w.name,
                           w.type.str());
    }
  }
  if (a.outputs().size() != b.outputs().size()) return "output count differs";
  for (size_t i = 0; i < a.outputs().size(); ++i)
    if (name_of(a, a.outputs()[i]) != name_of(b, b.outputs()[i])) return fmt::format("output {} differs", i);
  const ModelInfo &p = a.info, &q = b.info;
  if (p.ir_version != q.ir_version || p.opsets != q.opsets || p.producer_name != q.producer_name ||
      p.producer_version != q.producer_version || p.domain != q.domain || p.doc_string != q.doc_string ||
      p.model_version != q.model_version || p.metadata != q.metadata || p.graph_name != q.graph_name)
    return "model info differs";
  if (p.onnx_functions != q.onnx_functions) return "ONNX model-local functions differ";
  return {};
}

}  // namespace refinery::ir
