// Deferred rebuilding (egg's rebuild): re-canonicalise the e-nodes whose
// children changed class, merge the ones that became congruent, propagate
// analysis changes, then sort and dedup the touched classes and refresh the
// per-operator index. Included by egraph.h only.
#pragma once

namespace refinery::egraph {

template <ENode N, class A>
std::size_t EGraph<N, A>::rebuild() {
  std::size_t classes_before = num_classes_;
  process_pending();
  rebuild_classes();
  rebuild_indexes();
  clean_ = true;
#ifndef NDEBUG
  std::string broken = check_invariants();
  if (!broken.empty()) {
    std::fprintf(stderr, "egraph invariant broken after rebuild: %s\n", broken.c_str());
    std::abort();
  }
#endif
  return classes_before - num_classes_;
}

template <ENode N, class A>
void EGraph<N, A>::process_pending() {
  while (!pending_.empty() || !analysis_pending_.empty()) {
    while (!pending_.empty()) {
      Id p = pending_.back();
      pending_.pop_back();
      if (dead_[index(p)]) continue;
      N node = nodes_[index(p)];
      if (!canonicalize(node)) continue;
      [[maybe_unused]] bool erased = memo_.erase(nodes_[index(p)].hash(), p);
      assert(erased);
      nodes_[index(p)] = node;
      std::uint64_t h = node.hash();
      if (auto owner = memo_find(node, h)) {
        dead_[index(p)] = 1;
        merge_impl(*owner, p, Justification{});
      } else {
        memo_.insert(node, h, p);
      }
      dirty_.push_back(p);
    }
    while (!analysis_pending_.empty()) {
      Id p = analysis_pending_.back();
      analysis_pending_.pop_back();
      in_analysis_[index(p)] = 0;
      N node = nodes_[index(p)];
      canonicalize(node);
      Id c = uf_.find_mut(p);
      Data data = analysis_.make(*this, node);
      DidMerge did = analysis_.merge(classes_[index(c)].data, std::move(data));
      if (did.a_changed) {
        push_analysis(classes_[index(c)].parents);
        if constexpr (HasModify<A, EGraph>) analysis_.modify(*this, c);
      }
    }
  }
}

template <ENode N, class A>
void EGraph<N, A>::rebuild_classes() {
  if (stamp_.size() < nodes_.size()) stamp_.resize(nodes_.size(), 0);
  ++epoch_;
  std::vector<Id> touched;
  for (Id d : dirty_) {
    Id c = uf_.find_mut(d);
    if (stamp_[index(c)] == epoch_) continue;
    stamp_[index(c)] = epoch_;
    touched.push_back(c);
  }
  dirty_.clear();
  for (Id c : touched) {
    Class& cls = classes_[index(c)];
    for (N& n : cls.nodes) canonicalize(n);
    std::sort(cls.nodes.begin(), cls.nodes.end());
    auto before = cls.nodes.size();
    cls.nodes.erase(std::unique(cls.nodes.begin(), cls.nodes.end()), cls.nodes.end());
    class_nodes_ -= before - cls.nodes.size();
    auto pbefore = cls.parents.size();
    std::erase_if(cls.parents, [&](Id p) { return dead_[index(p)] != 0; });
    std::sort(cls.parents.begin(), cls.parents.end());
    cls.parents.erase(std::unique(cls.parents.begin(), cls.parents.end()), cls.parents.end());
    parent_entries_ -= pbefore - cls.parents.size();
  }
}

template <ENode N, class A>
void EGraph<N, A>::rebuild_indexes() {
  std::erase_if(class_ids_, [&](Id c) { return !uf_.is_root(c); });
  for (std::size_t i = indexed_ids_; i < nodes_.size(); ++i) {
    Id id = make_id(i);
    if (uf_.is_root(id) && classes_[i].is_live()) class_ids_.push_back(id);
  }
  indexed_ids_ = nodes_.size();
  for (auto& list : by_op_) list.clear();
  for (Id c : class_ids_) {
    std::uint32_t last = std::numeric_limits<std::uint32_t>::max();
    for (const N& n : classes_[index(c)].nodes) {
      std::uint32_t key = n.op_key();
      if (key == last) continue;
      last = key;
      if (key >= by_op_.size()) by_op_.resize(key + 1);
      by_op_[key].push_back(c);
    }
  }
}

}  // namespace refinery::egraph
