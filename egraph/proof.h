// Explanations as proofs a reader (or check_proof) can replay: a sequence
// of whole terms, each obtained from the previous one by one rule applied
// forward or backward at a position (child indices from the root).
// Congruence edges of the proof forest become steps inside sub-terms.
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "egraph/egraph.h"
#include "egraph/rec_expr.h"

namespace refinery::egraph {

template <ENode N>
struct ProofStep {
  RecExpr<N> term;   // the whole term after this step
  std::string rule;  // empty for the starting term
  bool forward = true;
  std::vector<std::uint32_t> position;
};

template <ENode N>
struct Explanation {
  std::vector<ProofStep<N>> steps;

  std::size_t num_rewrites() const { return steps.empty() ? 0 : steps.size() - 1; }
  // One line per step: "<term>" then "<term>  ; rule (fwd|bwd) at [i,j]".
  std::string to_string() const {
    std::string out;
    for (const auto& s : steps) {
      out += s.term.to_string();
      if (!s.rule.empty())
        out += fmt::format("  ; {} {} at [{}]", s.rule, s.forward ? "fwd" : "bwd", fmt::join(s.position, ","));
      out += "\n";
    }
    return out;
  }
};

namespace detail {

template <ENode N>
struct TermTree {
  N node;
  std::vector<TermTree> kids;
};

template <ENode N>
TermTree<N> tree_of(const ProofForest<N>& forest, Id id) {
  TermTree<N> t{forest.original(id), {}};
  for (Id c : t.node.children()) t.kids.push_back(tree_of(forest, c));
  return t;
}

template <ENode N>
Id flatten(const TermTree<N>& t, RecExpr<N>& out) {
  N node = t.node;
  auto kids = node.children();
  for (std::size_t i = 0; i < kids.size(); ++i) kids[i] = flatten(t.kids[i], out);
  return out.add(std::move(node));
}

template <ENode N>
RecExpr<N> to_expr(const TermTree<N>& t) {
  RecExpr<N> out;
  flatten(t, out);
  return out;
}

}  // namespace detail

// Proof that the terms of ids a and b (same class, explanations enabled)
// are equal.
template <ENode N, class A>
Explanation<N> explain_ids(const EGraph<N, A>& g, Id a, Id b) {
  const ProofForest<N>& forest = *g.proof_forest();
  Explanation<N> out;
  detail::TermTree<N> current = detail::tree_of(forest, a);
  out.steps.push_back(ProofStep<N>{detail::to_expr(current), {}, true, {}});
  for (const LocalStep& step : g.explain_ids(a, b)) {
    detail::TermTree<N>* at = &current;
    for (std::uint32_t i : step.position) at = &at->kids[i];
    *at = detail::tree_of(forest, step.target);
    out.steps.push_back(
        ProofStep<N>{detail::to_expr(current), forest.reason_name(step.reason), step.forward, step.position});
  }
  return out;
}

// Proof that two terms are equal in `g`. Adds the terms (explanations need
// their exact ids) and rebuilds; fails if explanations are off or the terms
// are not equal.
template <ENode N, class A>
std::expected<Explanation<N>, std::string> explain_equivalence(EGraph<N, A>& g, const RecExpr<N>& a,
                                                               const RecExpr<N>& b) {
  if (!g.explanations_enabled()) return std::unexpected("explanations are not enabled on this e-graph");
  Id ia = g.add_expr(a);
  Id ib = g.add_expr(b);
  g.rebuild();
  if (g.find(ia) != g.find(ib))
    return std::unexpected(fmt::format("{} and {} are not equal", a.to_string(), b.to_string()));
  return explain_ids(g, ia, ib);
}

}  // namespace refinery::egraph
