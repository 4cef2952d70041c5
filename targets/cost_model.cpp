#include "targets/cost_model.h"

namespace refinery::targets {

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

Expected<Target> load_target(std::string_view name_or_file) {
  auto spec = find_spec(name_or_file);
  if (!spec) return std::unexpected(spec.error());
  Target t;
  t.name = spec->name;
  t.model = make_cost_model(std::move(*spec));
  return t;
}

std::vector<double> node_costs(const CostModel& model, const ir::Graph& g) {
  // Values that are constants or computed only from constants.
  std::vector<bool> constant(g.num_values(), false);
  for (ir::ValueId v : g.constants()) constant[ir::index(v)] = true;
  // Each value's producing op when it has exactly one use (a graph output
  // counts as a use): only then can a runtime fuse its consumer into it.
  std::vector<int> uses(g.num_values(), 0);
  std::vector<ir::Op> producer(g.num_values(), ir::Op::Opaque);
  for (const ir::Node& n : g.nodes()) {
    for (ir::ValueId v : n.inputs)
      if (v != ir::kNoValue) ++uses[ir::index(v)];
    for (ir::ValueId o : n.outputs) producer[ir::index(o)] = n.op;
  }
  for (ir::ValueId v : g.outputs()) ++uses[ir::index(v)];
  std::vector<double> out;
  out.reserve(g.num_nodes());
  for (const ir::Node& n : g.nodes()) {
    OpDesc d;
    d.op = n.op;
    d.attrs = &n.attrs;
    bool all_const = n.op != ir::Op::Opaque;
    for (ir::ValueId v : n.inputs) {
      d.inputs.push_back(v == ir::kNoValue ? nullptr : &g.value(v).type);
      bool c = v != ir::kNoValue && constant[ir::index(v)];
      d.input_constant.push_back(c);
      d.input_producer.push_back(v != ir::kNoValue && uses[ir::index(v)] == 1 ? producer[ir::index(v)]
                                                                              : ir::Op::Opaque);
      if (v != ir::kNoValue && !c) all_const = false;
    }
    if (n.op == ir::Op::Constant) all_const = true;
    d.num_outputs = static_cast<int>(n.outputs.size());
    double total = 0;
    for (ir::ValueId o : n.outputs) {
      d.output = &g.value(o).type;
      total += model.cost(d);
      constant[ir::index(o)] = all_const;
    }
    out.push_back(total);
  }
  return out;
}

double graph_cost(const CostModel& model, const ir::Graph& g) {
  double total = 0;
  for (double c : node_costs(model, g)) total += c;
  return total;
}

}  // namespace refinery::targets
