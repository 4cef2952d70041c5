#include "optimize/tensor_cost.h"

#include <cmath>

#include "runtime/interpreter.h"
#include "targets/workload.h"

namespace refinery::optimize {

using egraph::tensor::kConstantOp;
using egraph::tensor::kInputOp;

bool foldable(ir::Op op, double input_bytes, double output_bytes) {
  if (op == ir::Op::Opaque || op == ir::Op::Constant || ir::op_info(op).stateful) return false;
  if (!runtime::has_kernel(op)) return false;
  return output_bytes <= std::max(input_bytes, 1.0 * (1 << 20));
}

TensorCost::TensorCost(const TensorEGraph& g, const targets::CostModel& model, const std::vector<egraph::Id>& roots,
                       std::vector<double> activity)
    : g_(g), model_(model), activity_(std::move(activity)) {
  root_.assign(g.num_ids(), false);
  for (egraph::Id r : roots) root_[egraph::index(g.find(r))] = true;
  constant_.assign(g.num_ids(), false);
  bool changed = true;
  while (changed) {
    changed = false;
    for (egraph::Id c : g.class_ids()) {
      if (constant_[egraph::index(c)]) continue;
      for (const TensorNode& n : g[c].nodes)
        if (node_is_constant(n)) {
          constant_[egraph::index(c)] = true;
          changed = true;
          break;
        }
    }
  }
}

// The op a class can be computed by that a consumer could fuse into: a
// matrix op if the class has one (the extractor is free to choose it), else
// Opaque. Whether the extracted graph really fuses is settled afterwards:
// never-worse prices the whole graph with its real producers and uses.
ir::Op TensorCost::producer(egraph::Id cls) const {
  if (is_constant(cls)) return ir::Op::Opaque;
  for (const TensorNode& m : g_[cls].nodes)
    if (!m.is_leaf() && targets::classify(m.ir_op()) == targets::OpClass::Matrix) return m.ir_op();
  return ir::Op::Opaque;
}

bool TensorCost::is_constant(egraph::Id cls) const { return constant_[egraph::index(g_.find(cls))]; }

bool TensorCost::node_is_constant(const TensorNode& n) const {
  if (n.op == kConstantOp) return true;
  if (n.op == kInputOp || n.kids.empty()) return false;
  // fold_constants only folds results of static shape.
  if (n.op != kConstantOp && !g_[g_.lookup(n).value_or(n.kids[0])].data.type.shape.is_static()) return false;
  double in = 0;
  for (egraph::Id k : n.kids) {
    if (!constant_[egraph::index(g_.find(k))]) return false;
    in += targets::bytes(g_[k].data.type);
  }
  // Not the output's size: what export leaves unfolded the runtime folds
  // when it loads the model (tensor_cost.h).
  return foldable(n.ir_op(), in, 0) || in == 0;
}

double TensorCost::operator()(egraph::Id cls, const TensorNode& n) const {
  if (n.is_leaf()) return 0;
  const auto& na = g_.analysis().context().attrs(n.payload);
  const ir::TensorType& out = g_[cls].data.type;
  targets::OpDesc d;
  d.op = n.ir_op();
  d.attrs = &na.attrs;
  d.output = &out;
  d.num_outputs = na.num_outputs;
  d.graph_output = root_[egraph::index(g_.find(cls))];
  std::size_t k = 0, positions = na.present.empty() ? n.kids.size() : na.present.size();
  for (std::size_t i = 0; i < positions; ++i) {
    if (!na.present.empty() && !na.present[i]) {
      d.inputs.push_back(nullptr);
      d.input_constant.push_back(false);
      continue;
    }
    egraph::Id kid = n.kids[k++];
    d.inputs.push_back(&g_[kid].data.type);
    d.input_constant.push_back(is_constant(kid));
    d.input_producer.push_back(producer(kid));
    if (std::size_t c = egraph::index(g_.find(kid)); c < activity_.size() && std::isfinite(activity_[c]))
      d.input_activity.push_back(activity_[c]);
    else if (!activity_.empty())
      d.input_activity.push_back(1.0);
  }
  // A tiny tie-breaker per op: among equal costs, fewer nodes.
  return model_.cost(d) + 1e-12;
}

}  // namespace refinery::optimize
