// An e-class: its e-nodes (canonical, sorted, unique after a rebuild), the
// ids of the e-nodes that use it as a child, and its analysis data.
#pragma once

#include <cstddef>
#include <vector>

#include "egraph/id.h"

namespace refinery::egraph {

template <class N, class Data>
struct EClass {
  Id id = kInvalidId;
  std::vector<N> nodes;
  // Ids of parent e-nodes. May hold entries that have since become
  // congruent duplicates; rebuild prunes them in classes it touches.
  std::vector<Id> parents;
  Data data{};

  std::size_t size() const { return nodes.size(); }
  bool is_live() const { return id != kInvalidId; }
};

}  // namespace refinery::egraph
