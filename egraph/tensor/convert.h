// ir::Graph to e-graph (seeding: one e-class per value) and back (from one
// chosen e-node per e-class). Seeding then extracting the seeded nodes gives
// back the identical graph: names, node order, constants and types.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "egraph/tensor/analysis.h"
#include "ir/diag.h"
#include "ir/graph.h"

namespace refinery::egraph::tensor {

struct Seeded {
  TensorEGraph egraph;
  std::shared_ptr<TensorContext> context;
  std::vector<Id> value_class;  // by ir value index; kInvalidId for unused slots
  std::vector<Id> roots;        // the graph's outputs, in order
};

// Fails (naming the node) only when a node does not type-check.
Expected<Seeded> seed(const ir::Graph& graph);

// The e-node chosen for a canonical class id.
using Choice = std::function<const TensorNode&(Id)>;

// Builds the graph that computes `roots` from the chosen e-nodes. Names,
// node names and the order of nodes come from `original` wherever the chosen
// node is one the original graph had; new values are named after their class.
Expected<ir::Graph> to_graph(const TensorEGraph& egraph, const std::vector<Id>& roots, const Choice& choice,
                             const ir::Graph& original, const std::vector<Id>& value_class);

}  // namespace refinery::egraph::tensor
