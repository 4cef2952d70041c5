// Small extraction problems shared by the extractor tests.
#pragma once

#include <algorithm>
#include <random>

#include "extract/problem.h"

namespace refinery::extract::testing {

inline Candidate leaf(double cost) { return Candidate{cost, {}}; }
inline Candidate node(double cost, std::vector<std::uint32_t> kids) { return Candidate{cost, std::move(kids)}; }

// Two roots that can share one expensive sub-graph S (class 2) or use their
// own cheaper-per-use private versions: tree cost prefers the private ones
// (2 + 2 < 3 + 3 per tree), DAG cost prefers sharing (3 once).
//   class 0 (root a): f(S) cost 1 | a' cost 3.5
//   class 1 (root b): g(S) cost 1 | b' cost 3.5
//   class 2 (S)     : s cost 5
inline Problem shared_subgraph() {
  Problem p;
  p.classes = {{node(1, {2}), leaf(3.5)}, {node(1, {2}), leaf(3.5)}, {leaf(5)}};
  p.roots = {0, 1};
  return p;
}

// A diamond: the root either is a leaf (10) or h(L, R) (1), where L = f(S)
// and R = g(S) (1 each) share S (5). Tree cost prices h at 1 + 6 + 6 = 13
// and takes the leaf; DAG cost prices it at 1 + 1 + 1 + 5 = 8.
inline Problem diamond() {
  Problem p;
  p.classes = {{node(1, {1, 2}), leaf(10)}, {node(1, {3}), leaf(7)}, {node(1, {3}), leaf(7)}, {leaf(5)}};
  p.roots = {0};
  return p;
}

// A cycle that costs nothing: class 0 = {h(1) cost 0, x cost 10},
// class 1 = {k(0) cost 0, y cost 4}. Choosing h and k together is free but
// cyclic; the answer is h(1) with y (cost 4).
inline Problem free_cycle() {
  Problem p;
  p.classes = {{node(0, {1}), leaf(10)}, {node(0, {0}), leaf(4)}};
  p.roots = {0};
  return p;
}

// Random problems with cycles: every class has a leaf (so a solution exists)
// and a few candidates pointing anywhere (back edges included).
inline Problem random_problem(std::mt19937& rng, std::uint32_t classes) {
  std::uniform_real_distribution<double> cost(0, 10);
  std::uniform_int_distribution<std::uint32_t> pick(0, classes - 1), count(0, 3), arity(1, 3);
  Problem p;
  p.classes.resize(classes);
  for (std::uint32_t c = 0; c < classes; ++c) {
    p.classes[c].push_back(leaf(20 + cost(rng)));
    for (std::uint32_t i = count(rng); i > 0; --i) {
      Candidate n{cost(rng) < 2 ? 0.0 : cost(rng), {}};
      for (std::uint32_t a = arity(rng); a > 0; --a) n.kids.push_back(pick(rng));
      p.classes[c].push_back(std::move(n));
    }
  }
  p.roots = {0, pick(rng)};
  return p;
}

// Random problems shaped by layers (a class's candidates mostly need later
// classes, sometimes an earlier one: a few cycles), where only the last two
// classes are leaves: most classes have no leaf of their own, so a class
// can require classes below it (every computation of it uses them), and
// costs are drawn from a few values, so candidates tie.
inline Problem random_layered_problem(std::mt19937& rng, std::uint32_t classes) {
  std::uniform_int_distribution<int> cost(0, 4), count(1, 3), arity(1, 2), percent(0, 99);
  Problem p;
  p.classes.resize(classes);
  for (std::uint32_t c = 0; c < classes; ++c) {
    if (c + 2 >= classes) {
      for (int i = count(rng) % 2 + 1; i > 0; --i) p.classes[c].push_back(leaf(1 + cost(rng)));
      continue;
    }
    for (int i = count(rng); i > 0; --i) {
      Candidate n{static_cast<double>(cost(rng)), {}};
      for (int a = arity(rng); a > 0; --a) {
        std::uniform_int_distribution<std::uint32_t> later(c + 1, classes - 1), any(0, classes - 1);
        n.kids.push_back(percent(rng) < 15 ? any(rng) : later(rng));
      }
      p.classes[c].push_back(std::move(n));
    }
  }
  p.roots = {0, std::uniform_int_distribution<std::uint32_t>(0, classes - 1)(rng)};
  return p;
}

// The optimum by trying every choice of a candidate per class (small
// problems only): the cheapest valid (complete, acyclic) answer, or
// kInfiniteCost when there is none.
inline double brute_force_optimum(const Problem& p) {
  Solution s{std::vector<std::int32_t>(p.classes.size(), 0)};
  double best = kInfiniteCost;
  for (const auto& cands : p.classes)
    if (cands.empty()) return best;
  while (true) {
    Solution pruned = prune_unreachable(p, s);
    if (check_solution(p, pruned).empty()) best = std::min(best, dag_cost(p, pruned));
    std::size_t c = 0;
    for (; c < p.classes.size(); ++c) {
      if (static_cast<std::size_t>(++s.choice[c]) < p.classes[c].size()) break;
      s.choice[c] = 0;
    }
    if (c == p.classes.size()) return best;
  }
}

}  // namespace refinery::extract::testing
