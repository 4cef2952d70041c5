// The greedy extractors: DAG cost counts a shared sub-graph once; neither
// extractor ever returns a cycle, on hand-made problems, random ones, and an
// e-graph whose classes contain themselves.
#include <gtest/gtest.h>

#include <algorithm>

#include "egraph/egraph.h"
#include "egraph/parse.h"
#include "extract/greedy.h"
#include "extract/problem.h"
#include "tests/egraph/math_lang.h"
#include "tests/extract/problems.h"

namespace refinery::extract {
namespace {

using namespace testing;

TEST(DagCost, CountsASharedClassOnce) {
  Problem p = shared_subgraph();
  Solution s{{0, 0, 0}};
  EXPECT_EQ(dag_cost(p, s), 1 + 1 + 5);
  EXPECT_EQ(check_solution(p, s), "");
}

TEST(GreedyTree, PaysForSharingTwiceAndAvoidsIt) {
  Problem p = shared_subgraph();
  Solution s = extract_greedy_tree(p);
  EXPECT_EQ(s.choice, (std::vector<std::int32_t>{1, 1, kUnchosen}));  // 3.5 + 3.5 beats 6 + 6
  EXPECT_EQ(dag_cost(p, s), 7);
}

TEST(GreedyDag, PaysForASharedSubgraphOnce) {
  Problem p = diamond();
  Solution tree = extract_greedy_tree(p);
  EXPECT_EQ(tree.choice[0], 1);  // the leaf: h looks like 13 with S paid twice
  EXPECT_EQ(dag_cost(p, tree), 10);
  DagGreedyResult dag = extract_greedy_dag(p);
  EXPECT_EQ(dag.solution.choice, (std::vector<std::int32_t>{0, 0, 0, 0}));
  EXPECT_EQ(dag_cost(p, dag.solution), 8);
  EXPECT_FALSE(dag.fell_back_to_tree);
}

// R = add(A, B); A is op(X) or op(Y), B is op(Y); X (10) is cheaper than Y
// (11) for A alone, and two other classes use X, so the shared discount
// weighs X at a third and Y at a half: greedy keeps A = op(X) and pays X and
// Y (24). Switching A alone pays Y once (14): a single move.
TEST(GreedyDag, ASingleMoveFindsWhatTheFixpointAndTheDiscountMiss) {
  // classes: 0 R, 1 A, 2 B, 3 X, 4 Y, 5 and 6 two other users of X
  Problem p{{{{1, {1, 2}}}, {{1, {3}}, {1, {4}}}, {{1, {4}}}, {{10, {}}}, {{11, {}}}, {{1, {3}}}, {{1, {3}}}}, {0}};
  Solution plain = extract_greedy_dag(p).solution;
  EXPECT_EQ(dag_cost(p, plain), 24);
  Solution moved = extract_greedy_dag(p, DagGreedyOptions{.single_move_rounds = 1}).solution;
  EXPECT_EQ(moved.choice, (std::vector<std::int32_t>{0, 1, 0, kUnchosen, 0, kUnchosen, kUnchosen}));
  EXPECT_EQ(dag_cost(p, moved), 14);
  EXPECT_EQ(check_solution(p, moved), "");
}

// A value read twice, whose readers can both read another value instead:
// x = LN(y) (3) and x' = LN(y) + b (3; residual-bias-into-norm), the
// residual R = (F + b) + x or F + x', the product F = f(x) (2) or f2(G) (1)
// with G = g(x') (1). Both forms of F cost the same with what they need
// (5), so the fixpoint keeps f(x), and R then keeps (F + b) + x (7: R 1,
// F 2, x 3, b 1); two other users of x keep the discount from preferring
// x'. R alone switching to F + x' pays x and x' (9), and it is the only
// user of x' that switches (G already reads it). The answer 6 (R 1, f2 1,
// G 1, x' 3) also switches the user of G, a class that uses x': the second
// level of the group move.
TEST(GreedyDag, AGroupMoveSwitchesTheUsersOfTheClassesItSwitched) {
  // classes: 0 R, 1 F, 2 x, 3 x', 4 G, 5 b, 6 and 7 two other users of x
  Problem p{{{{1, {1, 2, 5}}, {1, {1, 3}}},
             {{2, {2}}, {1, {4}}},
             {{3, {}}},
             {{3, {}}},
             {{1, {3}}},
             {{1, {}}},
             {{1, {2}}},
             {{1, {2}}}},
            {0}};
  EXPECT_EQ(dag_cost(p, extract_greedy_dag(p, {.group_move_rounds = 0}).solution), 7);
  Solution moved = extract_greedy_dag(p).solution;
  EXPECT_EQ(moved.choice, (std::vector<std::int32_t>{1, 1, kUnchosen, 0, 0, kUnchosen, kUnchosen, kUnchosen}));
  EXPECT_EQ(dag_cost(p, moved), 6);
  EXPECT_EQ(check_solution(p, moved), "");
}

// Single moves price a switch by what it brings into the answer and drops
// (greedy.cpp, Answer), and walk the whole answer only where that gains:
// where they stop (a round that kept nothing), no switch of a class of the
// answer to a candidate whose kids the answer already computes lowers the
// answer's exact DAG cost, priced here by a walk of the whole answer.
TEST(GreedyDag, SingleMovesStopWhereNoSwitchGains) {
  std::mt19937 rng(11);
  int checked = 0, switches = 0;
  for (int i = 0; i < 600; ++i) {
    const auto size = 4 + static_cast<std::uint32_t>(i % 60);
    Problem p = i % 2 == 0 ? random_problem(rng, size) : random_layered_problem(rng, size);
    DagGreedyResult r = extract_greedy_dag(p, {.single_move_rounds = 1000});
    if (r.fell_back_to_tree || !check_solution(p, r.solution).empty()) continue;
    ++checked;
    const double cost = dag_cost(p, r.solution);
    for (std::uint32_t c = 0; c < p.classes.size(); ++c) {
      if (r.solution.choice[c] == kUnchosen) continue;
      for (std::size_t j = 0; j < p.classes[c].size(); ++j) {
        const auto& kids = p.classes[c][j].kids;
        if (static_cast<std::int32_t>(j) == r.solution.choice[c] ||
            !std::all_of(kids.begin(), kids.end(), [&](std::uint32_t k) { return r.solution.choice[k] != kUnchosen; }))
          continue;
        Solution s = r.solution;
        s.choice[c] = static_cast<std::int32_t>(j);
        s = prune_unreachable(p, s);
        ++switches;
        if (check_solution(p, s).empty()) {
          EXPECT_GE(dag_cost(p, s), cost - 1e-9) << "problem " << i << ", class " << c << " to " << j;
        }
      }
    }
  }
  EXPECT_GT(checked, 500);
  EXPECT_GT(switches, 800);
}

TEST(Greedy, NeverChoosesAFreeCycle) {
  Problem p = free_cycle();
  for (const Solution& s : {extract_greedy_tree(p), extract_greedy_dag(p).solution}) {
    EXPECT_EQ(check_solution(p, s), "");
    EXPECT_EQ(dag_cost(p, s), 4);
  }
}

TEST(CheckSolution, FindsACycleAndAMissingChild) {
  Problem p = free_cycle();
  EXPECT_NE(check_solution(p, Solution{{0, 0}}).find("cycle"), std::string::npos);
  EXPECT_NE(check_solution(p, Solution{{0, kUnchosen}}).find("no choice"), std::string::npos);
}

TEST(Greedy, RandomProblemsWithCyclesGiveValidSolutions) {
  std::mt19937 rng(7);
  for (int i = 0; i < 300; ++i) {
    Problem p = random_problem(rng, 2 + static_cast<std::uint32_t>(i % 40));
    Solution tree = extract_greedy_tree(p);
    DagGreedyResult dag = extract_greedy_dag(p);
    ASSERT_EQ(check_solution(p, tree), "") << "problem " << i;
    ASSERT_EQ(check_solution(p, dag.solution), "") << "problem " << i;
    EXPECT_LE(dag_cost(p, dag.solution), dag_cost(p, tree) + 1e-9) << "problem " << i;
  }
}

// An e-graph with real cycles: x = x * 1 puts (* x 1) in x's own class, and
// (+ y 0) = y likewise; z's class holds (/ z z ...) shapes through merges.
TEST(Greedy, EGraphWithSelfCyclesExtractsTheLeaves) {
  using egraph::math::MathNode;
  egraph::EGraph<MathNode> g;
  auto expr = [&](std::string_view t) { return g.add_expr(*egraph::parse_term<MathNode>(t)); };
  egraph::Id x = expr("x"), x1 = expr("(* x 1)"), y = expr("y"), y0 = expr("(+ y 0)"),
             root = expr("(+ (* x 1) (+ y 0))");
  g.merge(x, x1);
  g.merge(y, y0);
  egraph::Id sum = expr("(+ x y)");
  g.merge(sum, x);  // a cycle through two classes: x = x + y
  g.rebuild();
  auto cost = [](egraph::Id, const MathNode& n) { return n.arity == 0 ? 5.0 : 0.0; };  // operators are free
  auto ep = make_problem(g, {root}, cost);
  for (const Solution& s : {extract_greedy_tree(ep.problem), extract_greedy_dag(ep.problem).solution}) {
    ASSERT_EQ(check_solution(ep.problem, s), "");
    EXPECT_FALSE(find_cycle(ep.problem, s).has_value());
  }
}

}  // namespace
}  // namespace refinery::extract
