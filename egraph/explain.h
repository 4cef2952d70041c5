// Explanations: a proof forest over e-node ids (egg's design). Every union
// adds one edge between the two specific terms that were equated, labelled
// with why (a rule, forward or backward, a named reason, or congruence). The
// path between two ids in the forest, with congruence edges expanded into
// child positions, is the proof. Only allocated when explanations are on.
// A rule's edge also records its match's premises: the e-nodes the pattern
// matched below its root, each with the term its parent node reads in that
// class (egg explains these through congruence, from an instantiated left
// side; we keep them on the edge, so `owed` follows them without expanding
// congruence: what a match needed, not the whole sub-term's history).
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "egraph/id.h"
#include "egraph/language.h"

namespace refinery::egraph {

struct Justification {
  static constexpr std::uint32_t kCongruence = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::uint32_t kNoMatch = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t reason = kCongruence;  // index into the reason names, or kCongruence
  bool forward = true;                 // the edge's child term is the rule's left side
  std::uint32_t match = kNoMatch;      // the match's premises (ProofForest::add_match), or kNoMatch
  bool is_congruence() const { return reason == kCongruence; }
};

// A premise of a match: the pattern matched the e-node of id `node` inside
// the class that the term of id `term` (what its parent e-node reads) is in.
struct Premise {
  Id term = kInvalidId;
  Id node = kInvalidId;
};

// One rewrite in a proof, before terms are materialised: at `position`
// (child indices from the root of the proven term) the sub-term becomes the
// term of id `target` by `reason` applied `forward` or backward.
struct LocalStep {
  std::vector<std::uint32_t> position;
  std::uint32_t reason = 0;
  bool forward = true;
  Id target = kInvalidId;
};

template <ENode N>
class ProofForest {
 public:
  // Registers id (== number of ids so far) whose term is `raw` (children
  // are ids of earlier terms, not canonicalised).
  void add(Id id, const N& raw) {
    (void)id;
    original_.push_back(raw);
    link_.push_back(make_id(link_.size()));
    just_.push_back(Justification{});
    by_raw_.emplace(raw, id);
  }

  const Id* find_raw(const N& raw) const {
    auto it = by_raw_.find(raw);
    return it == by_raw_.end() ? nullptr : &it->second;
  }

  const N& original(Id id) const { return original_[index(id)]; }
  std::size_t size() const { return original_.size(); }

  std::uint32_t intern_reason(std::string_view name) {
    auto it = reason_index_.find(std::string(name));
    if (it != reason_index_.end()) return it->second;
    auto idx = static_cast<std::uint32_t>(reasons_.size());
    reasons_.emplace_back(name);
    reason_index_.emplace(std::string(name), idx);
    return idx;
  }
  const std::string& reason_name(std::uint32_t reason) const { return reasons_[reason]; }

  // Keeps those of a match's premises for which keep(p) holds (each pair
  // must be in one class now, so the path between them is made of edges
  // older than the rule's edge); returns the index for
  // Justification::match, kNoMatch when none is kept.
  template <class Keep>
  std::uint32_t add_match(std::span<const Premise> premises, Keep&& keep) {
    const std::size_t start = premises_.size();
    for (const Premise& p : premises)
      if (keep(p)) premises_.push_back(p);
    if (premises_.size() == start) return Justification::kNoMatch;
    match_end_.push_back(static_cast<std::uint32_t>(premises_.size()));
    return static_cast<std::uint32_t>(match_end_.size() - 1);
  }
  std::size_t num_edges() const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < link_.size(); ++i) n += index(link_[i]) != i;
    return n;
  }
  std::size_t num_premises() const { return premises_.size(); }
  std::size_t memory_bytes() const {
    return original_.size() * (2 * sizeof(N) + 32) + premises_.size() * sizeof(Premise) +
           match_end_.size() * sizeof(std::uint32_t);
  }

  // The reasons (congruence aside) that the terms of a and b (one class) are
  // equal owes: those on the path from a to b, congruence edges not
  // expanded, and for each of its rule edges, those on the paths of the
  // edge's match's premises (a rule that made a node the match needed), the
  // same way but not further: what the premises' own matches needed is left
  // out. Sorted, each once.
  std::vector<std::uint32_t> owed(Id a, Id b) const {
    std::vector<std::uint32_t> out;
    for (std::uint32_t e : rule_edges(a, b)) {
      out.push_back(just_[e].reason);
      std::uint32_t m = just_[e].match;
      if (m == Justification::kNoMatch) continue;
      for (std::uint32_t i = m == 0 ? 0 : match_end_[m - 1]; i < match_end_[m]; ++i)
        for (std::uint32_t d : rule_edges(premises_[i].term, premises_[i].node)) out.push_back(just_[d].reason);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  // Records that term(a) = term(b) because of `why` (a and b were in
  // different trees).
  void link(Id a, Id b, Justification why) {
    reroot(a);
    link_[index(a)] = b;
    just_[index(a)] = why;
  }

  // Appends the steps that turn term(a) into term(b), at `position`. With
  // `congruence` false, a congruence edge adds no steps (its children's
  // equalities are left unexplained): the steps that made term(a)'s class
  // grow towards term(b) at this level only.
  void explain(Id a, Id b, std::vector<std::uint32_t>& position, std::vector<LocalStep>& out,
               bool congruence = true) const {
    walk(a, b, [&](Id x, Id y, Justification j, std::uint32_t) { edge(x, y, j, position, out, congruence); });
  }

 private:
  struct RawHash {
    std::size_t operator()(const N& n) const { return static_cast<std::size_t>(n.hash()); }
  };

  // Calls f(x, y, j, e) for each edge on the path from term(a) to term(b),
  // in order: from term(x) to term(y) by j (oriented along the path); e is
  // the edge's key, the id whose link holds it.
  template <class F>
  void walk(Id a, Id b, F&& f) const {
    if (a == b) return;
    // Ancestors of a, with their order along the path.
    std::unordered_map<std::uint32_t, std::size_t> depth_of;
    std::vector<Id> up_a;
    for (Id x = a;; x = link_[index(x)]) {
      depth_of.emplace(index(x), up_a.size());
      up_a.push_back(x);
      if (link_[index(x)] == x) break;
    }
    std::vector<Id> up_b;
    Id lca = b;
    while (!depth_of.contains(index(lca))) {
      assert(link_[index(lca)] != lca && "explained ids in different classes");
      up_b.push_back(lca);
      lca = link_[index(lca)];
    }
    std::size_t lca_depth = depth_of.at(index(lca));
    for (std::size_t i = 0; i < lca_depth; ++i) f(up_a[i], up_a[i + 1], just_[index(up_a[i])], index(up_a[i]));
    for (std::size_t i = up_b.size(); i-- > 0;) {
      Id child = up_b[i];
      Justification j = just_[index(child)];
      j.forward = !j.forward;
      f(link_[index(child)], child, j, index(child));
    }
  }

  // The keys of the rule edges on the path from term(a) to term(b).
  std::vector<std::uint32_t> rule_edges(Id a, Id b) const {
    std::vector<std::uint32_t> out;
    walk(a, b, [&](Id, Id, Justification j, std::uint32_t e) {
      if (!j.is_congruence()) out.push_back(e);
    });
    return out;
  }

  // One forest edge from term(x) to term(y).
  void edge(Id x, Id y, Justification j, std::vector<std::uint32_t>& position, std::vector<LocalStep>& out,
            bool congruence) const {
    if (!j.is_congruence()) {
      out.push_back(LocalStep{position, j.reason, j.forward, y});
      return;
    }
    if (!congruence) return;
    auto cx = original_[index(x)].children();
    auto cy = original_[index(y)].children();
    for (std::uint32_t i = 0; i < cx.size(); ++i) {
      position.push_back(i);
      explain(cx[i], cy[i], position, out);
      position.pop_back();
    }
  }

  // Makes x the root of its tree by reversing the path above it.
  void reroot(Id x) {
    Id child = x;
    Id par = link_[index(x)];
    Justification j = just_[index(x)];
    link_[index(x)] = x;
    while (par != child) {
      Id next = link_[index(par)];
      Justification nj = just_[index(par)];
      link_[index(par)] = child;
      just_[index(par)] = Justification{j.reason, !j.forward, j.match};
      if (next == par) break;
      child = par;
      par = next;
      j = nj;
    }
  }

  std::vector<N> original_;
  std::vector<Id> link_;
  std::vector<Justification> just_;
  std::unordered_map<N, Id, RawHash> by_raw_;
  std::vector<Premise> premises_;
  std::vector<std::uint32_t> match_end_;  // per match: the end of its premises in premises_
  std::vector<std::string> reasons_;
  std::unordered_map<std::string, std::uint32_t> reason_index_;
};

}  // namespace refinery::egraph
