#include "targets/cost_model.h"

#include <algorithm>

#include <fmt/format.h>

#include "targets/learned.h"
#include "targets/workload.h"

namespace refinery::targets {

const ir::Attributes& OpDesc::attributes() const {
  static const ir::Attributes kNone;
  return attrs ? *attrs : kNone;
}

bool OpDesc::all_inputs_constant() const {
  bool any = false;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) continue;
    if (i >= input_constant.size() || !input_constant[i]) return false;
    any = true;
  }
  return any;
}

double CostModel::cost(const OpDesc& op) const {
  if (op.op != ir::Op::Opaque && op.all_inputs_constant()) return 0;
  if (op.op == ir::Op::Constant) return 0;
  return op_cost(op);
}

std::filesystem::path learned_model_file(const HardwareSpec& spec) {
  std::error_code ec;
  std::filesystem::path user = user_cost_models_dir() / spec.learned_model;
  return std::filesystem::exists(user, ec) ? user : spec.folder / spec.learned_model;
}

Expected<Target> load_target(std::string_view name_or_file, const std::string& cost_model) {
  auto spec = find_spec(name_or_file);
  if (!spec) return std::unexpected(spec.error());
  Target t;
  t.name = spec->name;
  const bool analytic_name = t.name.ends_with(kAnalyticSuffix) && spec->kind == TargetKind::Cpu;
  if (!cost_model.empty() && spec->kind != TargetKind::Cpu)
    return fail(fmt::format("--cost-model is for a cpu target; '{}' is {}", t.name, to_string(spec->kind)));
  if (analytic_name && !cost_model.empty() && cost_model != "analytic")
    return fail(
        fmt::format("target '{}' is priced by the analytic model; --cost-model {} asks for a learned one "
                    "(--target {})",
                    t.name, cost_model, t.name.substr(0, t.name.size() - kAnalyticSuffix.size())));
  if (cost_model == "learned" && spec->learned_model.empty())
    return fail(fmt::format("target '{}' names no learned model (spec field learned_model)", t.name));
  if (cost_model == "analytic" || (cost_model.empty() && spec->learned_model.empty())) {
    if (!spec->learned_model.empty()) t.name += kAnalyticSuffix;
    t.model = make_cost_model(std::move(*spec));
    return t;
  }
  t.learned_model_file =
      cost_model.empty() || cost_model == "learned" ? learned_model_file(*spec) : std::filesystem::path(cost_model);
  auto model = make_learned_cpu_model(std::move(*spec), t.learned_model_file);
  if (!model) {
    Diag d = model.error();
    if (cost_model.empty())  // the target's own model: say how to do without it
      d.message += fmt::format(" (the learned cost model of target '{}'; --target {}{} prices with the analytic one)",
                               t.name, t.name, kAnalyticSuffix);
    return std::unexpected(d);
  }
  t.model = std::move(*model);
  return t;
}

namespace {

int64_t normal_axis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

std::vector<int64_t> perm(const ir::Graph& g, const ir::Node& n) {
  const ir::TensorType& x = g.value(n.inputs[0]).type;
  return ir::OpAttrs(n.op, n.attrs, x.shape.ranked() ? x.shape.rank() : -1).get_ints("perm");
}

}  // namespace

std::vector<bool> removed_by_runtime(const ir::Graph& g) {
  std::vector<bool> removed(g.num_nodes(), false);
  std::vector<uint32_t> uses = g.use_counts();
  for (std::size_t i = 0; i < g.num_nodes(); ++i) {
    const ir::Node& n = g.nodes()[i];
    if (n.inputs.empty() || n.inputs[0] == ir::kNoValue) continue;
    const ir::Value& in = g.value(n.inputs[0]);
    // A producer already paired with its own input stays.
    if (in.kind != ir::ValueKind::NodeResult || uses[ir::index(n.inputs[0])] != 1 || removed[ir::index(in.producer)])
      continue;
    const ir::Node& p = g.node(in.producer);
    if (n.op == ir::Op::Transpose && p.op == ir::Op::Transpose && g.value(p.inputs[0]).type.shape.ranked()) {
      std::vector<int64_t> first = perm(g, p), second = perm(g, n);
      bool inverse = first.size() == second.size();
      for (std::size_t j = 0; inverse && j < second.size(); ++j)
        inverse = second[j] >= 0 && static_cast<std::size_t>(second[j]) < first.size() &&
                  first[static_cast<std::size_t>(second[j])] == static_cast<int64_t>(j);
      if (inverse) removed[i] = removed[ir::index(in.producer)] = true;
    }
    if (n.op == ir::Op::Split && p.op == ir::Op::Concat && p.inputs.size() == n.outputs.size() &&
        g.value(p.outputs[0]).type.shape.ranked()) {
      int64_t rank = g.value(p.outputs[0]).type.shape.rank();
      bool same = normal_axis(ir::OpAttrs(p.op, p.attrs, rank).get_int("axis"), rank) ==
                  normal_axis(ir::OpAttrs(n.op, n.attrs, rank).get_int("axis"), rank);
      for (std::size_t j = 0; same && j < n.outputs.size(); ++j)
        same = p.inputs[j] != ir::kNoValue && g.value(p.inputs[j]).type == g.value(n.outputs[j]).type;
      if (same) removed[i] = removed[ir::index(in.producer)] = true;
    }
  }
  // A Transpose of a MatMul's operand that swaps its last two axes only:
  // ONNX Runtime's MatmulTransposeFusion folds it into a FusedMatMul
  // (transA/transB), so it runs no kernel (as attn_2d's `Q K^T` does).
  for (const ir::Node& n : g.nodes()) {
    if (n.op != ir::Op::MatMul) continue;
    for (ir::ValueId v : n.inputs) {
      if (v == ir::kNoValue || g.value(v).kind != ir::ValueKind::NodeResult || uses[ir::index(v)] != 1) continue;
      const ir::Node& t = g.node(g.value(v).producer);
      const ir::Shape& x = g.value(t.inputs[0]).type.shape;
      if (t.op != ir::Op::Transpose || !x.ranked() || x.rank() < 2) continue;
      std::vector<int64_t> p = perm(g, t);
      bool swap_last = p.size() == static_cast<std::size_t>(x.rank());
      for (std::size_t j = 0; swap_last && j < p.size(); ++j)
        swap_last = p[j] == static_cast<int64_t>(j + 2 < p.size() ? j : (j + 2 == p.size() ? j + 1 : j - 1));
      if (swap_last) removed[ir::index(g.value(v).producer)] = true;
    }
  }
  return removed;
}

std::vector<bool> constant_values(const ir::Graph& g) {
  std::vector<bool> constant(g.num_values(), false);
  for (ir::ValueId v : g.constants()) constant[ir::index(v)] = true;
  for (const ir::Node& n : g.nodes()) {
    bool all_const = n.op != ir::Op::Opaque;
    for (ir::ValueId v : n.inputs)
      if (v != ir::kNoValue && !constant[ir::index(v)]) all_const = false;
    for (ir::ValueId o : n.outputs) constant[ir::index(o)] = all_const;
  }
  return constant;
}

namespace {

// One op over `inputs` computing `outputs` as a cost model sees it: an
// input's producer counted when this op is its one use.
OpDesc describe(const ir::Graph& g, ir::Op op, const ir::Attributes& attrs, const std::vector<ir::ValueId>& inputs,
                const std::vector<ir::ValueId>& outputs, const std::vector<bool>& constant,
                const std::vector<uint32_t>& uses, const std::vector<ir::Op>& producer) {
  OpDesc d;
  d.op = op;
  d.attrs = &attrs;
  for (ir::ValueId v : inputs) {
    d.inputs.push_back(v == ir::kNoValue ? nullptr : &g.value(v).type);
    d.input_constant.push_back(v != ir::kNoValue && constant[ir::index(v)]);
    d.input_producer.push_back(v != ir::kNoValue && uses[ir::index(v)] == 1 ? producer[ir::index(v)]
                                                                            : ir::Op::Opaque);
  }
  d.num_outputs = static_cast<int>(outputs.size());
  d.output = outputs.empty() ? nullptr : &g.value(outputs[0]).type;
  d.graph_output = !outputs.empty() && std::ranges::find(g.outputs(), outputs[0]) != g.outputs().end();
  return d;
}

// Each value's producing op (Opaque for graph inputs and constants).
std::vector<ir::Op> producer_ops(const ir::Graph& g) {
  std::vector<ir::Op> producer(g.num_values(), ir::Op::Opaque);
  for (const ir::Node& n : g.nodes())
    for (ir::ValueId o : n.outputs) producer[ir::index(o)] = n.op;
  return producer;
}

}  // namespace

std::vector<OpDesc> node_descs(const ir::Graph& g) {
  std::vector<bool> constant = constant_values(g);
  // Each value's producing op when it has exactly one use (a graph output
  // counts as a use): only then can a runtime fuse its consumer into it.
  std::vector<uint32_t> uses = g.use_counts();
  std::vector<ir::Op> producer = producer_ops(g);
  std::vector<OpDesc> out;
  out.reserve(g.num_nodes());
  for (const ir::Node& n : g.nodes())
    out.push_back(describe(g, n.op, n.attrs, n.inputs, n.outputs, constant, uses, producer));
  return out;
}

std::vector<OpDesc> runtime_descs(const ir::Graph& g, const std::vector<RuntimeFusion>& fused) {
  std::vector<OpDesc> descs = node_descs(g);
  if (fused.empty()) return descs;
  std::vector<bool> constant = constant_values(g);
  std::vector<uint32_t> uses = g.use_counts();
  std::vector<ir::Op> producer = producer_ops(g);
  for (const RuntimeFusion& f : fused) {
    OpDesc& d = descs[f.nodes.back()];
    d = describe(g, f.op, f.attrs, f.inputs, g.nodes()[f.nodes.back()].outputs, constant, uses, producer);
    // X's producer when the group's reads are all its uses (the fused op then its one).
    const ir::ValueId x = f.inputs[0];
    std::size_t reads = 0;
    for (std::size_t n : f.nodes) reads += static_cast<std::size_t>(std::ranges::count(g.nodes()[n].inputs, x));
    if (uses[ir::index(x)] == reads) d.input_producer[0] = producer[ir::index(x)];
  }
  return descs;
}

std::vector<bool> removed_or_fused_away(const ir::Graph& g, const std::vector<RuntimeFusion>& fused) {
  std::vector<bool> removed = removed_by_runtime(g);
  for (const RuntimeFusion& f : fused)
    for (std::size_t n : f.nodes)
      if (n != f.nodes.back()) removed[n] = true;
  return removed;
}

std::vector<double> node_costs(const CostModel& model, const ir::Graph& g) {
  const std::vector<RuntimeFusion> fused = fused_by_runtime(g);
  std::vector<bool> removed = removed_or_fused_away(g, fused);
  std::vector<OpDesc> descs = runtime_descs(g, fused);
  std::vector<double> out;
  out.reserve(g.num_nodes());
  for (std::size_t i = 0; i < g.num_nodes(); ++i) {
    OpDesc& d = descs[i];
    double total = 0;
    if (!removed[i])
      for (ir::ValueId o : g.nodes()[i].outputs) {
        d.output = &g.value(o).type;
        total += model.cost(d);
      }
    out.push_back(total);
  }
  return out;
}

ir::Work graph_work(const ir::Graph& g) {
  std::vector<bool> removed = removed_by_runtime(g);
  std::vector<bool> constant = constant_values(g);
  ir::Work total;
  for (std::size_t i = 0; i < g.num_nodes(); ++i) {
    const ir::Node& n = g.nodes()[i];
    if (removed[i] || n.op == ir::Op::Constant || classify(n.op) == OpClass::Free) continue;
    if (n.op != ir::Op::Opaque && !n.outputs.empty() && constant[ir::index(n.outputs[0])]) continue;
    ir::Work w = ir::node_work(g, n);
    total.flops += w.flops;
    total.epilogue_flops += w.epilogue_flops;
    total.bytes_read += w.bytes_read;
    total.bytes_written += w.bytes_written;
    total.exact = total.exact && w.exact;
  }
  return total;
}

double graph_cost(const CostModel& model, const ir::Graph& g) {
  double total = 0;
  for (double c : node_costs(model, g)) total += c;
  return total;
}

}  // namespace refinery::targets
