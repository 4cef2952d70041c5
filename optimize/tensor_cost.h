// Prices tensor e-nodes with a target's cost model, for extraction, as
// targets::graph_cost prices a graph (the law tests/optimize/tensor_cost_test
// checks). A class is constant when one of its nodes is a constant leaf or
// an op the interpreter runs on constant classes: such nodes cost nothing.
// Export folds what foldable() accepts into initializers (fold.h); a larger
// result (an Expand to a batch of per-position maps) stays an op, which the
// runtime folds when it loads the model: ONNX Runtime 1.30 runs none of
// them per inference (docs/measurements.md, session 25).
#pragma once

#include <vector>

#include "egraph/tensor/analysis.h"
#include "targets/cost_model.h"

namespace refinery::optimize {

using egraph::tensor::TensorEGraph;
using egraph::tensor::TensorNode;

// Whether export will evaluate `op` once when its inputs are constants: an
// op the interpreter runs, not opaque or stateful, whose result is not much
// bigger than its inputs (an Expand to a huge tensor stays an op).
bool foldable(ir::Op op, double input_bytes, double output_bytes);

class TensorCost {
 public:
  // `roots`: the classes the graph's outputs are (OpDesc::graph_output).
  // `activity`, by class index (optimize/activity.h), fills each e-node's
  // OpDesc::input_activity; empty: none known.
  TensorCost(const TensorEGraph& g, const targets::CostModel& model, const std::vector<egraph::Id>& roots,
             std::vector<double> activity = {});
  double operator()(egraph::Id cls, const TensorNode& node) const;
  bool is_constant(egraph::Id cls) const;

 private:
  bool node_is_constant(const TensorNode& n) const;
  ir::Op producer(egraph::Id cls) const;
  const TensorEGraph& g_;
  const targets::CostModel& model_;
  std::vector<bool> constant_;  // by class index
  std::vector<bool> root_;      // by class index
  std::vector<double> activity_;  // by class index, may be empty
};

}  // namespace refinery::optimize
