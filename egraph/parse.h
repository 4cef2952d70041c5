// Text to terms and patterns for any language whose node type can be built
// from an operator atom and children: `N::parse(op, children)` returns
// std::expected<N, std::string>. Variables are atoms starting with '?'.
#pragma once

#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "egraph/pattern.h"
#include "egraph/rec_expr.h"
#include "egraph/sexpr.h"

namespace refinery::egraph {

template <class N>
concept ParsableNode = ENode<N> && requires(std::string_view op, std::span<const Id> kids) {
  { N::parse(op, kids) } -> std::same_as<std::expected<N, std::string>>;
};

namespace detail {

// `leaf(e)` claims an atom (nullopt: not claimed) and `leaf.add(node)`
// appends a node, returning its id.
template <ParsableNode N, class Leaf>
std::expected<Id, ParseError> build(const SExpr& e, Leaf& leaf) {
  if (e.is_atom) {
    if (auto claimed = leaf(e)) return *claimed;
    auto node = N::parse(e.atom, {});
    if (!node) return std::unexpected(ParseError{e.pos, node.error()});
    return leaf.add(std::move(*node));
  }
  std::vector<Id> kids;
  for (std::size_t i = 1; i < e.items.size(); ++i) {
    auto kid = build<N>(e.items[i], leaf);
    if (!kid) return kid;
    kids.push_back(*kid);
  }
  auto node = N::parse(e.items.front().atom, kids);
  if (!node) return std::unexpected(ParseError{e.items.front().pos, node.error()});
  return leaf.add(std::move(*node));
}

inline bool is_var_atom(const SExpr& e) { return e.is_atom && !e.atom.empty() && e.atom.front() == '?'; }

}  // namespace detail

template <ParsableNode N>
std::expected<RecExpr<N>, ParseError> parse_term(std::string_view text) {
  auto sexpr = parse_sexpr(text);
  if (!sexpr) return std::unexpected(sexpr.error());
  struct Leaf {
    RecExpr<N>* out;
    std::optional<std::expected<Id, ParseError>> operator()(const SExpr& e) const {
      if (!detail::is_var_atom(e)) return std::nullopt;
      return std::unexpected(ParseError{e.pos, "variable '" + e.atom + "' in a ground term"});
    }
    Id add(N n) const { return out->add(std::move(n)); }
  };
  RecExpr<N> out;
  Leaf leaf{&out};
  auto root = detail::build<N>(*sexpr, leaf);
  if (!root) return std::unexpected(root.error());
  return out;
}

template <ParsableNode N>
std::expected<PatternAst<N>, ParseError> parse_pattern(std::string_view text, VarTable& vars) {
  auto sexpr = parse_sexpr(text);
  if (!sexpr) return std::unexpected(sexpr.error());
  struct Leaf {
    PatternAst<N>* out;
    VarTable* vars;
    std::optional<std::expected<Id, ParseError>> operator()(const SExpr& e) const {
      if (!detail::is_var_atom(e)) return std::nullopt;
      return out->add_var(vars->intern(e.atom));
    }
    Id add(N n) const { return out->add_node(std::move(n)); }
  };
  PatternAst<N> out;
  Leaf leaf{&out, &vars};
  auto root = detail::build<N>(*sexpr, leaf);
  if (!root) return std::unexpected(root.error());
  return out;
}

}  // namespace refinery::egraph
