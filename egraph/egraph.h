// The e-graph: hashconsed e-nodes grouped into e-classes, generic over a
// language's node type N and an analysis A (like egg's EGraph<L, N>).
// `add` and `merge` leave the graph dirty; `rebuild` restores congruence and
// the indexes; readers (search, dumps, extraction) require a clean graph.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "egraph/analysis.h"
#include "egraph/eclass.h"
#include "egraph/explain.h"
#include "egraph/hashcons.h"
#include "egraph/id.h"
#include "egraph/invariants.h"
#include "egraph/language.h"
#include "egraph/rec_expr.h"
#include "egraph/union_find.h"

namespace refinery::egraph {

struct EGraphConfig {
  bool explanations = false;  // record a proof forest (costs memory and time)
};

template <ENode N, class A = NoAnalysis>
class EGraph {
 public:
  using Node = N;
  using Analysis = A;
  using Data = typename A::Data;
  using Class = EClass<N, Data>;

  explicit EGraph(A analysis = A{}, EGraphConfig config = {}) : analysis_(std::move(analysis)) {
    if (config.explanations) explain_ = std::make_unique<ProofForest<N>>();
  }
  EGraph(EGraph&&) noexcept = default;
  EGraph& operator=(EGraph&&) noexcept = default;

  // ---- building -------------------------------------------------------

  // Adds an e-node whose children are any ids; returns its class (or, with
  // explanations on, the id of this exact term).
  Id add(N node) {
    if (explain_) return add_explained(std::move(node));
    canonicalize(node);
    std::uint64_t h = node.hash();
    if (auto owner = memo_find(node, h)) return uf_.find_mut(*owner);
    Id id = add_new(node, h, node);
    return uf_.find_mut(id);
  }

  // Two-phase add for batched instantiation (no explanations): prepare
  // canonicalises `node`, returns its hash and prefetches its hashcons slot;
  // add_prepared then adds it. Other adds may happen in between; if a union
  // may have happened too (union_count() changed: an analysis's modify can
  // union), pass `recheck` and the children are canonicalised again.
  std::uint64_t prepare(N& node) {
    canonicalize(node);
    std::uint64_t h = node.hash();
    memo_.prefetch(h);
    return h;
  }
  Id add_prepared(N& node, std::uint64_t h, bool recheck = true) {
    assert(!explain_);
    if (recheck && canonicalize(node)) h = node.hash();
    if (auto owner = memo_find(node, h)) return uf_.find_mut(*owner);
    return uf_.find_mut(add_new(node, h, node));
  }
  // As add_prepared, for a node about to be unioned with class `into` (the
  // top of a rule's right side, with its match's class): when the node is
  // new it joins `into`'s class directly instead of becoming a class of its
  // own that is then merged away, which gives the same classes, nodes,
  // union-find links and analysis data without creating a class and merging
  // it. Returns the node's class and whether the node was new (the graph
  // changed, as the union would have changed it).
  std::pair<Id, bool> add_prepared_into(N& node, std::uint64_t h, Id into, bool recheck = true) {
    assert(!explain_);
    if (recheck && canonicalize(node)) h = node.hash();
    if (auto owner = memo_find(node, h)) return {uf_.find_mut(*owner), false};
    return {join_new(node, h, uf_.find_mut(into)), true};
  }
  // Unions so far (merges that changed the graph, rebuild's included).
  std::size_t union_count() const { return unions_; }

  Id add_expr(const RecExpr<N>& expr) {
    std::vector<Id> ids(expr.nodes.size());
    for (std::size_t i = 0; i < expr.nodes.size(); ++i) {
      N node = expr.nodes[i];
      for (Id& c : node.children()) c = ids[index(c)];
      ids[i] = add(std::move(node));
    }
    return ids.back();
  }

  // Asserts that two classes are equal. Returns false if they already were.
  bool merge(Id a, Id b) {
    if (explain_) return merge_impl(a, b, Justification{explain_->intern_reason("union"), true});
    Id ra = uf_.find_mut(a), rb = uf_.find_mut(b);
    if (ra == rb) return false;  // the common case, inline
    return merge_roots(ra, rb, a, b, Justification{});
  }

  // As merge, recording `reason` for explanations: term(a) -> term(b) by the
  // rule or reason named `reason`, applied forward, whose match needed the
  // `premises` (explain.h; those whose two ids are not in one class are
  // left out: a match read from a stale node).
  bool merge_because(Id a, Id b, std::string_view reason, bool forward = true,
                     std::span<const Premise> premises = {}) {
    if (!explain_) return merge_impl(a, b, Justification{});
    Id ra = uf_.find_mut(a), rb = uf_.find_mut(b);
    if (ra == rb) return false;
    Justification why{explain_->intern_reason(reason), forward};
    why.match = explain_->add_match(
        premises, [&](const Premise& p) { return p.term != p.node && uf_.find_mut(p.term) == uf_.find_mut(p.node); });
    return merge_roots(ra, rb, a, b, why);
  }

  // Combines `data` into class `id`'s with the analysis's merge, as a union
  // with a class holding `data` would (a fact learnt from outside the
  // e-graph: a type the input declares). Parents are re-analysed during
  // rebuild when the class's data changed.
  void merge_data(Id id, Data data) {
    Id root = uf_.find_mut(id);
    Class& c = classes_[index(root)];
    if (!analysis_.merge(c.data, std::move(data)).a_changed) return;
    push_analysis(c.parents);
    clean_ = false;
    if constexpr (HasModify<A, EGraph>) analysis_.modify(*this, root);
  }

  // Restores congruence and the indexes. Returns the number of unions that
  // rebuilding itself performed.
  std::size_t rebuild();

  // ---- reading --------------------------------------------------------

  Id find(Id id) const { return uf_.find(id); }
  Id find_mut(Id id) { return uf_.find_mut(id); }
  const Class& operator[](Id id) const { return classes_[index(uf_.find(id))]; }
  Class& class_mut(Id id) { return classes_[index(uf_.find_mut(id))]; }
  const A& analysis() const { return analysis_; }

  bool is_clean() const { return clean_; }
  std::size_t num_classes() const { return num_classes_; }
  // Distinct canonical e-nodes (the hashcons size; includes nodes an
  // analysis pruned from their class's list).
  std::size_t num_nodes() const { return memo_.size(); }
  // Sum of class node-list lengths (exact after rebuild).
  std::size_t num_class_nodes() const { return class_nodes_; }
  std::size_t num_ids() const { return nodes_.size(); }
  bool explanations_enabled() const { return explain_ != nullptr; }

  // Canonical class ids in increasing order (clean graph).
  std::span<const Id> class_ids() const { return class_ids_; }
  // Canonical classes that hold a node with this op_key (clean graph).
  std::span<const Id> classes_with_op(std::uint32_t op_key) const {
    if (op_key >= by_op_.size()) return {};
    return by_op_[op_key];
  }

  std::optional<Id> lookup(N node) const {
    for (Id& c : node.children()) c = uf_.find(c);
    if (auto owner = memo_find(node, node.hash())) return uf_.find(*owner);
    return std::nullopt;
  }
  std::optional<Id> lookup_expr(const RecExpr<N>& expr) const {
    std::vector<Id> ids(expr.nodes.size());
    for (std::size_t i = 0; i < expr.nodes.size(); ++i) {
      N node = expr.nodes[i];
      for (Id& c : node.children()) c = ids[index(c)];
      auto id = lookup(std::move(node));
      if (!id) return std::nullopt;
      ids[i] = *id;
    }
    return ids.back();
  }

  // Per-node-id view used by the invariant checker and the dumps.
  bool is_live_node(Id id) const { return !dead_[index(id)]; }
  const N& stored_node(Id id) const { return nodes_[index(id)]; }

  // Keeps only the nodes of class `id` for which pred(node) holds (an
  // analysis may prune, as egg's constant folding does). The pruned nodes
  // stay in the hashcons.
  template <class Pred>
  void retain_nodes(Id id, Pred&& pred) {
    auto& nodes = class_mut(id).nodes;
    auto before = nodes.size();
    std::erase_if(nodes, [&](const N& n) { return !pred(n); });
    class_nodes_ -= before - nodes.size();
    clean_ = false;
    dirty_.push_back(uf_.find_mut(id));
  }

  // Rough heap footprint in bytes (for the runner's memory limit).
  std::size_t memory_bytes() const {
    return nodes_.capacity() * sizeof(N) + dead_.capacity() + classes_.capacity() * sizeof(Class) +
           class_nodes_ * sizeof(N) + parent_entries_ * sizeof(Id) + memo_.memory_bytes() + uf_.memory_bytes() +
           (explain_ ? explain_->memory_bytes() : 0);
  }

  // Empty when the hashcons and congruence invariants hold, else what broke.
  std::string check_invariants() const { return egraph::check_invariants(*this); }

  // ---- explanations (require EGraphConfig{.explanations = true}) -----

  const ProofForest<N>* proof_forest() const { return explain_.get(); }
  // Steps turning the term of id a into the term of id b (same class).
  // With `congruence` false, only the steps at the top (no step inside a
  // child that congruence carried up): what made the class itself grow.
  std::vector<LocalStep> explain_ids(Id a, Id b, bool congruence = true) const {
    std::vector<LocalStep> steps;
    std::vector<std::uint32_t> position;
    if (explain_) explain_->explain(a, b, position, steps, congruence);
    return steps;
  }

  // The id whose node is stored canonically as `node` (owner in the hashcons).
  std::optional<Id> memo_owner(const N& node) const { return memo_find(node, node.hash()); }

 private:
  bool canonicalize(N& node) {
    bool changed = false;
    for (Id& c : node.children()) {
      Id r = uf_.find_mut(c);
      changed |= r != c;
      c = r;
    }
    return changed;
  }

  std::optional<Id> memo_find(const N& node, std::uint64_t h) const { return memo_.find(node, h); }

  // A new id's slots: its node, its dead flag and its class (empty; used
  // only while the id is a root).
  Class& new_slot(const N& node, bool dead = false) {
    nodes_.push_back(node);
    dead_.push_back(dead ? 1 : 0);
    return classes_.emplace_back();
  }
  // A new node `id` entered in its children's parent lists (each child
  // once) and in the hashcons.
  void enter(const N& node, std::uint64_t h, Id id) {
    Id prev = kInvalidId;
    for (Id child : node.children()) {
      if (child == prev) continue;
      classes_[index(child)].parents.push_back(id);
      ++parent_entries_;
      prev = child;
    }
    memo_.insert(node, h, id);
    ++class_nodes_;
  }

  // A node absent from the hashcons (children canonical) becomes a class.
  Id add_new(const N& node, std::uint64_t h, const N& raw) {
    Id id = uf_.make_set();
    Class& c = new_slot(node);
    c.id = id;
    if (!spare_nodes_.empty()) {
      c.nodes = std::move(spare_nodes_.back());
      spare_nodes_.pop_back();
    }
    if (!spare_parents_.empty()) {
      c.parents = std::move(spare_parents_.back());
      spare_parents_.pop_back();
    }
    c.nodes.push_back(node);
    c.data = analysis_.make(*this, node);
    enter(node, h, id);
    ++num_classes_;
    clean_ = false;
    if (explain_) explain_->add(id, raw);
    if constexpr (HasModify<A, EGraph>) analysis_.modify(*this, id);
    return id;
  }

  // A node absent from the hashcons (children canonical) joins the class of
  // root `root`: add_new followed by merge_roots(root, new class), less the
  // class (a merge keeps `root`, whose class has at least the new one's zero
  // parents; the new node's id links to it either way). Not inlined into
  // the applier's loop, as add_new is not: inlined, math_associate_adds
  // ran 9% slower (bench_egraph; fewer instructions, the loop larger).
  [[gnu::noinline]] Id join_new(const N& node, std::uint64_t h, Id root) {
    Id id = uf_.make_member_of(root);
    new_slot(node);
    Data data = analysis_.make(*this, node);
    enter(node, h, id);
    Class& c = classes_[index(root)];
    c.nodes.push_back(node);
    if (analysis_.merge(c.data, std::move(data)).a_changed) push_analysis(c.parents);
    dirty_.push_back(root);
    clean_ = false;
    if constexpr (HasModify<A, EGraph>) analysis_.modify(*this, root);
    return root;
  }

  Id add_explained(N raw) {
    if (const Id* known = explain_->find_raw(raw)) return *known;
    N node = raw;
    canonicalize(node);
    std::uint64_t h = node.hash();
    if (auto owner = memo_find(node, h)) {
      // Same canonical node, different term: a new id in the same class,
      // linked to the existing node by congruence.
      Id id = uf_.make_member_of(uf_.find_mut(*owner));
      new_slot(node, /*dead=*/true);
      explain_->add(id, raw);
      explain_->link(id, *owner, Justification{});
      return id;
    }
    return add_new(node, h, raw);
  }

  bool merge_impl(Id a_raw, Id b_raw, Justification why) {
    Id a = uf_.find_mut(a_raw);
    Id b = uf_.find_mut(b_raw);
    if (a == b) return false;
    return merge_roots(a, b, a_raw, b_raw, why);
  }

  // merge_impl of the distinct roots a and b of a_raw and b_raw.
  bool merge_roots(Id a, Id b, Id a_raw, Id b_raw, Justification why) {
    if (explain_) explain_->link(a_raw, b_raw, why);
    if (classes_[index(a)].parents.size() < classes_[index(b)].parents.size()) std::swap(a, b);
    Class& ca = classes_[index(a)];
    Class& cb = classes_[index(b)];
    DidMerge did = analysis_.merge(ca.data, std::move(cb.data));
    if (did.a_changed) push_analysis(ca.parents);
    if (did.b_changed) push_analysis(cb.parents);
    uf_.link(a, b);
    ++unions_;
    pending_.insert(pending_.end(), cb.parents.begin(), cb.parents.end());
    ca.nodes.insert(ca.nodes.end(), cb.nodes.begin(), cb.nodes.end());
    ca.parents.insert(ca.parents.end(), cb.parents.begin(), cb.parents.end());
    recycle(cb);
    --num_classes_;
    dirty_.push_back(a);
    clean_ = false;
    if constexpr (HasModify<A, EGraph>) analysis_.modify(*this, a);
    return true;
  }

  // A class merged away: its small node and parent buffers go to the
  // spare lists for the next new classes (most classes of a saturating
  // e-graph are created by add and merged into another within the
  // iteration: a malloc and a free each, twice, otherwise).
  void recycle(Class& c) {
    constexpr std::size_t kKeep = 16;  // larger buffers are freed
    if (c.nodes.capacity() && c.nodes.capacity() <= kKeep) {
      c.nodes.clear();
      spare_nodes_.push_back(std::move(c.nodes));
    }
    if (c.parents.capacity() && c.parents.capacity() <= kKeep) {
      c.parents.clear();
      spare_parents_.push_back(std::move(c.parents));
    }
    c = Class{};
  }

  void push_analysis(const std::vector<Id>& parents) {
    for (Id p : parents) {
      if (in_analysis_.size() <= index(p)) in_analysis_.resize(nodes_.size(), 0);
      if (in_analysis_[index(p)]) continue;
      in_analysis_[index(p)] = 1;
      analysis_pending_.push_back(p);
    }
  }

  void process_pending();
  void rebuild_classes();
  void rebuild_indexes();

  A analysis_;
  UnionFind uf_;
  std::vector<N> nodes_;            // per id: the canonical form it was last stored under
  std::vector<std::uint8_t> dead_;  // per id: a congruent duplicate owning no hashcons entry
  std::vector<Class> classes_;      // per id: live only for canonical class ids
  std::vector<std::vector<N>> spare_nodes_;     // emptied buffers of merged-away classes
  std::vector<std::vector<Id>> spare_parents_;  // (see recycle)
  Hashcons<N> memo_;
  std::vector<Id> pending_;           // node ids whose children changed class
  std::vector<Id> analysis_pending_;  // node ids whose class data must be recomputed
  std::vector<std::uint8_t> in_analysis_;
  std::vector<Id> dirty_;  // ids whose class's node list needs re-canonicalising
  std::vector<std::uint32_t> stamp_;
  std::uint32_t epoch_ = 0;
  std::vector<Id> class_ids_;
  std::vector<std::vector<Id>> by_op_;
  std::size_t indexed_ids_ = 0;  // ids below this were seen by rebuild_indexes
  std::size_t num_classes_ = 0;
  std::size_t class_nodes_ = 0;
  std::size_t parent_entries_ = 0;
  std::size_t unions_ = 0;
  bool clean_ = true;
  std::unique_ptr<ProofForest<N>> explain_;
};

}  // namespace refinery::egraph

#include "egraph/rebuild.h"
