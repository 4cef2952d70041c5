// What tensor e-nodes refer to by id: interned node attributes, graph inputs
// and constants. Constants stay out of the e-graph (decision 5): a constant
// leaf holds an index, and the tensor is shared, never copied.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/attribute.h"
#include "ir/shape.h"
#include "ir/tensor.h"

namespace refinery::egraph::tensor {

// Everything about a node except its operator and children.
struct NodeAttrs {
  ir::Attributes attrs;
  std::uint16_t output = 0;  // which result of a multi-result op this node is
  std::uint16_t num_outputs = 1;
  std::vector<bool> present;    // per input position; empty when all are present
  std::string domain, op_type;  // opaque ops
  // The result type when shape rules cannot derive it (opaque ops, or inputs
  // of unknown rank).
  std::optional<ir::TensorType> declared;

  bool operator==(const NodeAttrs& o) const;
  std::uint64_t hash() const;
};

struct InputInfo {
  std::string name;
  ir::TensorType type;
};

struct ConstantInfo {
  std::string name;
  ir::TensorRef tensor;
  // Set when the constant was a Constant node rather than an initializer:
  // extraction writes it back as that node, with these attributes.
  std::optional<ir::Attributes> node_attrs;
  std::string node_name;
};

class TensorContext {
 public:
  std::uint32_t intern(NodeAttrs attrs);
  const NodeAttrs& attrs(std::uint32_t id) const { return attrs_[id]; }
  std::size_t num_attrs() const { return attrs_.size(); }

  std::uint32_t add_input(InputInfo in);
  const InputInfo& input(std::uint32_t i) const { return inputs_[i]; }
  std::size_t num_inputs() const { return inputs_.size(); }

  std::uint32_t add_constant(ConstantInfo c);
  const ConstantInfo& constant(std::uint32_t i) const { return constants_[i]; }
  std::size_t num_constants() const { return constants_.size(); }

  // For a constant of rank >= 2, whether each slice t[i, j, ...] is all 0
  // (row-major over the first two dims: the zero filters of a convolution
  // weight, per output and input channel); computed once per tensor.
  const std::vector<bool>& zero_pairs(const ir::TensorRef& t);

 private:
  std::vector<NodeAttrs> attrs_;
  std::unordered_multimap<std::uint64_t, std::uint32_t> attr_index_;
  std::vector<InputInfo> inputs_;
  std::vector<ConstantInfo> constants_;
  std::unordered_map<const ir::Tensor*, std::pair<ir::TensorRef, std::vector<bool>>> zero_pairs_;
};

}  // namespace refinery::egraph::tensor
