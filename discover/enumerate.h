// Internal to discover/: the enumerator. Terms are grown layer by layer in
// one tensor e-graph (op(children) over the classes found so far, kept only
// when they type-check), so that terms the rules already equate share a
// class and are not enumerated again; each class carries its smallest term
// (extract/, tree cost = ops) and a fingerprint: its values on seeded
// random inputs at several shapes and value ranges (runtime/).
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "discover/discover.h"
#include "discover/term.h"
#include "egraph/runner.h"
#include "ir/tensor.h"

namespace refinery::discover {

class Enumerator {
 public:
  explicit Enumerator(const DiscoverOptions& options);

  // Adds every well-typed op(children) whose smallest form has `size` ops;
  // returns how many e-nodes were new.
  std::size_t add_layer(int size);
  // Runs the rules over the e-graph (equal terms merge), then refreshes.
  // Returns each rule's matches, summed over the iterations.
  std::vector<std::size_t> saturate(const std::vector<rules::TensorRewrite>& rules, const egraph::RunnerLimits& limits);
  // Recomputes the smallest terms and the missing fingerprints.
  void refresh();

  // Classes with a smallest term of at most `max_size` ops, grouped by
  // fingerprint; only groups of two or more, each sorted smallest first.
  std::vector<std::vector<egraph::Id>> groups(int max_size);
  std::uint64_t fingerprint(egraph::Id c) const;

  std::optional<Term> term(egraph::Id c) const;  // nullopt: no term over the vocabulary
  int size(egraph::Id c) const;                  // -1: none
  // The canonical classes whose smallest term has at most `max_size` ops.
  std::vector<egraph::Id> classes(int max_size) const;
  const egraph::tensor::TensorEGraph& egraph() const { return graph_.egraph(); }
  std::size_t num_samples() const { return leaves_.size(); }

 private:
  using Values = std::vector<std::optional<ir::Tensor>>;  // one per sample; nullopt: ill-typed there
  const Values& values(egraph::Id c);
  Values eval(const egraph::tensor::TensorNode& n);
  void enumerate(const OpSpec& spec, int size, std::vector<egraph::Id>& kids, int left, std::size_t& added);

  const DiscoverOptions& options_;
  TermGraph graph_;
  std::vector<std::vector<ir::Tensor>> leaves_;  // per sample: each variable's value (f64)
  std::unordered_map<std::uint32_t, Values> values_;
  std::unordered_map<std::uint32_t, std::uint64_t> fingerprints_;
  std::unordered_map<std::uint32_t, egraph::tensor::TensorNode> choice_;  // canonical id -> smallest node
  std::unordered_map<std::uint32_t, int> size_;
  std::unordered_map<std::uint32_t, bool> ground_;  // the smallest term has no variable
  std::vector<std::vector<egraph::Id>> by_size_;
};

}  // namespace refinery::discover
