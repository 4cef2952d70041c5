// Greedy bottom-up extraction with a tree cost (egg's Extractor): each
// e-class's best e-node minimises its own cost plus its children's best
// costs, found by iterating to a fixpoint. Shared sub-terms are counted once
// per use; the DAG-cost greedy and ILP extractors build on the same interface.
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

#include "egraph/egraph.h"

namespace refinery::extract {

template <class G, class CostFn>
class TreeExtractor {
 public:
  using Node = typename G::Node;

  // cost(node) is the node's own cost (finite, >= 0).
  TreeExtractor(const G& g, CostFn cost) : g_(g), cost_(std::move(cost)) {
    best_cost_.assign(g.num_ids(), kInf);
    best_.assign(g.num_ids(), nullptr);
    bool changed = true;
    while (changed) {
      changed = false;
      for (egraph::Id c : g.class_ids()) {
        for (const Node& n : g[c].nodes) {
          double total = cost_(n);
          for (egraph::Id k : n.children()) total += best_cost_[egraph::index(g.find(k))];
          if (total < best_cost_[egraph::index(c)]) {
            best_cost_[egraph::index(c)] = total;
            best_[egraph::index(c)] = &n;
            changed = true;
          }
        }
      }
    }
  }

  double cost(egraph::Id c) const { return best_cost_[egraph::index(g_.find(c))]; }
  // The chosen node of a class; nullptr when no finite choice exists (a class
  // reachable only through cycles).
  const Node* best(egraph::Id c) const { return best_[egraph::index(g_.find(c))]; }

 private:
  static constexpr double kInf = std::numeric_limits<double>::infinity();
  const G& g_;
  CostFn cost_;
  std::vector<double> best_cost_;
  std::vector<const Node*> best_;
};

// Every node costs 1: the smallest term.
struct SizeCost {
  template <class N>
  double operator()(const N&) const {
    return 1.0;
  }
};

}  // namespace refinery::extract
