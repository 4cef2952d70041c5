#include "targets/kernels.h"

#include <cmath>
#include <fmt/format.h>
#include <map>

#include "targets/cost_model.h"
#include "targets/workload.h"

namespace refinery::targets {

std::vector<Kernel> ort_cpu_kernels(const ir::Graph& g) {
  std::vector<bool> removed = removed_by_runtime(g);
  std::vector<OpDesc> descs = node_descs(g);
  std::vector<Kernel> out;
  std::vector<std::ptrdiff_t> kernel_of(g.num_nodes(), -1);
  for (std::size_t i = 0; i < g.num_nodes(); ++i) {
    const ir::Node& n = g.nodes()[i];
    const OpDesc& d = descs[i];
    if (removed[i] || n.op == ir::Op::Constant || classify(n.op) == OpClass::Free || !d.output) continue;
    if (n.op != ir::Op::Opaque && d.all_inputs_constant()) continue;
    if (ort_cpu_fused_epilogue(d)) {
      // Join the kernel of the input whose producer it fuses into.
      bool joined = false;
      for (ir::ValueId v : n.inputs) {
        if (v == ir::kNoValue || g.value(v).kind != ir::ValueKind::NodeResult) continue;
        std::ptrdiff_t k = kernel_of[ir::index(g.value(v).producer)];
        if (k >= 0 && out[static_cast<std::size_t>(k)].nodes.size() == 1 &&
            out[static_cast<std::size_t>(k)].nodes[0] == ir::index(g.value(v).producer)) {
          out[static_cast<std::size_t>(k)].nodes.push_back(i);
          kernel_of[i] = k;
          joined = true;
          break;
        }
      }
      if (joined) continue;
    }
    kernel_of[i] = static_cast<std::ptrdiff_t>(out.size());
    out.push_back(Kernel{{i}});
  }
  return out;
}

namespace {

ir::TensorType varied(const ir::TensorType& t, const Variation& v) {
  ir::TensorType out = t;
  if (!out.shape.ranked()) return out;
  auto& dims = out.shape.dims();
  for (auto& d : dims)
    if (!d.is_static()) d = ir::Dim(1);
  const std::size_t rank = dims.size();
  auto scale = [&](std::size_t i, double f) {
    dims[i] = ir::Dim(std::max<int64_t>(1, std::llround(static_cast<double>(dims[i].size()) * f)));
  };
  if (rank >= 1) scale(0, static_cast<double>(v.batch));
  if (rank == 4) scale(2, v.spatial), scale(3, v.spatial);
  if (rank == 3) scale(1, v.spatial);
  return out;
}

}  // namespace

Expected<ir::Graph> kernel_graph(const ir::Graph& g, const Kernel& kernel, const Variation& variation) {
  ir::Graph micro;
  micro.info.opsets = g.info.opsets;
  micro.info.ir_version = g.info.ir_version;
  micro.info.producer_name = "refinery measure";
  std::vector<OpDesc> descs = node_descs(g);
  std::map<uint32_t, ir::ValueId> mapped;  // value index in g -> value in micro
  auto copy_node = [&](std::size_t i, auto& value_of) -> void {
    const ir::Node& n = g.nodes()[i];
    std::vector<ir::ValueId> inputs = n.inputs;
    for (std::size_t j = 0; j < n.inputs.size(); ++j)
      if (n.inputs[j] != ir::kNoValue) inputs[j] = value_of(n.inputs[j], descs[i].input_constant[j], value_of);
    std::vector<ir::ValueId> results = micro.add_copy(g, n, std::move(inputs));
    for (std::size_t k = 0; k < n.outputs.size(); ++k) mapped[ir::index(n.outputs[k])] = results[k];
  };
  // A value from outside the kernel: a constant stays one (a constant
  // expression with its producers: ONNX Runtime folds them when it loads
  // the model, so they are not timed), anything else is a graph input.
  auto value_of = [&](ir::ValueId v, bool constant, auto& self) -> ir::ValueId {
    auto it = mapped.find(ir::index(v));
    if (it != mapped.end()) return it->second;
    const ir::Value& val = g.value(v);
    if (val.kind == ir::ValueKind::Constant) return mapped[ir::index(v)] = micro.add_constant(val.name, val.constant);
    if (constant && val.kind == ir::ValueKind::NodeResult) {
      copy_node(ir::index(val.producer), self);
      return mapped.at(ir::index(v));
    }
    // An integer computed from shapes (Slice bounds, Reshape targets), its
    // value known: as the constant ONNX Runtime's shape folding makes it.
    if (const auto& known = g.known_value(v); known && val.type.dtype == ir::DType::i64 && val.type.shape.ranked() &&
                                              val.type.shape.rank() <= 1) {
      std::vector<int64_t> ints;
      for (const ir::Dim& d : *known)
        if (d.is_static()) ints.push_back(d.size());
      if (ints.size() == known->size()) {
        ir::Tensor t = val.type.shape.rank() == 0 ? ir::Tensor::from_values<int64_t>(ir::DType::i64, {}, ints)
                                                  : ir::Tensor::vector_i64(ints);
        return mapped[ir::index(v)] = micro.add_constant(val.name, std::make_shared<const ir::Tensor>(std::move(t)));
      }
    }
    return mapped[ir::index(v)] = micro.add_input(val.name, varied(val.type, variation));
  };
  for (std::size_t i : kernel.nodes) copy_node(i, value_of);
  micro.set_outputs(micro.nodes().back().outputs);
  if (auto ok = micro.infer_shapes(); !ok) return std::unexpected(ok.error());
  for (ir::ValueId o : micro.outputs())
    if (!micro.value(o).type.shape.is_static())
      return fail(fmt::format("{}: the result's shape is not static", g.node_label(ir::NodeId(kernel.nodes[0]))));
  if (auto ok = micro.verify(); !ok) return std::unexpected(ok.error());
  return micro;
}

}  // namespace refinery::targets
