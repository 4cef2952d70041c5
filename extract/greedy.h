// Greedy extraction on a Problem. The tree extractor (egg's) prices a node as
// its own cost plus its children's best costs, so a sub-graph used twice is
// paid twice; the DAG extractor prices the set of classes a choice needs, so
// a shared sub-graph is paid once. Both return acyclic solutions: a choice
// whose needed set contains its own class is refused, and the DAG answer is
// checked and, if the fixpoint did not settle, replaced by the tree answer.
#pragma once

#include <cstddef>

#include "extract/problem.h"

namespace refinery::extract {

// Bellman-Ford style fixpoint over tree costs. Every node is charged at
// least `epsilon` more than its children, so choices cannot form a cycle.
Solution extract_greedy_tree(const Problem& p, double epsilon = 1e-9);

struct DagGreedyOptions {
  std::size_t max_visits_per_class = 64;  // bound on re-evaluations (oscillation guard)
  bool shared_discount = true;            // also try charging shared classes per user (see greedy.cpp)
  std::size_t group_move_rounds = 3;      // rounds of group moves (all users of a class switch at once); 0: none
  // Rounds of single moves after them (one class of the answer switches to another candidate, kept when the exact
  // DAG cost drops and the answer stays acyclic); 0: none. kGreedyWithMoves (below) runs three.
  std::size_t single_move_rounds = 0;
};

// Greedy as the tools run it: `refinery optimize`'s greedy extraction and
// the ILP's incumbent. Three rounds of single moves after the group moves:
// on the zoo's 114 e-graphs they lowered 9 answers by 0.03-4.7% and cost
// no CPU that shows (26.2 s in all either way; docs/measurements.md,
// session 30).
inline constexpr DagGreedyOptions kGreedyWithMoves{.single_move_rounds = 3};

struct DagGreedyResult {
  Solution solution;
  bool fell_back_to_tree = false;  // the DAG fixpoint did not settle acyclic
};

DagGreedyResult extract_greedy_dag(const Problem& p, const DagGreedyOptions& options = {});

}  // namespace refinery::extract
