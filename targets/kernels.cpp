#include "targets/kernels.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <unordered_map>
#include <unordered_set>

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
        if (d.is_integer()) ints.push_back(d.value());
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

bool ort_cpu_priced(const OpDesc& d) {
  if (d.op == ir::Op::Constant || !d.output || classify(d.op) == OpClass::Free || ort_cpu_fused_epilogue(d))
    return false;
  return d.op == ir::Op::Opaque || !d.all_inputs_constant();
}

Expected<InContextTimes> in_context_times(const ir::Graph& g, const ir::Graph& opt,
                                          const std::vector<ProfiledKernel>& kernels, double run_ms,
                                          const CostModel& baseline) {
  // The values of g by name, and the names ORT's optimized graph still holds.
  std::unordered_map<std::string, ir::ValueId> value_of;
  for (uint32_t v = 0; v < g.num_values(); ++v)
    if (!g.value(ir::ValueId(v)).name.empty()) value_of[g.value(ir::ValueId(v)).name] = ir::ValueId(v);
  std::unordered_set<std::string> held;
  for (uint32_t v = 0; v < opt.num_values(); ++v) held.insert(opt.value(ir::ValueId(v)).name);
  std::unordered_map<std::string, std::size_t> opt_node;
  for (std::size_t i = 0; i < opt.num_nodes(); ++i) opt_node[opt.nodes()[i].name] = i;
  std::unordered_map<std::string, std::size_t> node_named;
  // ONNX Runtime names a node the file leaves unnamed "<op type>_<its
  // index>" (refinery's extractions write no node names).
  for (std::size_t i = 0; i < g.num_nodes(); ++i) {
    const ir::Node& n = g.nodes()[i];
    const std::string_view type = n.op == ir::Op::Opaque ? std::string_view(n.op_type) : ir::op_info(n.op).onnx_name;
    node_named.emplace(n.name.empty() ? fmt::format("{}_{}", type, i) : n.name, i);
  }
  auto producer = [&](const std::string& name) -> std::ptrdiff_t {
    auto it = value_of.find(name);
    if (it == value_of.end() || g.value(it->second).kind != ir::ValueKind::NodeResult) return -1;
    return ir::index(g.value(it->second).producer);
  };
  // Each kernel's anchor: the node of g computing its result.
  std::vector<std::ptrdiff_t> anchor(kernels.size(), -1);
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    // ORT's saved graph leaves a node unnamed that the profile names
    // "<op type>_<index>": found by that name in g below.
    if (auto it = opt_node.find(kernels[k].name); it != opt_node.end())
      for (ir::ValueId o : opt.nodes()[it->second].outputs)
        if (anchor[k] < 0) anchor[k] = producer(opt.value(o).name);
    // Else by its name: "<value>_nchwc" (an NCHWc kernel), a node's name
    // (kept by a layout change), or "<node name>/<Fusion>[/]" (the fusion's first node).
    const std::string suffix = "_nchwc";
    std::string name = kernels[k].name;
    if (anchor[k] < 0 && name.ends_with(suffix)) anchor[k] = producer(name.substr(0, name.size() - suffix.size()));
    for (int strip = 0; anchor[k] < 0 && strip < 2 && !name.empty(); ++strip) {
      if (auto it = node_named.find(name); it != node_named.end()) anchor[k] = static_cast<std::ptrdiff_t>(it->second);
      if (name.ends_with('/')) name.pop_back();
      name = name.substr(0, name.rfind('/') == std::string::npos ? 0 : name.rfind('/'));
    }
    if (anchor[k] >= 0)
      for (ir::ValueId o : g.nodes()[static_cast<std::size_t>(anchor[k])].outputs) held.insert(g.value(o).name);
  }
  // Groups: an anchor with the nodes upstream of it whose results ORT no
  // longer holds; kernels anchored in one group (an NCHWc kernel and its
  // ReorderOutput) share it.
  std::vector<std::ptrdiff_t> group_of(g.num_nodes(), -1);
  std::vector<std::vector<std::size_t>> groups;
  std::vector<double> group_us;
  std::vector<int> group_kernels;
  InContextTimes out;
  out.kernels = kernels.size();
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    if (anchor[k] < 0) {
      ++out.unmatched;
      continue;
    }
    std::size_t a = static_cast<std::size_t>(anchor[k]);
    if (group_of[a] < 0) {
      group_of[a] = static_cast<std::ptrdiff_t>(groups.size());
      std::vector<std::size_t> nodes{a};
      for (std::size_t i = 0; i < nodes.size(); ++i)
        for (ir::ValueId v : g.nodes()[nodes[i]].inputs) {
          if (v == ir::kNoValue || g.value(v).kind != ir::ValueKind::NodeResult || held.contains(g.value(v).name))
            continue;
          std::size_t p = ir::index(g.value(v).producer);
          if (group_of[p] >= 0) continue;
          group_of[p] = group_of[a];
          nodes.push_back(p);
        }
      groups.push_back(std::move(nodes));
      group_us.push_back(0);
      group_kernels.push_back(0);
    }
    group_us[static_cast<std::size_t>(group_of[a])] += kernels[k].us;
    ++group_kernels[static_cast<std::size_t>(group_of[a])];
  }
  // Priced nodes per group, weighted by the baseline's price of each alone;
  // a group ORT fuses into one op (fused_by_runtime) is that op, at its last node.
  const std::vector<RuntimeFusion> fused = fused_by_runtime(g);
  std::vector<OpDesc> descs = runtime_descs(g, fused);
  std::vector<bool> removed = removed_or_fused_away(g, fused);
  std::vector<std::vector<std::pair<std::size_t, double>>> priced(groups.size());
  for (std::size_t c = 0; c < groups.size(); ++c)
    for (std::size_t n : groups[c]) {
      if (removed[n] || !ort_cpu_priced(descs[n])) continue;
      OpDesc alone = descs[n];
      alone.input_producer.clear();
      priced[c].push_back({n, std::max(1e-12, baseline.cost(alone))});
    }
  // A group's time: its kernels' times scaled, plus `delta` per kernel, at
  // least the floor per priced node.
  auto group_ms = [&](std::size_t c, double delta, double scale) {
    return std::max(kMinNodeMs * static_cast<double>(priced[c].size()),
                    group_us[c] * 1e-3 * scale + delta * group_kernels[c]);
  };
  auto total = [&](double delta, double scale) {
    double s = 0;
    for (std::size_t c = 0; c < groups.size(); ++c)
      if (!priced[c].empty()) s += group_ms(c, delta, scale);
    return s;
  };
  // The time per kernel that makes the priced groups sum to run_ms (the
  // sum grows with it: bisection), within kMaxDispatchMs; beyond that the
  // profile and the run disagree by more than the profiler's cost (they
  // were timed moments apart, under another load): the rest is taken as a
  // scale of the kernels' times, which a constant per kernel would take
  // from the short kernels only (down to the floor) and not the long ones.
  double lo = -run_ms, hi = run_ms;
  if (total(lo, 1) > run_ms || total(hi, 1) < run_ms)
    return fail(fmt::format("the profile's {} kernels cannot sum to the run's {:.4f} ms", kernels.size(), run_ms));
  for (int i = 0; i < 100; ++i) (total((lo + hi) / 2, 1) < run_ms ? lo : hi) = (lo + hi) / 2;
  out.dispatch_ms = std::clamp((lo + hi) / 2, -kMaxDispatchMs, kMaxDispatchMs);
  if (out.dispatch_ms != (lo + hi) / 2) {
    lo = 0, hi = 1;
    while (total(out.dispatch_ms, hi) < run_ms && hi < 1e6) hi *= 2;
    for (int i = 0; i < 100; ++i) (total(out.dispatch_ms, (lo + hi) / 2) < run_ms ? lo : hi) = (lo + hi) / 2;
    out.scale = (lo + hi) / 2;
  }
  out.ms.assign(g.num_nodes(), -1);
  for (std::size_t c = 0; c < groups.size(); ++c) {
    double weight = 0;
    for (const auto& [n, w] : priced[c]) weight += w;
    double ms = group_ms(c, out.dispatch_ms, out.scale);
    for (const auto& [n, w] : priced[c]) out.ms[n] = std::max(kMinNodeMs, ms * w / weight);
  }
  return out;
}

double profile_cpu_factor(double profiled_ms, double run_ms, double runs_cpu_per_wall) {
  const double low = std::clamp(runs_cpu_per_wall, 1e-3, 1.0);
  if (!(profiled_ms > 0) || !(run_ms > 0)) return low;
  return std::clamp(run_ms / profiled_ms, low, 1.0);
}

}  // namespace refinery::targets
