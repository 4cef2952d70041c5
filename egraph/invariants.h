// The e-graph's stated invariants, checked after every rebuild in debug
// builds and callable from tests: the hashcons maps each canonical node to
// exactly one live owner, class node lists are canonical, sorted and unique,
// no two classes hold congruent nodes, and the indexes match the classes.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "egraph/id.h"

namespace refinery::egraph {

template <class G>
std::string check_invariants(const G& g) {
  if (!g.is_clean()) return "graph is dirty (rebuild not called)";
  std::size_t live = 0;
  for (std::size_t i = 0; i < g.num_ids(); ++i) {
    Id id = make_id(i);
    if (!g.is_live_node(id)) continue;
    ++live;
    const auto& node = g.stored_node(id);
    for (Id c : node.children())
      if (g.find(c) != c) return fmt::format("live node {} has non-canonical child {}", i, index(c));
    auto owner = g.memo_owner(node);
    if (!owner || *owner != id) return fmt::format("live node {} is not the hashcons owner of its key", i);
    Id cls = g.find(id);
    for (Id c : node.children()) {
      const auto& parents = g[c].parents;
      if (std::find(parents.begin(), parents.end(), id) == parents.end())
        return fmt::format("node {} (class {}) missing from parents of class {}", i, index(cls), index(c));
    }
  }
  if (live != g.num_nodes()) return fmt::format("hashcons holds {} entries but {} live nodes", g.num_nodes(), live);

  std::size_t classes = 0;
  std::size_t class_nodes = 0;
  for (Id c : g.class_ids()) {
    ++classes;
    if (g.find(c) != c) return fmt::format("class list holds non-canonical id {}", index(c));
    const auto& cls = g[c];
    if (cls.id != c) return fmt::format("class {} records id {}", index(c), index(cls.id));
    class_nodes += cls.nodes.size();
    for (std::size_t k = 0; k < cls.nodes.size(); ++k) {
      const auto& n = cls.nodes[k];
      if (k > 0 && !(cls.nodes[k - 1] < n)) return fmt::format("class {} nodes not sorted/unique", index(c));
      for (Id ch : n.children())
        if (g.find(ch) != ch) return fmt::format("class {} node has non-canonical child", index(c));
      auto owner = g.memo_owner(n);
      if (!owner) return fmt::format("class {} node {} missing from hashcons", index(c), n.op_string());
      if (g.find(*owner) != c)
        return fmt::format("congruence broken: node {} of class {} is owned by class {}", n.op_string(), index(c),
                           index(g.find(*owner)));
    }
    std::uint32_t last = std::numeric_limits<std::uint32_t>::max();
    for (const auto& n : cls.nodes) {
      if (n.op_key() == last) continue;
      last = n.op_key();
      auto with_op = g.classes_with_op(last);
      if (!std::binary_search(with_op.begin(), with_op.end(), c))
        return fmt::format("class {} missing from the index of op {}", index(c), n.op_string());
    }
  }
  if (classes != g.num_classes()) return fmt::format("{} classes listed, {} counted", classes, g.num_classes());
  if (class_nodes != g.num_class_nodes())
    return fmt::format("{} class nodes listed, {} counted", class_nodes, g.num_class_nodes());
  return {};
}

}  // namespace refinery::egraph
