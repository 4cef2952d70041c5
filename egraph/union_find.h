// Union-find over e-class ids, with path halving. The e-graph decides which
// root survives a union (see EGraph::merge); this structure only links.
#pragma once

#include <cassert>
#include <cstddef>
#include <vector>

#include "egraph/id.h"

namespace refinery::egraph {

class UnionFind {
 public:
  Id make_set() {
    Id id = make_id(parents_.size());
    parents_.push_back(id);
    return id;
  }

  std::size_t size() const { return parents_.size(); }

  // Root of `id` without changing the structure (usable on a const graph).
  Id find(Id id) const {
    while (parents_[index(id)] != id) id = parents_[index(id)];
    return id;
  }

  // Root of `id`, halving the path on the way.
  Id find_mut(Id id) {
    while (parents_[index(id)] != id) {
      Id grand = parents_[index(parents_[index(id)])];
      parents_[index(id)] = grand;
      id = grand;
    }
    return id;
  }

  bool is_root(Id id) const { return parents_[index(id)] == id; }

  // Makes root `child` point at root `root`; both must be roots.
  void link(Id root, Id child) {
    assert(is_root(root) && is_root(child));
    parents_[index(child)] = root;
  }

  // Adds a new element that starts out in the set of `root`.
  Id make_member_of(Id root) {
    Id id = make_id(parents_.size());
    parents_.push_back(root);
    return id;
  }

  std::size_t memory_bytes() const { return parents_.capacity() * sizeof(Id); }

 private:
  std::vector<Id> parents_;
};

}  // namespace refinery::egraph
