// A term as a flat vector of e-nodes whose children index earlier entries of
// the same vector (egg's RecExpr). The root is the last entry.
#pragma once

#include <cassert>
#include <string>
#include <vector>

#include "egraph/id.h"
#include "egraph/language.h"

namespace refinery::egraph {

template <ENode N>
struct RecExpr {
  std::vector<N> nodes;

  Id add(N node) {
    for ([[maybe_unused]] Id c : node.children()) assert(index(c) < nodes.size());
    nodes.push_back(std::move(node));
    return make_id(nodes.size() - 1);
  }
  Id root() const { return make_id(nodes.size() - 1); }
  const N& operator[](Id id) const { return nodes[index(id)]; }
  bool empty() const { return nodes.empty(); }
  bool operator==(const RecExpr&) const = default;

  // The s-expression text of the sub-term rooted at `id`.
  std::string to_string(Id id) const {
    const N& n = nodes[index(id)];
    if (n.children().empty()) return n.op_string();
    std::string out = "(";
    out += n.op_string();
    for (Id c : n.children()) {
      out += ' ';
      out += to_string(c);
    }
    out += ')';
    return out;
  }
  std::string to_string() const { return empty() ? std::string{} : to_string(root()); }
};

// Structural equality of two sub-terms (possibly of different RecExprs).
template <ENode N>
bool same_term(const RecExpr<N>& a, Id ia, const RecExpr<N>& b, Id ib) {
  const N& na = a[ia];
  const N& nb = b[ib];
  if (!na.same_op(nb)) return false;
  auto ca = na.children();
  auto cb = nb.children();
  for (std::size_t i = 0; i < ca.size(); ++i)
    if (!same_term(a, ca[i], b, cb[i])) return false;
  return true;
}

}  // namespace refinery::egraph
