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
  EXPECT_EQ(r.status, IlpStatus::Optimal);
  EXPECT_NEAR(r.cost, 7, 1e-9);
  EXPECT_EQ(check_solution(p, r.solution), "");
}

TEST(Ilp, NeverChoosesAFreeCycle) {
  Problem p = free_cycle();
  IlpResult r = extract_ilp(p);
  EXPECT_EQ(r.status, IlpStatus::Optimal);  // the ILP's own answer, not the greedy one kept
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
    EXPECT_EQ(r.status, IlpStatus::Optimal) << "problem " << i;
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

// A layered problem shaped like a tensor e-graph: each value has a few
// ways to be computed from values of the layer before (shared between
// values) and a free layout twin that it and its twin reach each other by.
Problem layered_problem(std::mt19937& rng, std::uint32_t layers, std::uint32_t width) {
  std::uniform_real_distribution<double> cost(1, 10);
  std::uniform_int_distribution<std::uint32_t> pick(0, width - 1), count(1, 3), arity(1, 2);
  Problem p;
  auto id = [&](std::uint32_t l, std::uint32_t w, std::uint32_t twin) { return (l * width + w) * 2 + twin; };
  p.classes.resize(std::size_t{layers} * width * 2);
  for (std::uint32_t l = 0; l < layers; ++l)
    for (std::uint32_t w = 0; w < width; ++w) {
      auto& value = p.classes[id(l, w, 0)];
      if (l == 0) value.push_back(leaf(cost(rng)));
      for (std::uint32_t i = l == 0 ? 0 : count(rng); i > 0; --i) {
        Candidate n{cost(rng), {}};
        for (std::uint32_t a = arity(rng); a > 0; --a) n.kids.push_back(id(l - 1, pick(rng), rng() % 2));
        std::sort(n.kids.begin(), n.kids.end());
        n.kids.erase(std::unique(n.kids.begin(), n.kids.end()), n.kids.end());
        value.push_back(std::move(n));
      }
      value.push_back(node(cost(rng) / 4, {id(l, w, 1)}));
      p.classes[id(l, w, 1)].push_back(node(cost(rng) / 4, {id(l, w, 0)}));
    }
  for (std::uint32_t w = 0; w < width; ++w) p.roots.push_back(id(layers - 1, w, 0));
  return p;
}

// CBC must take the greedy answer it is given as its start. CBC 2.10 reads
// a start by column name, so unnamed columns, which all share the name "",
// made every start a handful of values outside their bounds; CBC then
// spent seconds "completing" it by a search of its own. CBC's own log says
// which happened: the start taken whole, and no values it had to modify.
TEST(Ilp, TheSolverTakesTheGreedyAnswerAsItsStart) {
  std::mt19937 rng(11);
  Problem p = layered_problem(rng, 6, 4);
  ::testing::internal::CaptureStdout();
  IlpResult r =
      extract_ilp(p, {.time_limit_s = 1, .condensed_share = 0, .cbc_parameters = {{"log", "1"}, {"maxNodes", "0"}}});
  std::string log = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(check_solution(p, r.solution), "");
  EXPECT_NE(log.find("MIPStart provided solution with cost"), std::string::npos) << log;
  EXPECT_EQ(log.find("outside bounds"), std::string::npos) << log;
  EXPECT_EQ(log.find("still fractional"), std::string::npos) << log;
}

TEST(Ilp, TooLargeKeepsTheGreedyAnswer) {
  Problem p = greedy_trap();
  IlpResult r = extract_ilp(p, {.max_candidates = 3});
  EXPECT_EQ(r.status, IlpStatus::TooLarge);
  EXPECT_NEAR(r.cost, r.greedy_cost, 1e-9);
}

}  // namespace
}  // namespace refinery::extract

namespace refinery::extract {
namespace {

using namespace testing;

// Random problems where the greedy answer is strictly worse than the
// optimum: the ILP's status is Optimal and its cost is below greedy's, so
// the answer is the solver's, not the warm start kept. The test requires
// enough such problems among those drawn, so it cannot pass on problems
// greedy already solves.
TEST(Ilp, ProvesOptimaWhereGreedyIsStrictlyWorse) {
  std::mt19937 rng(5);
  int greedy_worse = 0;
  for (int i = 0; i < 120; ++i) {
    Problem p = random_problem(rng, 6 + static_cast<std::uint32_t>(i % 30));
    for (Acyclicity a : {Acyclicity::CycleCuts, Acyclicity::Levels}) {
      IlpResult r = extract_ilp(p, {.time_limit_s = 5, .acyclicity = a, .path_bound = false});
      ASSERT_EQ(check_solution(p, r.solution), "") << "problem " << i;
      ASSERT_EQ(r.status, IlpStatus::Optimal) << "problem " << i << ": " << r.detail;
      EXPECT_NEAR(r.bound, r.cost, 1e-9 * std::max(1.0, r.cost)) << "problem " << i;
      EXPECT_EQ(r.gap(), 0) << "problem " << i;
      if (r.cost < r.greedy_cost - 1e-6) {
        if (a == Acyclicity::CycleCuts) ++greedy_worse;
        EXPECT_GE(r.rounds, 1u) << "problem " << i << ": the solver ran";
      }
    }
  }
  EXPECT_GE(greedy_worse, 5);
}

// The reduction (dominance through what a candidate's kids require among
// its steps) and the cuts keep the optimum: on small random problems whose
// classes mostly have no leaf of their own, the ILP proves the optimum that
// trying every choice finds, and it is strictly below greedy's answer on
// enough of them that the answer is the solver's. The layers' bound
// (ilp.h, layers_bound; these classes require the ones below them, two
// roots, a few cycles) is never above that optimum, and above the path
// bound on enough of them that the layers are what counts.
TEST(Ilp, ProvesTheBruteForceOptimumOnLayeredProblems) {
  std::mt19937 rng(29);
  int greedy_worse = 0, solved = 0, layered = 0, layers_above_path = 0;
  for (int i = 0; i < 400; ++i) {
    Problem p = random_layered_problem(rng, 4 + static_cast<std::uint32_t>(i % 6));
    const double optimum = brute_force_optimum(p);
    if (optimum == kInfiniteCost) continue;
    ++solved;
    IlpResult r = extract_ilp(p, {.time_limit_s = 5});
    ASSERT_EQ(check_solution(p, r.solution), "") << "problem " << i;
    ASSERT_EQ(r.status, IlpStatus::Optimal) << "problem " << i << ": " << r.detail;
    ASSERT_NEAR(r.cost, optimum, 1e-9) << "problem " << i;
    if (r.greedy_cost > optimum + 1e-9) ++greedy_worse;
    LayersBound layers = layers_bound(p, {.time_limit_s = 5}, [] { return 10.0; });
    if (layers.solved == 0) continue;
    ++layered;
    ASSERT_LE(layers.bound, optimum + 1e-9) << "problem " << i;
    if (layers.bound > path_bounds(p.classes, p.roots, 10000).of_answer(p.roots) + 1e-9) ++layers_above_path;
  }
  EXPECT_GE(solved, 200);
  EXPECT_GE(greedy_worse, 10);
  EXPECT_GE(layered, 100);
  EXPECT_GE(layers_above_path, 10);
}

// Both acyclicity formulations, with and without the reduction (and the
// requirement cuts and condensed bound), reach the same optimum: neither
// cuts off the optimum.
TEST(Ilp, FormulationsAndReductionAgree) {
  std::mt19937 rng(17);
  for (int i = 0; i < 60; ++i) {
    Problem p = random_problem(rng, 4 + static_cast<std::uint32_t>(i % 25));
    IlpResult cuts = extract_ilp(p, {.time_limit_s = 5});
    IlpResult levels = extract_ilp(p, {.time_limit_s = 5, .acyclicity = Acyclicity::Levels});
    IlpResult plain = extract_ilp(p, {.time_limit_s = 5, .reduce = false});
    // The formulation before the requirement cuts and the condensed bound.
    IlpResult before = extract_ilp(p, {.time_limit_s = 5, .requirement_cuts = false, .condensed_share = 0});
    for (const IlpResult* r : {&cuts, &levels, &plain, &before}) {
      SCOPED_TRACE(r == &cuts ? "cuts" : r == &levels ? "levels" : r == &plain ? "not reduced" : "before");
      ASSERT_EQ(r->status, IlpStatus::Optimal) << "problem " << i << ": " << r->detail;
      ASSERT_EQ(check_solution(p, r->solution), "") << "problem " << i;
    }
    EXPECT_NEAR(cuts.cost, levels.cost, 1e-9 * std::max(1.0, cuts.cost)) << "problem " << i;
    EXPECT_NEAR(cuts.cost, plain.cost, 1e-9 * std::max(1.0, cuts.cost))
        << "problem " << i << " greedy " << cuts.greedy_cost << " levels " << levels.cost;
    EXPECT_NEAR(cuts.cost, before.cost, 1e-9 * std::max(1.0, cuts.cost)) << "problem " << i;
  }
}

// A value in two layouts per layer: A_l = conv(A_l-1) 10 | T(B_l) 0.1,
// B_l = conv'(B_l-1) 9.5 | T(A_l) 0.1, from one input A_0 (B_0 = T(A_0)).
// Every answer computes each layer once; the relaxation without the
// requirement cuts computes the root half in each layout, each layout's
// input at one half, the layer below at a quarter, and so on.
Problem layered_layouts(std::uint32_t layers) {
  Problem p;
  p.classes = {{leaf(0)}, {node(0.1, {0})}};  // A_0, B_0
  for (std::uint32_t l = 1; l <= layers; ++l) {
    std::uint32_t a = 2 * l, b = a + 1;
    p.classes.push_back({node(10, {a - 2}), node(0.1, {b})});
    p.classes.push_back({node(9.5, {b - 2}), node(0.1, {a})});
  }
  p.roots = {2 * layers};
  return p;
}

TEST(Ilp, RequirementCutsPayEveryLayerInTheRelaxation) {
  Problem p = layered_layouts(12);
  const double optimum = 0.1 + 12 * 9.5 + 0.1;  // B all the way, one transpose at each end
  // Without the path bounds: the reduction's bound step would drop every
  // costlier layout given greedy's answer, and leave no relaxation.
  IlpResult with = extract_ilp(p, {.path_bound = false, .condensed_share = 0, .relaxation_only = true});
  IlpResult without =
      extract_ilp(p, {.requirement_cuts = false, .path_bound = false, .condensed_share = 0, .relaxation_only = true});
  for (const IlpResult* r : {&with, &without}) {
    ASSERT_EQ(check_solution(p, r->solution), "");
    EXPECT_NEAR(r->cost, optimum, 1e-9);  // greedy's answer
  }
  // Every layer's cheaper layout, less the transposes' 0.2 that the
  // relaxation may split.
  EXPECT_GE(with.bound, optimum - 0.2 - 1e-9);
  EXPECT_LT(without.bound, 0.5 * optimum);
  // The condensed relaxation (a layer's two layouts are one class) gives
  // the same bound.
  IlpResult condensed = extract_ilp(p, {.requirement_cuts = false, .path_bound = false, .relaxation_only = true});
  EXPECT_GE(condensed.condensed_bound, optimum - 0.2 - 1e-9);
  EXPECT_LE(condensed.condensed_bound, optimum + 1e-9);
}

// Where the path bound (problem.h, path_bounds) meets greedy's answer, the
// answer is proved optimal before any model is built: no condensed solve,
// no main model. Here every answer is one path of 1 + 2 + 3, with two
// choices at each of two levels that no reduction takes out (different
// kids, shared leaves).
//   0 (root): f(1) 1 | g(2) 1;  1: h(3) 2 | h'(4) 2;  2: k(3) 2 | k'(4) 2;  3, 4: leaf 3
TEST(Ilp, ThePathBoundProvesTheAnswerBeforeAnyModel) {
  Problem p;
  p.classes = {
      {node(1, {1}), node(1, {2})}, {node(2, {3}), node(2, {4})}, {node(2, {3}), node(2, {4})}, {leaf(3)}, {leaf(3)}};
  p.roots = {0};
  IlpResult r = extract_ilp(p);
  EXPECT_EQ(r.status, IlpStatus::Optimal);
  EXPECT_EQ(check_solution(p, r.solution), "");
  EXPECT_DOUBLE_EQ(r.cost, 6);
  EXPECT_DOUBLE_EQ(r.path_bound, 6);
  EXPECT_EQ(r.reduction.back().candidates, 8u);  // all left to the solver, which was not needed
  EXPECT_EQ(r.rounds, 0u);
  EXPECT_EQ(r.condensed_bound, 0);  // not run
  IlpResult without = extract_ilp(p, {.path_bound = false});
  EXPECT_EQ(without.status, IlpStatus::Optimal);
  EXPECT_DOUBLE_EQ(without.condensed_bound, 6);  // proved by the condensed solve instead
}

// A cycle longer than two classes whose every class is cheap only through
// the next: the cycle cuts must be added lazily (components above the
// enumeration size), and the answer is still acyclic and optimal.
TEST(Ilp, LazyCycleCutsBreakLongFreeCycles) {
  Problem p;
  const std::uint32_t n = 12;
  p.classes.resize(n);
  for (std::uint32_t c = 0; c < n; ++c) {
    p.classes[c].push_back(node(0, {(c + 1) % n}));  // free, through the next class
    p.classes[c].push_back(leaf(5 + c));             // the way out
  }
  p.roots = {0};
  // Without the reduction (its bound step alone would drop the costlier
  // leaves and leave no cycle to cut).
  // Nor the entry choices, which give the whole cycle its entry cut.
  IlpResult r = extract_ilp(p, {.time_limit_s = 5,
                                .reduce = false,
                                .entry_choices = false,
                                .path_bound = false,
                                .condensed_share = 0,
                                .max_enumerated_component = 4});
  EXPECT_EQ(r.status, IlpStatus::Optimal);
  ASSERT_EQ(check_solution(p, r.solution), "");
  EXPECT_NEAR(r.cost, 5, 1e-9);  // class 0's own leaf: every other way out costs more
  EXPECT_GE(r.rounds, 2u);       // the first answer was the free cycle
}

// A value V and its negation N, each computed by a subtraction of the
// same two costly inputs (A - B and B - A) or by negating the other, as the
// e-graphs of squeezenet have them; V also has a costly way of its own, so
// no requirement cut says every computation of V needs A. The relaxation
// without the entry choices computes V half by A - B and half as -N, N half
// by B - A: each subtraction at one half, so A and B at one half, and pays
// half of the two inputs. With them, entering {V, N} picks one subtraction
// whole, which needs A and B whole.
Problem negation_pair(std::uint32_t layers) {
  Problem p;
  p.classes = {{leaf(0)}};  // the input
  std::uint32_t below = 0;
  for (std::uint32_t l = 0; l < layers; ++l) {
    const auto v = static_cast<std::uint32_t>(p.classes.size()), n = v + 1, a = v + 2, b = v + 3;
    p.classes.push_back({node(0.1, {a, b}), node(0.1, {n}), node(100, {below})});  // V
    p.classes.push_back({node(0.1, {a, b}), node(0.1, {v})});                      // N
    p.classes.push_back({node(10, {below})});                                        // A
    p.classes.push_back({node(10, {below})});                                        // B
    below = v;
  }
  p.roots = {below};
  return p;
}

TEST(Ilp, EntryChoicesPayBothInputsOfASubtractionSharedByANegationPair) {
  Problem p = negation_pair(4);
  const double optimum = 4 * 20.1;  // each layer: A, B and V = A - B
  IlpOptions relaxation{.reduce = false, .requirement_cuts = true, .condensed_share = 0, .relaxation_only = true};
  IlpResult with = extract_ilp(p, relaxation);
  relaxation.entry_choices = false;
  IlpResult without = extract_ilp(p, relaxation);
  for (const IlpResult* r : {&with, &without}) {
    ASSERT_EQ(check_solution(p, r->solution), "");
    EXPECT_NEAR(r->cost, optimum, 1e-9);  // greedy's answer
  }
  EXPECT_GE(with.bound, optimum - 1e-6);
  EXPECT_LT(without.bound, 0.6 * optimum);
}

}  // namespace
}  // namespace refinery::extract

namespace refinery::extract {
namespace {

// The model goes to CBC in one load. Added a row at a time, CBC 2.10
// copied its matrix on each row, and building the model of a zoo e-graph
// took seconds of CPU before CBC's clock started: the time limit was
// overrun by as much (about 20 s of CPU on this problem of 12,000 classes
// and 13,000 candidates after reduction). With a 4 s limit (greedy, the
// reduction and the path bounds take 0.5 s of it; 3.1 s under load, and
// CBC got no round, before greedy's moves were priced by reference counts)
// it must finish within 12 s of CPU, CBC's own overrun and a loaded
// machine's slower CPU seconds included.
TEST(Ilp, BuildingTheModelTakesLittleOfTheTimeLimit) {
  std::mt19937 rng(7);
  Problem p = layered_problem(rng, 300, 20);
  auto cpu_seconds = [] {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  };
  double start = cpu_seconds();
  IlpResult r = extract_ilp(p, {.time_limit_s = 4, .condensed_share = 0});
  double s = cpu_seconds() - start;
  EXPECT_EQ(check_solution(p, r.solution), "");
  EXPECT_GT(r.reduction.back().candidates, 12'000u);  // a model of the zoo's size reached CBC
  EXPECT_GE(r.rounds, 1u);
  EXPECT_LT(s, 12);
}

// Two roots that can share a chain S -> T only through classes of their own
// (A, B): root r0 = {private 3, f(A) 0.5}, r1 = {private 3, g(B) 0.5}, A =
// {h(S) 0.5}, B = {k(S) 0.5}, S = {m(T) 0.2}, T = {leaf 3}. Both shared:
// 0.5 + 0.5 + 0.5 + 0.5 + 0.2 + 3 = 5.2; both private 6; one alone 7.2. The
// discount halves S alone (T has one user), group moves find no class whose
// users switch together (S's users, A and B, already use it), and a single
// move pays the chain whole: greedy with single moves keeps 6. A window of
// the answer's two classes frees both roots with what they reach outside
// the answer, and its ILP shares the chain.
Problem shared_through_own_classes() {
  Problem p;
  p.classes = {{leaf(3), node(0.5, {2})}, {leaf(3), node(0.5, {3})}, {node(0.5, {4})},
               {node(0.5, {4})},          {node(0.2, {5})},          {leaf(3)}};
  p.roots = {0, 1};
  return p;
}

TEST(IlpWindows, ChangeSeveralClassesWhereSingleMovesCannot) {
  Problem p = shared_through_own_classes();
  Solution greedy = extract_greedy_dag(p, {.single_move_rounds = 3}).solution;
  ASSERT_NEAR(dag_cost(p, greedy), 6, 1e-9);
  IlpOptions options;
  options.windows.answer_classes = 2;
  Solution s = improve_by_windows(p, greedy, options, [] { return false; });
  EXPECT_EQ(check_solution(p, s), "");
  EXPECT_NEAR(dag_cost(p, s), 5.2, 1e-9);
  // A window of one class of the answer keeps the other root private: no move.
  options.windows.answer_classes = 1;
  EXPECT_NEAR(dag_cost(p, improve_by_windows(p, greedy, options, [] { return false; })), 6, 1e-9);
  // Out of time before the first window: the answer as it came.
  options.windows.answer_classes = 2;
  EXPECT_EQ(improve_by_windows(p, greedy, options, [] { return true; }).choice, greedy.choice);
}

// The windows start where the answer pays most beyond its path bound: a
// chain C0 -> ... -> C4 (1 each, a path, so the answer pays its bound) and
// a second root T whose answer is its leaf (5) where f(L) costs 1 + 1. T
// is last in the topological order; with time for one window, that window
// is T's, and the answer falls from 10 to 7. Without the path bounds the
// first window is the chain's leaf, and nothing changes.
TEST(IlpWindows, TheWindowWhereTheAnswerPullsFromItsBoundComesFirst) {
  Problem p;
  p.classes = {{node(1, {1})}, {node(1, {2})}, {node(1, {3})}, {node(1, {4})}, {leaf(1)}, {leaf(5), node(1, {6})},
               {leaf(1)}};
  p.roots = {0, 5};
  Solution leaf_at_t{{0, 0, 0, 0, 0, 0, kUnchosen}};
  ASSERT_EQ(check_solution(p, leaf_at_t), "");
  ASSERT_NEAR(dag_cost(p, leaf_at_t), 10, 1e-9);
  IlpOptions options;
  options.windows.answer_classes = 1;
  options.windows.stride = 1;
  auto one_window = [] {
    return [windows = 0]() mutable { return windows++ > 0; };
  };
  const std::vector<double> below = path_bounds(p.classes, p.roots).below;
  Solution s = improve_by_windows(p, leaf_at_t, options, one_window(), below);
  EXPECT_EQ(check_solution(p, s), "");
  EXPECT_NEAR(dag_cost(p, s), 7, 1e-9);
  EXPECT_NEAR(dag_cost(p, improve_by_windows(p, leaf_at_t, options, one_window())), 10, 1e-9);
}

// A known answer given to extract_ilp is its incumbent where it is cheaper
// than greedy's: with the relaxation alone solved (no integer answer from
// CBC), no windows and no reduction (which folds A and B away, and greedy
// then shares the chain), the answer is the known one.
TEST(IlpWindows, AKnownAnswerIsTheIncumbent) {
  Problem p = shared_through_own_classes();
  Solution shared{{1, 1, 0, 0, 0, 0}};
  ASSERT_EQ(check_solution(p, shared), "");
  IlpOptions options{
      .reduce = false, .path_bound = false, .condensed_share = 0, .relaxation_only = true, .windows = {.share = 0}};
  EXPECT_NEAR(extract_ilp(p, options).cost, 6, 1e-9);
  IlpResult r = extract_ilp(p, options, shared);
  EXPECT_NEAR(r.greedy_cost, 6, 1e-9);
  EXPECT_NEAR(r.cost, 5.2, 1e-9);
  EXPECT_EQ(check_solution(p, r.solution), "");
}

}  // namespace
}  // namespace refinery::extract

namespace refinery::extract {
namespace {

using namespace testing;

// A network of `blocks` blocks in a row, each out = add(a, b) (1) from the
// block's input x: a and b each either convolve x (5) or read a shared
// transform t of x (2, with t itself 4). A block's cheapest is through t,
// 4 + 2 + 2 + 1 = 9, where a path pays at most 4 + 2 + 1 and each
// branch alone is cheapest direct (5 < 2 + 4). Classes per block: out, a,
// b, t; the first block's input is a leaf (0), the last block's out is
// the root. Every block's out is required.
Problem residual_blocks(std::uint32_t blocks) {
  Problem p;
  const std::uint32_t input = 4 * blocks;  // the network's input, a leaf
  p.classes.resize(4 * blocks + 1);
  for (std::uint32_t i = 0; i < blocks; ++i) {
    const std::uint32_t out = 4 * i, a = out + 1, b = out + 2, t = out + 3;
    const std::uint32_t x = i + 1 < blocks ? 4 * (i + 1) : input;  // the block below's out
    p.classes[out] = {node(1, {a, b})};
    p.classes[a] = {node(5, {x}), node(2, {t})};
    p.classes[b] = {node(5, {x}), node(2, {t})};
    p.classes[t] = {node(4, {x})};
  }
  p.classes[input] = {leaf(0)};
  p.roots = {0};
  return p;
}

// The layers' bound (ilp.h, layers_bound) sums each block's own optimum,
// where the path bound pays one path with the other branch's part of it.
// Given the layers alone (no condensed solve, no main model: a time limit
// too short for either), the answer is proved optimal by them.
TEST(IlpLayers, EachBlockPaysItsOwnOptimum) {
  const Problem p = residual_blocks(4);
  const double optimum = 4 * 9;
  const double path = path_bounds(p.classes, p.roots, 10000).of_answer(p.roots);
  EXPECT_LT(path, optimum - 1);  // the path bound leaves a gap
  LayersBound layers = layers_bound(p, {}, [] { return 10.0; });
  EXPECT_EQ(layers.layers, 4u);
  EXPECT_EQ(layers.optimal, 4u);
  EXPECT_DOUBLE_EQ(layers.bound, optimum);
  IlpResult r = extract_ilp(p, {.reduce = false, .condensed_share = 0, .windows = {.share = 0}});
  EXPECT_EQ(check_solution(p, r.solution), "");
  EXPECT_DOUBLE_EQ(r.cost, optimum);
  EXPECT_DOUBLE_EQ(r.layers_bound, optimum);
  EXPECT_EQ(r.status, IlpStatus::Optimal);
  EXPECT_EQ(r.rounds, 0u);  // no main model: the layers closed the gap
}

// A class not every answer computes is no layer: the root takes one of two
// branches (5 each, from a shared leaf of 2) beside a class both of its
// candidates need (3, from the same leaf). Layers at the leaf, the shared
// class and the root pay 2 + 3 + (1 + 5) = 11, the optimum; were the
// branches layers too (they require fewer classes than the root, so they
// would come before it), both would be paid: 2 + 5 + 5 + 3 + 1 = 16.
//   0 (root): f(1, 4) 1 | g(2, 4) 1;  1: h(3) 5;  2: k(3) 5;  3: leaf 2;  4: m(3) 3
TEST(IlpLayers, ABranchNotEveryAnswerTakesIsNoLayer) {
  Problem p;
  p.classes = {{node(1, {1, 4}), node(1, {2, 4})}, {node(5, {3})}, {node(5, {3})}, {leaf(2)}, {node(3, {3})}};
  p.roots = {0};
  LayersBound layers = layers_bound(p, {}, [] { return 10.0; });
  EXPECT_EQ(layers.layers, 3u);
  EXPECT_DOUBLE_EQ(layers.bound, 11);
  EXPECT_DOUBLE_EQ(brute_force_optimum(p), 11);
}

}  // namespace
}  // namespace refinery::extract
