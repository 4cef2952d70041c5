// Rewrites: a searcher (a pattern or a multi-pattern), an applier (a
// pattern, a multi-pattern, or a named C++ callable) and optional
// conditions checked on each match before it is applied.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "egraph/egraph.h"
#include "egraph/machine.h"
#include "egraph/parse.h"
#include "egraph/pattern.h"
#include "egraph/subst.h"

namespace refinery::egraph {

template <ENode N, class A>
using Condition = std::function<bool(const EGraph<N, A>&, Id root, Subst)>;

// A named C++ applier; returns how many unions changed the graph.
template <ENode N, class A>
struct CustomApplier {
  std::string name;
  std::function<std::size_t(EGraph<N, A>&, Id root, Subst)> apply;
};

// A check on the class a left-side variable is bound to, which the search
// runs as soon as it binds the variable (Program's Check): a rule whose
// pattern leaves a leaf open to its applier (a literal the tensor rules
// match by value) says here which classes can hold it, so the search does
// not enumerate every way to reach the others.
template <ENode N, class A>
struct VarCheck {
  Var var;
  std::function<bool(const EGraph<N, A>&, Id)> holds;
};

// (root variable, pattern text), for multi-patterns: "?x = (f ?a)".
struct RootedPatternText {
  std::string_view root_var;
  std::string_view pattern;
};

template <ENode N, class A>
class Rewrite {
 public:
  using Graph = EGraph<N, A>;
  using Rooted = std::pair<Var, PatternAst<N>>;

  // `lhs => rhs` with single patterns.
  static std::expected<Rewrite, ParseError> make(std::string name, std::string_view lhs,
                                                 std::string_view rhs) requires ParsableNode<N> {
    Rewrite rw(std::move(name));
    auto l = parse_pattern<N>(lhs, rw.vars_);
    if (!l) return std::unexpected(l.error());
    auto r = parse_pattern<N>(rhs, rw.vars_);
    if (!r) return std::unexpected(r.error());
    rw.lhs_.emplace_back(Var{}, std::move(*l));
    rw.rhs_.emplace_back(Var{}, std::move(*r));
    rw.multi_ = false;
    rw.applier_ = ApplierKind::Pattern;
    return std::move(rw).finish();
  }

  // Multi-pattern searcher and applier: each rhs pattern's instance is
  // unioned with the class bound to its root variable.
  static std::expected<Rewrite, ParseError> make_multi(std::string name, std::initializer_list<RootedPatternText> lhs,
                                                       std::initializer_list<RootedPatternText> rhs) requires
      ParsableNode<N> {
    Rewrite rw(std::move(name));
    for (const auto& p : lhs) {
      auto pat = parse_pattern<N>(p.pattern, rw.vars_);
      if (!pat) return std::unexpected(pat.error());
      rw.lhs_.emplace_back(rw.vars_.intern(p.root_var), std::move(*pat));
    }
    for (const auto& p : rhs) {
      auto pat = parse_pattern<N>(p.pattern, rw.vars_);
      if (!pat) return std::unexpected(pat.error());
      rw.rhs_.emplace_back(rw.vars_.intern(p.root_var), std::move(*pat));
    }
    rw.multi_ = true;
    rw.applier_ = ApplierKind::MultiPattern;
    return std::move(rw).finish();
  }

  // A pattern searcher with a C++ applier.
  static std::expected<Rewrite, ParseError> make_custom(std::string name, std::string_view lhs,
                                                        CustomApplier<N, A> applier) requires ParsableNode<N> {
    Rewrite rw(std::move(name));
    auto l = parse_pattern<N>(lhs, rw.vars_);
    if (!l) return std::unexpected(l.error());
    rw.lhs_.emplace_back(Var{}, std::move(*l));
    rw.multi_ = false;
    rw.applier_ = ApplierKind::Custom;
    rw.custom_ = std::move(applier);
    return std::move(rw).finish();
  }

  // A searcher given as pattern trees over `vars` (one pattern; or, with
  // `multi`, several patterns each rooted at a variable), with a C++
  // applier. For languages that build patterns without the text parser.
  // `checks` are checks on what a variable is bound to, run by the search as
  // soon as it binds it (VarCheck): matches that fail one are never found,
  // nor counted by the scheduler.
  static std::expected<Rewrite, ParseError> make_custom_ast(std::string name, VarTable vars, std::vector<Rooted> lhs,
                                                            bool multi, CustomApplier<N, A> applier,
                                                            std::vector<VarCheck<N, A>> checks = {}) {
    Rewrite rw(std::move(name));
    rw.vars_ = std::move(vars);
    rw.lhs_ = std::move(lhs);
    rw.checks_ = std::move(checks);
    if (rw.lhs_.empty() || (!multi && rw.lhs_.size() != 1))
      return std::unexpected(
          ParseError{{}, "rule '" + rw.name_ + "': expected one pattern, or roots for a multi-pattern"});
    rw.multi_ = multi;
    rw.applier_ = ApplierKind::Custom;
    rw.custom_ = std::move(applier);
    return std::move(rw).finish();
  }

  // Adds a condition every match must satisfy. Variables are looked up by
  // name through var().
  Rewrite&& when(Condition<N, A> cond) && {
    conditions_.push_back(std::move(cond));
    return std::move(*this);
  }
  Rewrite& when(Condition<N, A> cond) & {
    conditions_.push_back(std::move(cond));
    return *this;
  }

  const std::string& name() const { return name_; }
  const VarTable& vars() const { return vars_; }
  Var var(std::string_view name) const { return vars_.lookup(name).value(); }
  bool is_multi() const { return multi_; }
  // Whether apply works in batches of kBatch matches (apply_batched): the
  // pattern applier without explanations.
  bool applies_in_batches(const Graph& g) const {
    return applier_ == ApplierKind::Pattern && !g.explanations_enabled();
  }
  static constexpr std::size_t kBatch = 16;
  // Left and right sides of a single-pattern rule (for proof checking).
  const PatternAst<N>& lhs() const { return lhs_.front().second; }
  const PatternAst<N>* rhs() const { return applier_ == ApplierKind::Pattern ? &rhs_.front().second : nullptr; }

  // Writes up to `limit` matches into `out`, which it resets first.
  void search(const Graph& g, std::size_t limit, SearchMatches& out) const { search_part(g, limit, out, 0, 1); }
  // The search split over the root candidates (Program::search_part): part
  // `part` of `parts` into `out` (reset first). Concatenated in part order
  // and cut at `limit`, the parts' matches are search's.
  void search_part(const Graph& g, std::size_t limit, SearchMatches& out, std::size_t part, std::size_t parts) const {
    out.reset(static_cast<std::uint32_t>(vars_.size()));
    program_.search_part(g, limit, out, part, parts,
                         [&](std::uint32_t k, Id cls) { return checks_[k].holds(g, cls); });
  }
  std::size_t num_candidates(const Graph& g) const { return program_.num_candidates(g); }

  // Applies matches [first, last) (every match by default); returns the
  // number of unions that changed the graph.
  std::size_t apply(Graph& g, const SearchMatches& matches, std::size_t first = 0,
                    std::size_t last = std::numeric_limits<std::size_t>::max()) const {
    last = std::min(last, matches.size());
    if (applies_in_batches(g)) {
      if (conditions_.empty()) return apply_batched<false>(g, matches, first, last);
      return apply_batched<true>(g, matches, first, last);
    }
    std::size_t changed = 0;
    std::vector<Id> scratch;
    std::vector<Premise> premises;
    for (std::size_t i = first; i < last; ++i) {
      Id root = matches.roots[i];
      Subst s = matches.subst(i);
      bool ok = true;
      for (const auto& cond : conditions_) {
        if (!cond(g, root, s)) {
          ok = false;
          break;
        }
      }
      if (!ok) continue;
      switch (applier_) {
        case ApplierKind::Pattern:
          if (g.explanations_enabled()) {
            premises.clear();
            premises_of(g, lhs_.front().second, s, scratch, premises);
            Id from = instantiate(g, lhs_.front().second, s, scratch);
            Id to = instantiate(g, rhs_.front().second, s, scratch);
            changed += g.merge_because(from, to, name_, true, premises);
          } else {
            changed += g.merge(root, instantiate(g, rhs_.front().second, s, scratch));
          }
          break;
        case ApplierKind::MultiPattern:
          premises.clear();
          if (g.explanations_enabled())
            for (const auto& [root_var, pat] : lhs_) premises_of(g, pat, s, scratch, premises);
          for (const auto& [root_var, pat] : rhs_) {
            Id id = instantiate(g, pat, s, scratch);
            changed += g.merge_because(s[root_var], id, name_, true, premises);
          }
          break;
        case ApplierKind::Custom: changed += custom_.apply(g, root, s); break;
      }
    }
    return changed;
  }

  // The pattern applier without explanations, in batches: for each term of
  // the right side, every match's node is hashed and its hashcons slot
  // prefetched before any is looked up, so the memory latency of the
  // lookups overlaps. Unions follow once per batch, in match order (a top
  // node that was new has joined its match's class already). A child is
  // read where it is (a match's variable, or the class of an earlier term
  // for each match of the batch: rhs_sources_), one child position at a
  // time over the batch.
  // Instantiated without conditions too, where every match of a batch is
  // applied and the per-match tests go.
  template <bool kConditions>
  std::size_t apply_batched(Graph& g, const SearchMatches& matches, std::size_t first, std::size_t last) const {
    const PatternAst<N>& pat = rhs_.front().second;
    const std::size_t T = pat.terms.size();
    const std::size_t nv = matches.num_vars;
    // ids[t * kBatch + j]: the class of term t for match j of the batch.
    std::vector<Id> ids(kBatch * T);
    std::array<N, kBatch> nodes;
    std::array<std::uint64_t, kBatch> hashes{};
    std::array<bool, kBatch> passed;
    passed.fill(true);
    auto ok = [&](std::size_t j) { return !kConditions || passed[j]; };
    std::size_t changed = 0;
    // Where source `s` of match j of the batch is: base[j * stride].
    auto locate = [&](Source s, const Id* subst) -> std::pair<const Id*, std::size_t> {
      if (s.from_match) return {subst + s.index, nv};
      return {ids.data() + s.index * kBatch, 1};
    };
    // Batches are the fixed slices [16k, 16k + 16) of the match list (cut
    // by `first` and `last`), wherever a caller's chunks start: a chunk
    // that starts inside one does not shift every batch after it.
    for (std::size_t base = first, m = 0; base < last; base += m) {
      m = std::min(kBatch - base % kBatch, last - base);
      const Id* subst = matches.substs.data() + base * nv;
      if constexpr (kConditions) {
        for (std::size_t j = 0; j < m; ++j) {
          passed[j] = true;
          for (const auto& cond : conditions_) {
            if (!cond(g, matches.roots[base + j], matches.subst(base + j))) {
              passed[j] = false;
              break;
            }
          }
        }
      }
      const Source* src = rhs_sources_.data();
      for (std::size_t t = 0; t < T; ++t) {
        const auto& term = pat.terms[t];
        if (term.is_var) continue;
        Id* out = ids.data() + t * kBatch;
        const std::size_t unions = g.union_count();
        for (std::size_t j = 0; j < m; ++j) nodes[j] = term.node;
        const std::size_t arity = term.node.children().size();
        for (std::size_t k = 0; k < arity; ++k, ++src) {
          auto [from, stride] = locate(*src, subst);
          for (std::size_t j = 0; j < m; ++j) nodes[j].children()[k] = from[j * stride];
        }
        for (std::size_t j = 0; j < m; ++j)
          if (ok(j)) hashes[j] = g.prepare(nodes[j]);
        // Only adds happen between prepare and add_prepared (children stay
        // canonical), unless an analysis's modify unions. A new top node
        // joins its match's class (add_prepared_into): the union is done.
        if (t + 1 < T) {
          for (std::size_t j = 0; j < m; ++j)
            if (ok(j)) out[j] = g.add_prepared(nodes[j], hashes[j], g.union_count() != unions);
        } else {
          for (std::size_t j = 0; j < m; ++j) {
            if (!ok(j)) continue;
            auto [id, added] =
                g.add_prepared_into(nodes[j], hashes[j], matches.roots[base + j], g.union_count() != unions);
            out[j] = id;
            changed += added;
          }
        }
      }
      auto [top, stride] = locate(rhs_top_, subst);
      for (std::size_t j = 0; j < m; ++j)
        if (ok(j)) changed += g.merge(matches.roots[base + j], top[j * stride]);
    }
    return changed;
  }

  // Appends the premises of a match of `pat` under `s` (explain.h): each
  // e-node the pattern matched below its root, with the term its parent
  // e-node reads there. `owner` gets each node term's e-node (kInvalidId
  // where the hashcons has not got it: unions since the last rebuild).
  static void premises_of(const Graph& g, const PatternAst<N>& pat, Subst s, std::vector<Id>& owner,
                          std::vector<Premise>& out) {
    owner.assign(pat.terms.size(), kInvalidId);
    for (std::size_t i = 0; i < pat.terms.size(); ++i) {
      const auto& t = pat.terms[i];
      if (t.is_var) continue;
      // As the search read it (its classes canonical at the last rebuild, as
      // the hashcons's keys are), then as it reads now.
      N node = t.node;
      bool whole = true;
      for (Id& c : node.children()) {
        Id own = pat[c].is_var ? kInvalidId : owner[index(c)];
        whole &= pat[c].is_var || own != kInvalidId;
        c = pat[c].is_var ? s[pat[c].var] : (own == kInvalidId ? own : g.find(own));
      }
      if (!whole) continue;
      auto found = g.memo_owner(node);
      if (!found) {
        for (Id& c : node.children()) c = g.find(c);
        found = g.memo_owner(node);
      }
      if (found) owner[i] = *found;
    }
    const ProofForest<N>& forest = *g.proof_forest();
    for (std::size_t i = 0; i < pat.terms.size(); ++i) {
      if (owner[i] == kInvalidId) continue;
      auto kids = pat.terms[i].node.children();
      auto reads = forest.original(owner[i]).children();
      for (std::size_t k = 0; k < kids.size(); ++k)
        if (!pat[kids[k]].is_var && owner[index(kids[k])] != kInvalidId)
          out.push_back(Premise{reads[k], owner[index(kids[k])]});
    }
  }

  // Adds the instance of `pat` under `s`; returns its id.
  static Id instantiate(Graph& g, const PatternAst<N>& pat, Subst s, std::vector<Id>& scratch) {
    scratch.resize(pat.terms.size());
    for (std::size_t i = 0; i < pat.terms.size(); ++i) {
      const auto& t = pat.terms[i];
      if (t.is_var) {
        scratch[i] = s[t.var];
      } else {
        N node = t.node;
        for (Id& c : node.children()) c = scratch[index(c)];
        scratch[i] = g.add(std::move(node));
      }
    }
    return scratch.back();
  }

 private:
  enum class ApplierKind { Pattern, MultiPattern, Custom };
  // A child of a right-side term, for apply_batched: a variable of the
  // match (from_match) or the class an earlier term of the right side made.
  struct Source {
    bool from_match = false;
    std::uint32_t index = 0;  // the variable, or the term
  };

  explicit Rewrite(std::string name) : name_(std::move(name)) {}

  std::expected<Rewrite, ParseError> finish() && {
    std::vector<Var> bound;
    for (const auto& [root_var, pat] : lhs_) {
      if (multi_) bound.push_back(root_var);
      for (Var v : pat.vars()) bound.push_back(v);
    }
    for (const auto& [root_var, pat] : rhs_) {
      std::vector<Var> used = pat.vars();
      if (multi_) used.push_back(root_var);
      for (Var v : used)
        if (std::find(bound.begin(), bound.end(), v) == bound.end())
          return std::unexpected(ParseError{
              {},
              "rule '" + name_ + "': variable " + vars_.name(v) + " on the right side is not bound by the left side"});
    }
    if (applier_ == ApplierKind::Pattern) {
      // Each node term's children, then the top, as apply_batched reads them.
      const PatternAst<N>& pat = rhs_.front().second;
      auto source = [&](Id term) {
        const auto& t = pat[term];
        return t.is_var ? Source{true, index(t.var)} : Source{false, index(term)};
      };
      for (const auto& t : pat.terms)
        if (!t.is_var)
          for (Id c : t.node.children()) rhs_sources_.push_back(source(c));
      rhs_top_ = source(pat.root());
    }
    std::vector<Var> checked;
    for (const VarCheck<N, A>& c : checks_) checked.push_back(c.var);
    if (multi_) {
      program_ = Program<N>::compile_multi(lhs_, vars_.size(), checked);
    } else {
      program_ = Program<N>::compile(lhs_.front().second, vars_.size(), checked);
    }
    return std::move(*this);
  }

  std::string name_;
  VarTable vars_;
  std::vector<Rooted> lhs_;
  std::vector<Rooted> rhs_;
  bool multi_ = false;
  ApplierKind applier_ = ApplierKind::Pattern;
  CustomApplier<N, A> custom_;
  std::vector<VarCheck<N, A>> checks_;
  std::vector<Condition<N, A>> conditions_;
  Program<N> program_;
  std::vector<Source> rhs_sources_;  // the pattern applier's (finish)
  Source rhs_top_;
};

}  // namespace refinery::egraph
