// Replays an Explanation: every step must change the previous term only at
// its position, and there the old and new sub-terms must be an instance of
// the named rule's left and right sides (swapped for backward steps) under
// one substitution. Steps justified by something other than a pattern rule
// (an analysis's constant folding, a user union) need a named validator.
#pragma once

#include <cstdint>
#include <expected>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "egraph/pattern.h"
#include "egraph/proof.h"
#include "egraph/rewrite.h"

namespace refinery::egraph {

// Validates a non-rule step: (old term, old sub-term id, new term, new sub-term id).
template <ENode N>
using StepValidator = std::function<bool(const RecExpr<N>&, Id, const RecExpr<N>&, Id)>;

template <ENode N>
using StepValidators = std::vector<std::pair<std::string, StepValidator<N>>>;

namespace detail {

template <ENode N>
struct TermRef {
  const RecExpr<N>* expr = nullptr;
  Id id{};
};

template <ENode N>
bool match_term(const PatternAst<N>& pat, Id p, const RecExpr<N>& expr, Id t, std::vector<TermRef<N>>& binding) {
  const auto& term = pat[p];
  if (term.is_var) {
    auto& slot = binding[index(term.var)];
    if (!slot.expr) {
      slot = TermRef<N>{&expr, t};
      return true;
    }
    return same_term(*slot.expr, slot.id, expr, t);
  }
  const N& node = expr[t];
  if (!term.node.same_op(node)) return false;
  auto pk = term.node.children();
  auto tk = node.children();
  for (std::size_t i = 0; i < pk.size(); ++i)
    if (!match_term(pat, pk[i], expr, tk[i], binding)) return false;
  return true;
}

// Walks `position` in both terms, requiring everything off the path equal.
template <ENode N>
std::optional<std::pair<Id, Id>> descend(const RecExpr<N>& a, const RecExpr<N>& b, std::span<const std::uint32_t> pos) {
  Id ia = a.root();
  Id ib = b.root();
  for (std::uint32_t step : pos) {
    const N& na = a[ia];
    const N& nb = b[ib];
    if (!na.same_op(nb) || step >= na.children().size()) return std::nullopt;
    for (std::size_t i = 0; i < na.children().size(); ++i)
      if (i != step && !same_term(a, na.children()[i], b, nb.children()[i])) return std::nullopt;
    ia = na.children()[step];
    ib = nb.children()[step];
  }
  return std::pair{ia, ib};
}

}  // namespace detail

template <ENode N, class A>
std::expected<void, std::string> check_proof(const Explanation<N>& proof, std::span<const Rewrite<N, A>> rules,
                                             const StepValidators<N>& validators = {}) {
  if (proof.steps.empty()) return std::unexpected("empty proof");
  for (std::size_t k = 1; k < proof.steps.size(); ++k) {
    const auto& before = proof.steps[k - 1].term;
    const auto& step = proof.steps[k];
    auto where = fmt::format("step {} ({} at [{}])", k, step.rule, fmt::join(step.position, ","));
    auto subs = detail::descend(before, step.term, step.position);
    if (!subs) return std::unexpected(where + ": terms differ outside the rewritten position");
    auto [old_at, new_at] = *subs;
    const Rewrite<N, A>* rule = nullptr;
    for (const auto& r : rules)
      if (r.name() == step.rule && r.rhs()) rule = &r;
    if (rule) {
      std::vector<detail::TermRef<N>> binding(rule->vars().size());
      const auto& from = step.forward ? before : step.term;
      const auto& to = step.forward ? step.term : before;
      Id from_at = step.forward ? old_at : new_at;
      Id to_at = step.forward ? new_at : old_at;
      if (!detail::match_term(rule->lhs(), rule->lhs().root(), from, from_at, binding) ||
          !detail::match_term(*rule->rhs(), rule->rhs()->root(), to, to_at, binding))
        return std::unexpected(where + ": not an instance of the rule");
      continue;
    }
    bool validated = false;
    for (const auto& [name, validate] : validators) {
      if (name != step.rule) continue;
      if (!validate(before, old_at, step.term, new_at)) return std::unexpected(where + ": rejected by its validator");
      validated = true;
    }
    if (!validated) return std::unexpected(where + ": unknown rule");
  }
  return {};
}

}  // namespace refinery::egraph
