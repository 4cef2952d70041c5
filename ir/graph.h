// The typed SSA graph: values (graph inputs, constants, node results) and
// nodes in topological order. A constant is a leaf that refers to its tensor
// by reference. Ids index the graph's vectors; there are no pointers.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir/attribute.h"
#include "ir/diag.h"
#include "ir/op.h"
#include "ir/shape.h"

namespace refinery::ir {

enum class ValueId : uint32_t {};
enum class NodeId : uint32_t {};
inline constexpr ValueId kNoValue{UINT32_MAX};  // an absent optional input
inline constexpr NodeId kNoNode{UINT32_MAX};

inline uint32_t index(ValueId v) { return static_cast<uint32_t>(v); }
inline uint32_t index(NodeId n) { return static_cast<uint32_t>(n); }

enum class ValueKind : uint8_t { Input, Constant, NodeResult };

struct Value {
  std::string name;
  TensorType type;
  ValueKind kind = ValueKind::NodeResult;
  NodeId producer = kNoNode;  // for node results
  TensorRef constant;         // for constants
};

struct Node {
  Op op = Op::Opaque;
  std::string name;             // ONNX node name, may be empty
  std::vector<ValueId> inputs;  // kNoValue marks an absent optional input
  std::vector<ValueId> outputs;
  Attributes attrs;
  std::string domain;   // for opaque ops: ONNX domain ("" is ai.onnx)
  std::string op_type;  // for opaque ops: ONNX op_type
};

// Facts about the model a graph came from, kept so export can round-trip.
struct ModelInfo {
  int64_t ir_version = 8;
  std::map<std::string, int64_t> opsets{{"", 17}};  // domain -> version
  std::string producer_name, producer_version, domain, doc_string, graph_name = "main";
  int64_t model_version = 0;
  std::vector<std::pair<std::string, std::string>> metadata;
  // The model's local functions (ONNX FunctionProto, serialized), kept
  // opaque: nodes that call them are opaque nodes, and export writes the
  // definitions back so the model still loads.
  std::vector<std::string> onnx_functions;
  // The intermediate values the source model typed (ONNX value_info), by
  // name. Export types those still there and no others but an opaque node's
  // results: a type ONNX Runtime would not infer switches on fusions of its
  // own (SkipLayerNormalization) that measured 5-8% slower, so a model that
  // gave none gets none (docs/onnx.md, "Export").
  std::set<std::string> typed_values;
};

class Graph {
 public:
  ModelInfo info;

  ValueId add_input(std::string name, TensorType type);
  ValueId add_constant(std::string name, TensorRef tensor);
  // Adds a node whose output types are given (e.g. by the importer or parser).
  NodeId add_node(Node node_without_outputs, const std::vector<std::string>& output_names,
                  const std::vector<TensorType>& output_types);
  // Adds a copy of `node`, a node of `from` (op, name, attributes, domain),
  // reading `inputs` (values of this graph); its results take the names and
  // types they have in `from`. Returns the copy's results, in order.
  std::vector<ValueId> add_copy(const Graph& from, const Node& node, std::vector<ValueId> inputs);
  void set_outputs(std::vector<ValueId> outputs) { outputs_ = std::move(outputs); }

  const Value& value(ValueId v) const { return values_[index(v)]; }
  Value& value(ValueId v) { return values_[index(v)]; }
  const Node& node(NodeId n) const { return nodes_[index(n)]; }
  Node& node(NodeId n) { return nodes_[index(n)]; }
  const std::vector<Value>& values() const { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  const std::vector<ValueId>& constants() const { return constants_; }
  size_t num_values() const { return values_.size(); }
  size_t num_nodes() const { return nodes_.size(); }
  std::optional<ValueId> find_value(std::string_view name) const;
  // The tensor of a constant value; nullptr for any other value and for kNoValue.
  const Tensor* constant_tensor(ValueId v) const {
    if (v == kNoValue) return nullptr;
    const Value& val = values_[index(v)];
    return val.kind == ValueKind::Constant ? val.constant.get() : nullptr;
  }

  // The node's display name for messages: its name, or "#<index> <op>".
  std::string node_label(NodeId n) const;

  // Structural checks: SSA (each value defined once, before use), arity and
  // attribute kinds against the op table, outputs defined. The Diag names the node.
  // One exception to "before use": an input may name a value defined later when
  // that closes a cycle through a stateful op; it then reads the value of the
  // previous time step (a recurrent edge, docs/spiking.md).
  Expected<void> verify() const;

  // Recomputes every node result's type from the op table's shape rules.
  // Opaque nodes keep the types they have. Fails on the first node whose
  // rule fails, naming it.
  Expected<void> infer_shapes();

  // Known integer contents of values (ONNX data propagation), by value index.
  // Filled by infer_shapes.
  const std::optional<std::vector<Dim>>& known_value(ValueId v) const { return known_[index(v)]; }

  // Number of uses of each value (graph outputs count as a use).
  std::vector<uint32_t> use_counts() const;
  // Each value's readers: (node index, input position), in node order; graph outputs not counted.
  std::vector<std::vector<std::pair<size_t, size_t>>> readers() const;

 private:
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_, outputs_, constants_;
  std::vector<std::optional<std::vector<Dim>>> known_;
};

}  // namespace refinery::ir
