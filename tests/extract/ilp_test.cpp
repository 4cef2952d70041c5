// The ILP extractor: optimal where greedy is not, acyclic where a cycle is
// free, warm-started (never worse than greedy), within its time limit.
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>

#include "extract/greedy.h"
#include "extract/ilp.h"
#include "tests/extract/problems.h"

namespace refinery::extract {
namespace {

using namespace testing;

// Plain greedy DAG (without the shared-class discount) picks per class
// without seeing that two roots could share a middle class: root 0 = {p(2) 2, q(3) 1.9}, root 1 = {r(2) 2, s(4) 1.9},
// class 2 = {leaf 3}, class 3 = {leaf 2}, class 4 = {leaf 2}. Greedy takes
// q and s (1.9+2 each, total 7.8); sharing class 2 costs 2 + 2 + 3 = 7.
Problem greedy_trap() {
  Problem p;
  p.classes = {{node(2, {2}), node(1.9, {3})}, {node(2, {2}), node(1.9, {4})}, {leaf(3)}, {leaf(2)}, {leaf(2)}};
  p.roots = {0, 1};
  return p;
}

TEST(Ilp, BeatsGreedyWhereSharingIsNotLocal) {
  Problem p = greedy_trap();
  // The fixpoint alone falls into the trap; the shared discount, and group
  // moves (both roots switch to the shared class at once), each get out.
  EXPECT_NEAR(dag_cost(p, extract_greedy_dag(p, {.shared_discount = false, .group_move_rounds = 0}).solution), 7.8,
              1e-9);
  EXPECT_NEAR(dag_cost(p, extract_greedy_dag(p, {.group_move_rounds = 0}).solution), 7, 1e-9);
  EXPECT_NEAR(dag_cost(p, extract_greedy_dag(p, {.shared_discount = false}).solution), 7, 1e-9);
  EXPECT_NEAR(dag_cost(p, extract_greedy_dag(p).solution), 7, 1e-9);
  IlpResult r = extract_ilp(p);
  EXPECT_EQ(r.status, "optimal");
  EXPECT_NEAR(r.cost, 7, 1e-9);
  EXPECT_EQ(check_solution(p, r.solution), "");
}

TEST(Ilp, NeverChoosesAFreeCycle) {
  Problem p = free_cycle();
  IlpResult r = extract_ilp(p);
  EXPECT_EQ(r.status, "optimal");  // the ILP's own answer, not the greedy one kept
  EXPECT_EQ(check_solution(p, r.solution), "");
  EXPECT_NEAR(r.cost, 4, 1e-9);
}

TEST(Ilp, RandomProblemsWithCyclesAreValidAndNoWorseThanGreedy) {
  std::mt19937 rng(11);
  for (int i = 0; i < 60; ++i) {
    Problem p = random_problem(rng, 3 + static_cast<std::uint32_t>(i % 25));
    IlpResult r = extract_ilp(p, {.time_limit_s = 5});
    // Small problems: CBC proves its answer optimal (a greedy answer kept
    // because the solver failed would read "no ... (greedy kept)").
    EXPECT_EQ(r.status, "optimal") << "problem " << i;
    ASSERT_EQ(check_solution(p, r.solution), "") << "problem " << i;
    EXPECT_LE(r.cost, r.greedy_cost + 1e-9) << "problem " << i;
    EXPECT_NEAR(r.cost, dag_cost(p, r.solution), 1e-9);
  }
}

TEST(Ilp, StopsAtItsTimeLimitWithTheWarmStartOrBetter) {
  std::mt19937 rng(3);
  Problem p = random_problem(rng, 1500);
  // CBC's limit is on the process's CPU time, and so is this check: on a
  // loaded machine the wall clock runs ahead of both.
  auto cpu_seconds = [] {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  };
  double start = cpu_seconds();
  IlpResult r = extract_ilp(p, {.time_limit_s = 1});
  double s = cpu_seconds() - start;
  EXPECT_LT(s, 6);  // CBC's clock is checked between nodes, so allow some slack
  EXPECT_EQ(check_solution(p, r.solution), "");
  EXPECT_LE(r.cost, r.greedy_cost + 1e-9);
}

TEST(Ilp, TooLargeKeepsTheGreedyAnswer) {
  Problem p = greedy_trap();
  IlpResult r = extract_ilp(p, {.max_candidates = 3});
  EXPECT_EQ(r.status, "too large");
  EXPECT_NEAR(r.cost, r.greedy_cost, 1e-9);
}

}  // namespace
}  // namespace refinery::extract
