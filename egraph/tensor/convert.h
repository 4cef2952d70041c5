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

// Where the e-graph came from: each ir value's class and the e-node seeding
// made for it, so extraction can give back the original's names, node order
// and even its duplicate sub-terms (which hash-consing shares).
struct Origin {
  const ir::Graph* graph = nullptr;
  std::vector<Id> value_class;         // by ir value index
  std::vector<TensorNode> value_node;  // by ir value index
};

struct Seeded {
  TensorEGraph egraph;
  std::shared_ptr<TensorContext> context;
  Origin origin;
  std::vector<Id> roots;  // the graph's outputs, in order
};

// Fails (naming the node) only when a node does not type-check. With
// `config.explanations` the e-graph records why each union was made
// (optimize/provenance.h reads it).
Expected<Seeded> seed(const ir::Graph& graph, EGraphConfig config = {});

// The e-node chosen for a canonical class id.
using Choice = std::function<const TensorNode&(Id)>;

// Builds the graph that computes `roots` from the chosen e-nodes. Wherever
// the chosen node is one the original graph had, the original's node comes
// back with its names and in its place; new values are named after their
// class. `origin.graph` must outlive the call.
Expected<ir::Graph> to_graph(const TensorEGraph& egraph, const std::vector<Id>& roots, const Choice& choice,
                             const Origin& origin);

}  // namespace refinery::egraph::tensor
