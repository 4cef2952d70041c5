// egg's math test suite as data (start term, goals, runner settings), and
// one function that runs a case the way egg's test_fn does: a hook stops the
// runner as soon as every goal is in the start term's class. Shared by the
// tests and by bench_egraph.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "egraph/parse.h"
#include "egraph/runner.h"
#include "tests/egraph/math_rules.h"

namespace refinery::egraph::math {

using MathRunner = Runner<MathNode, ConstantFold>;

struct MathCase {
  std::string_view name;
  std::string_view start;
  std::vector<std::string_view> goals;
  RunnerLimits limits{};
  bool assoc_only = false;                      // only comm-add and assoc-add, as math_associate_adds
  bool simple_scheduler = false;                // egg's test asks for the SimpleScheduler
  bool goal_hook = true;                        // stop once the goals are proved (egg: unless @check)
  std::vector<std::string_view> extra_exprs{};  // added before the start term
  bool expect_proved = true;                    // math_fail must not prove its goal
};

inline std::vector<MathCase> math_cases() {
  using namespace std::chrono_literals;
  std::vector<MathCase> c;
  c.push_back({.name = "math_associate_adds",
               .start = "(+ 1 (+ 2 (+ 3 (+ 4 (+ 5 (+ 6 7))))))",
               .goals = {"(+ 7 (+ 6 (+ 5 (+ 4 (+ 3 (+ 2 1))))))"},
               .limits = {.iter_limit = 7},
               .assoc_only = true,
               .simple_scheduler = true,
               .goal_hook = false});
  c.push_back({.name = "math_fail", .start = "(+ x y)", .goals = {"(/ x y)"}, .expect_proved = false});
  c.push_back({.name = "math_simplify_add", .start = "(+ x (+ x (+ x x)))", .goals = {"(* 4 x)"}});
  c.push_back({.name = "math_powers", .start = "(* (pow 2 x) (pow 2 y))", .goals = {"(pow 2 (+ x y))"}});
  c.push_back({.name = "math_simplify_const", .start = "(+ 1 (- a (* (- 2 1) a)))", .goals = {"1"}});
  c.push_back({.name = "math_simplify_root",
               .start = "(/ 1 (- (/ (+ 1 (sqrt five)) 2) (/ (- 1 (sqrt five)) 2)))",
               .goals = {"(/ 1 (sqrt five))"},
               .limits = {.node_limit = 75'000}});
  c.push_back({.name = "math_simplify_factor", .start = "(* (+ x 3) (+ x 1))", .goals = {"(+ (+ (* x x) (* 4 x)) 3)"}});
  c.push_back({.name = "math_diff_same", .start = "(d x x)", .goals = {"1"}});
  c.push_back({.name = "math_diff_different", .start = "(d x y)", .goals = {"0"}});
  c.push_back({.name = "math_diff_simple1", .start = "(d x (+ 1 (* 2 x)))", .goals = {"2"}});
  c.push_back({.name = "math_diff_simple2", .start = "(d x (+ 1 (* y x)))", .goals = {"y"}});
  c.push_back({.name = "math_diff_ln", .start = "(d x (ln x))", .goals = {"(/ 1 x)"}});
  c.push_back({.name = "diff_power_simple", .start = "(d x (pow x 3))", .goals = {"(* 3 (pow x 2))"}});
  c.push_back({.name = "diff_power_harder",
               .start = "(d x (- (pow x 3) (* 7 (pow x 2))))",
               .goals = {"(* x (- (* 3 x) 14))"},
               .limits = {.iter_limit = 60, .node_limit = 100'000, .time_limit = 10s},
               .extra_exprs = {"(* x (- (* 3 x) 14))"}});
  c.push_back({.name = "integ_one", .start = "(i 1 x)", .goals = {"x"}});
  c.push_back({.name = "integ_sin", .start = "(i (cos x) x)", .goals = {"(sin x)"}});
  c.push_back({.name = "integ_x", .start = "(i (pow x 1) x)", .goals = {"(/ (pow x 2) 2)"}});
  c.push_back({.name = "integ_part1", .start = "(i (* x (cos x)) x)", .goals = {"(+ (* x (sin x)) (cos x))"}});
  c.push_back({.name = "integ_part2", .start = "(i (* (cos x) x) x)", .goals = {"(+ (* x (sin x)) (cos x))"}});
  c.push_back({.name = "integ_part3", .start = "(i (ln x) x)", .goals = {"(- (* x (ln x)) x)"}});
  return c;
}

enum class SchedulerChoice { AsInEgg, Simple, Backoff };

template <class A>
struct CaseResult {
  bool proved = false;
  std::size_t iterations = 0, nodes = 0, classes = 0;
  StopReason stop;
  double ms = 0;
  std::optional<Runner<MathNode, A>> runner;  // kept when asked (tests inspect it)
};
using MathResult = CaseResult<ConstantFold>;

inline RecExpr<MathNode> must_parse(std::string_view text) {
  auto t = parse_term<MathNode>(text);
  if (!t) throw std::runtime_error(t.error().to_string());
  return std::move(*t);
}

// math_associate_adds runs without an analysis (egg: Runner<Math, ()>).
inline std::vector<Rewrite<MathNode, NoAnalysis>> assoc_rules() {
  std::vector<Rewrite<MathNode, NoAnalysis>> r;
  for (auto [name, lhs, rhs] : {std::tuple{"comm-add", "(+ ?a ?b)", "(+ ?b ?a)"},
                                std::tuple{"assoc-add", "(+ ?a (+ ?b ?c))", "(+ (+ ?a ?b) ?c)"}}) {
    auto rule = Rewrite<MathNode, NoAnalysis>::make(name, lhs, rhs);
    if (!rule) throw std::runtime_error(rule.error().to_string());
    r.push_back(std::move(*rule));
  }
  return r;
}

template <class A>
CaseResult<A> run_case(const MathCase& mc, const std::vector<Rewrite<MathNode, A>>& rules, SchedulerChoice choice,
                       EGraphConfig config, bool keep_runner, std::chrono::steady_clock::time_point t0,
                       std::size_t threads = 1) {
  Runner<MathNode, A> runner(mc.limits, EGraph<MathNode, A>(A{}, config));
  runner.set_threads(threads);
  bool simple = choice == SchedulerChoice::Simple || (choice == SchedulerChoice::AsInEgg && mc.simple_scheduler);
  if (simple) runner.set_scheduler(std::make_unique<SimpleScheduler>());
  for (auto e : mc.extra_exprs) runner.add_expr(must_parse(e));
  Id root = runner.add_expr(must_parse(mc.start));
  std::vector<RecExpr<MathNode>> goals;
  for (auto g : mc.goals) goals.push_back(must_parse(g));
  auto all_goals = [&](const EGraph<MathNode, A>& g) {
    for (const auto& goal : goals) {
      auto id = g.lookup_expr(goal);
      if (!id || g.find(*id) != g.find(root)) return false;
    }
    return true;
  };
  if (mc.goal_hook)
    runner.add_hook([&](Runner<MathNode, A>& r) -> std::optional<std::string> {
      if (all_goals(r.egraph)) return "Done";
      return std::nullopt;
    });
  runner.run(rules);
  CaseResult<A> res;
  res.proved = all_goals(runner.egraph);
  res.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  res.iterations = runner.iterations.size();
  res.nodes = runner.egraph.num_nodes();
  res.classes = runner.egraph.num_classes();
  res.stop = *runner.stop_reason;
  if (keep_runner) res.runner.emplace(std::move(runner));
  return res;
}

// Runs one case; the timing covers building the rules, parsing the terms,
// running and checking the goals (what egg's test function does). The
// result's runner is only kept for cases with the ConstantFold analysis.
// `threads` search (Runner::set_threads).
inline MathResult run_math_case(const MathCase& mc, SchedulerChoice choice = SchedulerChoice::AsInEgg,
                                EGraphConfig config = {}, bool keep_runner = false, std::size_t threads = 1) {
  auto t0 = std::chrono::steady_clock::now();
  if (mc.assoc_only) {
    auto r = run_case<NoAnalysis>(mc, assoc_rules(), choice, config, false, t0, threads);
    return MathResult{r.proved, r.iterations, r.nodes, r.classes, r.stop, r.ms, std::nullopt};
  }
  return run_case<ConstantFold>(mc, math_rules(), choice, config, keep_runner, t0, threads);
}

}  // namespace refinery::egraph::math
