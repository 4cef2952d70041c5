// Problem reduction before an exact solver: a smaller Problem with the same
// optimum (minus a fixed cost), and the way back to the original's solution.
// Tensor e-graphs have thousands of classes, most with one candidate or a
// free one; what is decided without search is taken out:
//   reachable   classes the roots reach through candidates that can be
//               computed at all (no class with no candidate below them);
//   dominated   a candidate b no cheaper than another a of its class whose
//               kids' computations use every class a needs (each is a kid
//               of b or required by one: every acyclic computation of it
//               uses that class; a subset of b's kids is the plain case).
//               DAG cost: a is never worse and makes no cycle b does not;
//   collapsed   a class left with one candidate is folded into its parents
//               (they need its children instead) when that is exact under
//               DAG cost: it is free, or needed by every solution (its cost
//               is then fixed), or only one candidate uses it (its cost moves
//               there);
//   bounded     a candidate is dropped when the fixed cost plus the
//               cheapest root-to-leaf path through it (path_bounds: every
//               answer choosing it pays one, each class once) exceeds an
//               upper bound (the greedy answer).
// The steps repeat until nothing changes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "extract/problem.h"

namespace refinery::extract {

// Size of a problem after one reduction step.
struct ReductionStep {
  std::string name;  // "input", "reachable", "dominated", "collapsed", "bounded"
  std::size_t classes = 0, candidates = 0;
};

struct Reduced {
  Problem problem;
  double fixed_cost = 0;  // cost every solution pays for the collapsed classes it needs
  // A reduced class's original class, and each reduced candidate's index in it.
  std::vector<std::uint32_t> original_class;
  std::vector<std::vector<std::int32_t>> original_candidate;
  // Original classes folded away, with the one candidate they were left with.
  std::vector<std::pair<std::uint32_t, std::int32_t>> forced;
  // Reduced classes every solution needs (the solver can fix their activity).
  std::vector<std::uint8_t> required;
  std::vector<ReductionStep> steps;  // "input" first, then each step's cumulative effect, in order

  // The original problem's solution: the reduced choices, the forced ones,
  // pruned to what the roots need. Its DAG cost is the reduced one plus
  // fixed_cost.
  Solution expand(const Problem& original, const Solution& reduced) const;
  // The other way: the reduced choices of a solution of the original problem,
  // pruned to what the reduced roots need; nothing where a class it computes
  // chose a candidate the reduction took out (or the reduced answer is not
  // valid). Its expansion may differ from `original` only in classes folded away.
  std::optional<Solution> restrict(const Problem& original, const Solution& s) const;
};

// `upper_bound`: the cost of a known solution of `p` (infinite: none).
// `paths`: the bound step prices a candidate by the path through it
// (problem.h, path_bounds), else by its own cost alone.
Reduced reduce(const Problem& p, double upper_bound = kInfiniteCost, bool paths = true);

std::size_t num_candidates(const Problem& p);

// A relaxation for bounding: each strongly connected component of the
// class graph becomes one class whose candidates are the component's
// entering candidates (those that need no class of the component), their
// kids mapped to components. Any answer of p pays for at least one
// entering candidate of each component it uses, and those need only what
// the answer computes, so the condensed optimum is at most p's. It has no
// cycle, and a value computed in either of two layouts is one class there,
// which the relaxation of p cannot see.
Problem condensed(const Problem& p);

}  // namespace refinery::extract
