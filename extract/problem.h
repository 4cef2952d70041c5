// The extraction problem, flattened: classes of candidate nodes, each with
// its own cost and the classes it needs. Extractors (dag_greedy, ilp) work on
// this plain form so they can be tested on hand-built problems (cycles
// included) and stay independent of any language; make_problem builds it
// from an e-graph.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "egraph/egraph.h"

namespace refinery::extract {

inline constexpr double kInfiniteCost = std::numeric_limits<double>::infinity();

struct Candidate {
  double cost = 0;                  // its own cost (finite, >= 0); infinite: never chosen
  std::vector<std::uint32_t> kids;  // class indices it needs
};

struct Problem {
  std::vector<std::vector<Candidate>> classes;
  std::vector<std::uint32_t> roots;
};

inline constexpr std::int32_t kUnchosen = -1;

// One candidate index per class (kUnchosen where the class is not needed).
struct Solution {
  std::vector<std::int32_t> choice;
};

// Sum of the chosen candidates' costs, each needed class counted once (a
// shared sub-graph is paid for once).
double dag_cost(const Problem& p, const Solution& s);

// Empty when every root is chosen, every chosen candidate's kids are chosen
// and the chosen graph has no cycle; otherwise what is wrong.
std::string check_solution(const Problem& p, const Solution& s);

// Cycles among the chosen candidates reachable from the roots: one per back
// edge of a depth-first search (class indices, first != last), at most `limit`.
std::vector<std::vector<std::uint32_t>> find_cycles(const Problem& p, const Solution& s, std::size_t limit);

// A cycle among chosen candidates reachable from the roots (class indices,
// first = last), if any.
std::optional<std::vector<std::uint32_t>> find_cycle(const Problem& p, const Solution& s);

// Strongly connected components of the class graph (an edge c -> k when a
// candidate of c needs k), by iterative Tarjan: a component index per class.
// Only edges inside one component can lie on a cycle.
std::vector<std::uint32_t> class_components(const std::vector<std::vector<Candidate>>& classes);

// Per class c, the labels (`label[k]` < num_labels for every class k: the
// class itself, or its component) of the classes that every acyclic
// computation of c uses, c's own among them: the greatest fixpoint of
// R(c) = {label(c)} + the intersection over c's candidates of the union of
// their kids' R. Valid for any fixpoint: by induction over a chosen
// (acyclic) sub-graph, c's candidate has a kid k with s in R(k), and k's
// computation uses a class labelled s. Bitsets over labels, one row of
// words per class. `comp` is class_components(classes): the sweep visits
// kids before parents, so only cycles are iterated.
struct Requirements {
  std::size_t words = 0;
  std::vector<std::uint64_t> bits;  // class-major
  const std::uint64_t* of(std::size_t c) const { return bits.data() + c * words; }
  bool has(std::size_t c, std::uint32_t s) const { return (of(c)[s / 64] >> (s % 64)) & 1; }
};
Requirements requirements(const std::vector<std::vector<Candidate>>& classes, const std::vector<std::uint32_t>& comp,
                          const std::vector<std::uint32_t>& label, std::size_t num_labels);
// Per class, the classes every acyclic computation of it uses, itself among
// them: requirements labelled by class (the reduction's dominance, the ILP's
// layers).
Requirements class_requirements(const std::vector<std::vector<Candidate>>& classes);

// Path bounds: every acyclic answer's chosen sub-graph holds a path from a
// root down to a leaf whose classes are all distinct, so its DAG cost is at
// least that path's candidates' costs, whatever it shares elsewhere.
// `below[c]`: a lower bound on the DAG cost of any acyclic computation of
// c: the least fixpoint of below(c) = min over c's candidates of cost + the
// largest below(kid) (0 without kids), by Knuth's generalisation of
// Dijkstra (the min-cost derivation, cycles included; infinite where c
// cannot be computed), plus, with `work_per_size` > 0, what the other kids
// pay outside one kid's computation: the heaviest path from another kid
// until it meets a class m the first reaches, by a search of its own, the
// largest over the other kids; each kid in turn is the first, and the
// largest sum counts. The path stops at m at what a computation of the
// first kid that holds m costs beyond its bound (at least the cheapest path
// of candidates down to m, plus m's heaviest path), or goes on below m
// where that is less. Then all again with sums inside the searches: at a
// step with several kids, each other kid adds the heaviest path it pays
// outside both the first kid's reach and the step's heaviest kid's (a
// Reshape's shape beside its data), and the larger bound counts, class by
// class; the second round is skipped where the first one's bound of an
// answer (of_answer) already reaches `enough` (an answer's cost: nothing to
// prove). Each round's searches share a budget of work_per_size times the
// problem's size (classes and edges visited); past it, or once
// `out_of_time` says so (asked before each search), a search gives 0.
// Then, each below `enough` still: several classes of one strongly
// connected component paid together (components_round.h), each
// candidate from its own bound of the rounds before; and the costs split
// in two, the components that round asked about and the rest: an answer
// pays both parts, each at least its own problem's bound (the same
// classes, the other part's costs at 0), so their sum is a bound.
// `above[c]`: the least cost of a path of candidates from a root down to c,
// c's own left out (0 at a root; infinite where no root reaches c). An
// answer that chooses candidate i of c costs at least above[c] + cost_i +
// the largest below over i's kids; any answer, at least the largest below
// over the roots.
struct PathBounds {
  std::vector<double> below, above;
  double through(const std::vector<std::vector<Candidate>>& classes, std::size_t c, std::size_t i) const;
  double of_answer(const std::vector<std::uint32_t>& roots) const;
};
PathBounds path_bounds(const std::vector<std::vector<Candidate>>& classes, const std::vector<std::uint32_t>& roots,
                       std::size_t work_per_size = 0, const std::function<bool()>& out_of_time = {},
                       double enough = kInfiniteCost);

// Keeps only the choices reachable from the roots.
Solution prune_unreachable(const Problem& p, Solution s);

// A problem built from an e-graph: `nodes[c][i]` is the e-node of candidate
// i of problem class c, `class_of[c]` its e-class.
template <class G>
struct EGraphProblem {
  Problem problem;
  std::vector<egraph::Id> class_of;
  std::vector<std::vector<const typename G::Node*>> nodes;
  std::unordered_map<egraph::Id, std::uint32_t> index_of;

  const typename G::Node& chosen(const Solution& s, egraph::Id c) const {
    std::uint32_t k = index_of.at(c);
    return *nodes[k][static_cast<std::size_t>(s.choice[k])];
  }
};

// Classes reachable from `roots` (through any node) become problem classes.
// cost(class id, node) prices a node; infinite leaves it out.
template <class G, class CostFn>
EGraphProblem<G> make_problem(const G& g, const std::vector<egraph::Id>& roots, CostFn&& cost) {
  EGraphProblem<G> out;
  std::vector<egraph::Id> stack;
  auto visit = [&](egraph::Id c) -> std::uint32_t {
    c = g.find(c);
    auto [it, added] = out.index_of.try_emplace(c, static_cast<std::uint32_t>(out.class_of.size()));
    if (added) {
      out.class_of.push_back(c);
      stack.push_back(c);
    }
    return it->second;
  };
  for (egraph::Id r : roots) out.problem.roots.push_back(visit(r));
  while (!stack.empty()) {
    egraph::Id c = stack.back();
    stack.pop_back();
    for (const auto& n : g[c].nodes)
      for (egraph::Id k : n.children()) visit(k);
  }
  out.problem.classes.resize(out.class_of.size());
  out.nodes.resize(out.class_of.size());
  for (std::size_t i = 0; i < out.class_of.size(); ++i) {
    for (const auto& n : g[out.class_of[i]].nodes) {
      double c = cost(out.class_of[i], n);
      if (!(c < kInfiniteCost)) continue;
      Candidate cand{c, {}};
      for (egraph::Id k : n.children()) cand.kids.push_back(out.index_of.at(g.find(k)));
      out.problem.classes[i].push_back(std::move(cand));
      out.nodes[i].push_back(&n);
    }
  }
  return out;
}

}  // namespace refinery::extract
