// Pattern syntax trees: terms whose leaves may be variables (`?a`). A rule's
// left and right sides share one VarTable so that a variable means the same
// slot of the substitution on both sides.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "egraph/id.h"
#include "egraph/language.h"
#include "egraph/rec_expr.h"

namespace refinery::egraph {

class VarTable {
 public:
  Var intern(std::string_view name) {
    if (auto v = lookup(name)) return *v;
    names_.emplace_back(name);
    return make_var(names_.size() - 1);
  }
  std::optional<Var> lookup(std::string_view name) const {
    auto it = std::find(names_.begin(), names_.end(), name);
    if (it == names_.end()) return std::nullopt;
    return make_var(static_cast<std::size_t>(it - names_.begin()));
  }
  const std::string& name(Var v) const { return names_[index(v)]; }
  std::size_t size() const { return names_.size(); }

 private:
  std::vector<std::string> names_;
};

template <ENode N>
struct PatternAst {
  struct Term {
    bool is_var = false;
    Var var{};
    N node{};  // when !is_var: children index earlier terms
  };
  std::vector<Term> terms;

  Id root() const { return make_id(terms.size() - 1); }
  const Term& operator[](Id id) const { return terms[index(id)]; }

  Id add_var(Var v) {
    terms.push_back(Term{true, v, N{}});
    return root();
  }
  Id add_node(N node) {
    terms.push_back(Term{false, Var{}, std::move(node)});
    return root();
  }

  // True when the sub-pattern at `id` has no variables.
  bool is_ground(Id id) const {
    const Term& t = terms[index(id)];
    if (t.is_var) return false;
    return std::all_of(t.node.children().begin(), t.node.children().end(), [&](Id c) { return is_ground(c); });
  }

  // Variables in order of first occurrence (left to right, depth first).
  std::vector<Var> vars() const {
    std::vector<Var> out;
    for (const Term& t : terms)
      if (t.is_var && std::find(out.begin(), out.end(), t.var) == out.end()) out.push_back(t.var);
    return out;
  }

  // The ground sub-pattern at `id` as a term.
  RecExpr<N> ground_term(Id id) const {
    RecExpr<N> out;
    copy_ground(id, out);
    return out;
  }

  std::string to_string(const VarTable& vars, Id id) const {
    const Term& t = terms[index(id)];
    if (t.is_var) return vars.name(t.var);
    if (t.node.children().empty()) return t.node.op_string();
    std::string out = "(";
    out += t.node.op_string();
    for (Id c : t.node.children()) {
      out += ' ';
      out += to_string(vars, c);
    }
    out += ')';
    return out;
  }
  std::string to_string(const VarTable& vars) const { return to_string(vars, root()); }

 private:
  Id copy_ground(Id id, RecExpr<N>& out) const {
    N node = terms[index(id)].node;
    for (Id& c : node.children()) c = copy_ground(c, out);
    return out.add(std::move(node));
  }
};

}  // namespace refinery::egraph
