// Cost models: the time (seconds) one op takes on a target, from its types
// alone, so that the same model prices an e-node during extraction and a
// node of an ir::Graph before and after. Each result of a multi-result op is
// priced separately (an e-node is one result), sharing the op's cost.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/work.h"
#include "targets/spec.h"

namespace refinery::targets {

// One result of one op, as a cost model sees it.
struct OpDesc {
  ir::Op op = ir::Op::Opaque;
  const ir::Attributes* attrs = nullptr;
  std::vector<const ir::TensorType*> inputs;  // nullptr: an absent optional input
  std::vector<bool> input_constant;           // per input: a constant or constant expression
  // Per input: the op that computes it when that op's result feeds only
  // this one (so a runtime may fuse this op into it as an epilogue);
  // Opaque when unknown, shared, or a graph input or constant. May be empty.
  std::vector<ir::Op> input_producer;
  const ir::TensorType* output = nullptr;  // this result's type
  int num_outputs = 1;
  bool graph_output = false;  // this result is one of the graph's outputs (ORT then fuses less into its producer)
  // Per input: the expected fraction of its elements that are nonzero at a
  // time step (spiking graphs, measured by simulation); empty or missing: 1.
  // Only the neuromorphic model reads it (synaptic events).
  std::vector<double> input_activity;

  bool all_inputs_constant() const;
  const ir::Attributes& attributes() const;  // *attrs, or none when attrs is null
  ir::Op producer(std::size_t i) const { return i < input_producer.size() ? input_producer[i] : ir::Op::Opaque; }
};

class CostModel {
 public:
  explicit CostModel(HardwareSpec spec) : spec_(std::move(spec)) {}
  virtual ~CostModel() = default;

  const HardwareSpec& spec() const { return spec_; }

  // Seconds for this result. An op whose inputs are all constants costs
  // nothing: export folds it into an initializer.
  double cost(const OpDesc& op) const;

  // Seconds a graph costs once, whatever it holds (the learned CPU model:
  // one ONNX Runtime session run's fixed cost); not part of any node's.
  virtual double run_overhead() const { return 0; }

 protected:
  virtual double op_cost(const OpDesc& op) const = 0;
  HardwareSpec spec_;
};

std::unique_ptr<CostModel> make_cost_model(HardwareSpec spec);

// A target: its spec and its cost model.
struct Target {
  std::string name;
  std::shared_ptr<const CostModel> model;
  // The learned model's file when a learned model prices (targets/learned.h);
  // empty for an analytic model.
  std::filesystem::path learned_model_file;
  std::string_view model_kind() const { return learned_model_file.empty() ? "analytic" : "learned"; }
};
// A target by name (find_spec) with its cost model. A cpu spec with a
// learned_model is priced by that learned model (learned_model_file: the
// user's calibrated one, else the one shipped beside the spec); a missing
// or unreadable file is an error naming it, never the analytic model in
// its place. "NAME-analytic" ("cpu-analytic") is the same spec with the
// analytic model (targets/models.cpp), as is every spec without a
// learned_model. `cost_model` (--cost-model, cpu targets only) overrides
// the choice: "analytic" (the target is then named NAME-analytic),
// "learned" (the spec's learned model), or the path of a learned model
// file; empty: the target's own.
Expected<Target> load_target(std::string_view name_or_file, const std::string& cost_model = {});

// The learned model file of a spec: in user_cost_models_dir(), where
// `refinery calibrate` writes it, else beside the spec.
std::filesystem::path learned_model_file(const HardwareSpec& spec);

// Nodes the runtime deletes when it loads the graph, so that relabelling
// the same work costs nothing (ARCHITECTURE.md decision 11): a Transpose
// whose only use is a Transpose by the inverse permutation (both go: ONNX
// Runtime's transpose optimizer, XLA's algebraic simplifier), and a Concat
// whose only use is a Split along the same axis into the same pieces (the
// pieces are used where the Split's results were). By node index.
std::vector<bool> removed_by_runtime(const ir::Graph& graph);

// Per value: a constant or computed only from constants (an op but Opaque
// with no inputs counts as one), which export or the runtime folds.
std::vector<bool> constant_values(const ir::Graph& graph);

// A group of nodes the runtime replaces by one op when it loads the graph
// (ONNX Runtime's LayerNormFusion and GeluFusion, graph optimization 'all'),
// matched structurally with its constants checked: LayerNormalization from
// ReduceMean, Sub, Pow (by 2), ReduceMean, Add (a constant scalar epsilon),
// Sqrt, Div, Mul (a 1-D scale), Add (a 1-D bias), both means over the last
// axis alone; Gelu from x / sqrt(2), Erf, + 1, then x * that * 0.5 in either
// order. Every value inside the group is read by the group alone and is no
// graph output, as ONNX Runtime requires. The form frontends/onnx_lower.cpp
// writes when the model's opset lacks the op, and torch's opset-13 exports.
struct RuntimeFusion {
  std::vector<std::size_t> nodes;   // node indices in graph order; the last computes the fused op's result
  ir::Op op = ir::Op::Opaque;       // LayerNormalization or Gelu
  std::vector<ir::ValueId> inputs;  // the fused op's inputs (X, scale, bias; X)
  ir::Attributes attrs;             // its attributes (LayerNormalization's axis and epsilon)
};
std::vector<RuntimeFusion> fused_by_runtime(const ir::Graph& graph);

// node_descs as the runtime runs the graph: each group of `fused` described
// at its last node as the fused op (its attributes point into `fused`).
std::vector<OpDesc> runtime_descs(const ir::Graph& graph, const std::vector<RuntimeFusion>& fused);
// removed_by_runtime, and every node of a group of `fused` but its last.
std::vector<bool> removed_or_fused_away(const ir::Graph& graph, const std::vector<RuntimeFusion>& fused);

// The graph's cost: the sum over its nodes' results; nodes computing only
// from constants, and those removed_by_runtime, are free; a group
// fused_by_runtime costs its fused op. Symbolic dims count as `symbolic_dim` elements.
double graph_cost(const CostModel& model, const ir::Graph& graph);

// The work of the kernels the graph runs: ir::node_work (the one count)
// summed over its nodes but constant expressions (folded at export), views
// (OpClass::Free: they move no data) and the nodes removed_by_runtime. For
// the report's guard against gains that are the model's, not less work.
ir::Work graph_work(const ir::Graph& graph);

// Per node (in graph order) its description as a cost model sees it, for
// its first result (output is null for a node without results); the
// pointers point into `graph`.
std::vector<OpDesc> node_descs(const ir::Graph& graph);

// Per node (in graph order) the cost of all its results: for reports. A
// group fused_by_runtime is priced as its fused op at its last node, its
// other nodes at 0.
std::vector<double> node_costs(const CostModel& model, const ir::Graph& graph);

}  // namespace refinery::targets
