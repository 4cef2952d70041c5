// The Runner: every stop reason, backoff banning, statistics, custom appliers,
// rule subsets, several runs over one e-graph, limits checked inside a rule.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "egraph/runner.h"
#include "tests/egraph/scaling_workload.h"

namespace refinery::egraph::math {
namespace {

using namespace std::chrono_literals;
using AssocRunner = Runner<MathNode, NoAnalysis>;

StopReason run_assoc(RunnerLimits limits, int n = 8, AssocRunner* out = nullptr) {
  AssocRunner local(limits);
  AssocRunner& r = out ? *out : local;
  r.set_scheduler(std::make_unique<SimpleScheduler>());
  r.add_expr(must_parse(nested_sum(n)));
  auto rules = assoc_rules();
  return r.run(rules);
}

TEST(Runner, StopsSaturated) {
  StopReason s = run_assoc({}, 4);
  EXPECT_EQ(s.kind, StopKind::Saturated);
  EXPECT_EQ(s.to_string(), "Saturated");
}

TEST(Runner, StopsAtIterationLimit) {
  StopReason s = run_assoc({.iter_limit = 2});
  EXPECT_EQ(s.kind, StopKind::IterationLimit);
  EXPECT_EQ(s.to_string(), "IterationLimit(2)");
}

TEST(Runner, StopsAtNodeLimit) {
  AssocRunner r(RunnerLimits{.node_limit = 100});
  StopReason s = run_assoc(r.limits(), 8, &r);
  EXPECT_EQ(s.kind, StopKind::NodeLimit);
  EXPECT_GT(r.egraph.num_nodes(), 100u);
  EXPECT_EQ(fmt::format("{}", s), fmt::format("NodeLimit({})", static_cast<long long>(s.value)));
}

TEST(Runner, StopsAtTimeLimit) {
  StopReason s = run_assoc({.time_limit = 0ns});
  EXPECT_EQ(s.kind, StopKind::TimeLimit);
  EXPECT_TRUE(s.to_string().starts_with("TimeLimit("));
}

TEST(Runner, StopsAtMemoryLimit) {
  StopReason s = run_assoc({.memory_limit = 64 * 1024});
  EXPECT_EQ(s.kind, StopKind::MemoryLimit);
  EXPECT_GT(s.value, 64 * 1024);
}

TEST(Runner, HookStopsWithOther) {
  AssocRunner r;
  r.add_hook([](AssocRunner& run) -> std::optional<std::string> {
    if (run.iterations.size() == 2) return "enough";
    return std::nullopt;
  });
  StopReason s = run_assoc({}, 8, &r);
  EXPECT_EQ(s.kind, StopKind::Other);
  EXPECT_EQ(s.message, "enough");
  EXPECT_EQ(s.to_string(), "Other(enough)");
  EXPECT_EQ(r.iterations.size(), 3u);
}

TEST(Runner, RecordsStatisticsPerIteration) {
  AssocRunner r(RunnerLimits{.iter_limit = 3});
  run_assoc(r.limits(), 6, &r);
  ASSERT_EQ(r.iterations.size(), 3u);  // the limit, as in egg
  EXPECT_EQ(r.stop_reason->kind, StopKind::IterationLimit);
  EXPECT_GT(r.iterations.back().total_applied(), 0u);  // the third did work
  const Iteration& first = r.iterations[0];
  ASSERT_EQ(first.rules.size(), 2u);
  EXPECT_EQ(first.rules[0].matches, 5u);  // comm-add: one per + node
  EXPECT_EQ(first.rules[1].matches, 4u);  // assoc-add
  EXPECT_EQ(first.rules[0].applied, 5u);
  EXPECT_EQ(first.egraph_classes, 11u);
  EXPECT_GE(first.search_time, 0.0);
  EXPECT_GE(first.total_time, first.search_time);
  EXPECT_GT(r.iterations[1].egraph_nodes, first.egraph_nodes);
  EXPECT_NE(r.report().find("IterationLimit(3)"), std::string::npos);
}

TEST(Runner, BackoffBansRulesThatMatchTooMuch) {
  AssocRunner r(RunnerLimits{.iter_limit = 12, .node_limit = 1'000'000});
  auto backoff = std::make_unique<BackoffScheduler>(BackoffConfig{.match_limit = 8, .ban_length = 2});
  BackoffScheduler* sched = backoff.get();
  r.set_scheduler(std::move(backoff));
  r.add_expr(must_parse(nested_sum(6)));
  auto rules = assoc_rules();
  r.run(rules);
  // Iteration 0: comm-add (5 matches) and assoc-add (4) are under 8.
  EXPECT_FALSE(r.iterations[0].rules[0].skipped);
  // The first time a rule exceeds 8 matches it is banned for 2 iterations,
  // its threshold doubles to 16 and the next ban lasts 4.
  std::size_t first_ban = 0;
  while (first_ban < r.iterations.size() && !r.iterations[first_ban].rules[1].skipped) ++first_ban;
  ASSERT_LT(first_ban + 2, r.iterations.size());
  EXPECT_GT(r.iterations[first_ban].rules[1].matches, 8u);
  EXPECT_GE(sched->rule_stats(1).times_banned, 1u);
  // Banned for the next iteration, unless nothing else changed the graph and
  // the runner fast-forwarded the ban instead of stopping (egg's can_stop).
  if (r.iterations[first_ban].total_applied() > 0) {
    EXPECT_TRUE(r.iterations[first_ban + 1].rules[1].skipped);
    EXPECT_EQ(r.iterations[first_ban + 1].rules[1].matches, 0u);  // not even searched
  }
  EXPECT_TRUE(r.iterations[first_ban].rules[1].applied == 0);
}

TEST(Runner, BackoffThresholdAndBanGrowExponentially) {
  BackoffScheduler s(BackoffConfig{.match_limit = 10, .ban_length = 3});
  EXPECT_EQ(s.search_limit(0, 0), 11u);
  EXPECT_FALSE(s.accept(0, 0, 11));  // banned for 3: iterations 1, 2
  EXPECT_FALSE(s.search_limit(0, 2));
  EXPECT_EQ(s.search_limit(0, 3), 21u);  // threshold 20
  EXPECT_TRUE(s.accept(0, 3, 20));
  EXPECT_FALSE(s.accept(0, 4, 21));  // banned for 6
  EXPECT_EQ(s.rule_stats(0).banned_until, 10u);
  EXPECT_EQ(s.rule_stats(0).times_banned, 2u);
  // Saturation with a banned rule fast-forwards to its unban time.
  EXPECT_FALSE(s.can_stop(5));
  EXPECT_EQ(s.rule_stats(0).banned_until, 5u);
  EXPECT_TRUE(s.can_stop(5));
}

TEST(Runner, BackoffDefaultsAreEggs) {
  BackoffConfig c;
  EXPECT_EQ(c.match_limit, 1000u);
  EXPECT_EQ(c.ban_length, 5u);
  RunnerLimits l;
  EXPECT_EQ(l.iter_limit, 30u);
  EXPECT_EQ(l.node_limit, 10'000u);
  EXPECT_EQ(l.time_limit, std::chrono::seconds(5));
}

TEST(Runner, CustomApplierRuns) {
  using Graph = EGraph<MathNode, NoAnalysis>;
  using Rule = Rewrite<MathNode, NoAnalysis>;
  // Folds (+ c1 c2) of two constants, as a named C++ applier.
  auto fold = Rule::make_custom("fold-add", "(+ ?a ?b)", {"fold-add", [](Graph& g, Id root, Subst s) -> std::size_t {
                                                            auto value_of = [&](Id id) -> std::optional<double> {
                                                              for (const MathNode& n : g[id].nodes)
                                                                if (n.is_constant()) return n.value();
                                                              return std::nullopt;
                                                            };
                                                            auto a = value_of(s[Var{0}]), b = value_of(s[Var{1}]);
                                                            if (!a || !b) return 0;
                                                            return g.merge(root, g.add(MathNode::constant(*a + *b)));
                                                          }});
  ASSERT_TRUE(fold);
  std::vector<Rule> rules;
  rules.push_back(std::move(*fold));
  Runner<MathNode, NoAnalysis> r;
  Id root = r.add_expr(must_parse("(+ 1 (+ 2 3))"));
  EXPECT_EQ(r.run(rules).kind, StopKind::Saturated);
  EXPECT_EQ(r.egraph.find(root), r.egraph.find(*r.egraph.lookup_expr(must_parse("6"))));
}

TEST(Runner, ASlowApplierOverrunsTheTimeLimitByAboutOneMatch) {
  // 64 matches of 20 ms each, in one chunk of check_every (256) matches,
  // would take 1.3 s past a 50 ms limit; chunks sized by the rule's pace
  // stop it one match after the limit.
  using Graph = EGraph<MathNode, NoAnalysis>;
  using Rule = Rewrite<MathNode, NoAnalysis>;
  auto slow = Rule::make_custom("slow", "(+ ?a ?b)", {"slow", [](Graph&, Id, Subst) -> std::size_t {
                                                        std::this_thread::sleep_for(20ms);
                                                        return 0;
                                                      }});
  ASSERT_TRUE(slow);
  std::vector<Rule> rules;
  rules.push_back(std::move(*slow));
  Runner<MathNode, NoAnalysis> r(RunnerLimits{.time_limit = 50ms});
  r.set_scheduler(std::make_unique<SimpleScheduler>());
  r.add_expr(must_parse(nested_sum(65)));  // 64 additions
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(r.run(rules).kind, StopKind::TimeLimit);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 300ms);
  // Checked only every check_every matches (an interval longer than any
  // chunk), the same rule runs past the limit by most of its matches.
  Runner<MathNode, NoAnalysis> coarse(RunnerLimits{.time_limit = 50ms, .check_interval = std::chrono::hours(1)});
  coarse.set_scheduler(std::make_unique<SimpleScheduler>());
  coarse.add_expr(must_parse(nested_sum(65)));
  start = std::chrono::steady_clock::now();
  EXPECT_EQ(coarse.run(rules).kind, StopKind::TimeLimit);
  EXPECT_GT(std::chrono::steady_clock::now() - start, 600ms);
}

TEST(Runner, RunsOnlyTheRulesOfItsSubset) {
  AssocRunner r;
  r.set_scheduler(std::make_unique<SimpleScheduler>());
  r.add_expr(must_parse(nested_sum(6)));
  auto rules = assoc_rules();
  std::vector<std::size_t> comm_only{0};
  EXPECT_EQ(r.run(rules, comm_only).kind, StopKind::Saturated);
  for (const Iteration& it : r.iterations) {
    EXPECT_EQ(it.rules[1].matches, 0u);
    EXPECT_EQ(it.rules[1].applied, 0u);
  }
  EXPECT_EQ(r.egraph.num_classes(), 11u);  // commuting makes no new class
}

TEST(Runner, SeveralRunsContinueOneEGraphEachWithItsOwnLimits) {
  AssocRunner r(RunnerLimits{.iter_limit = 2});
  r.set_scheduler(std::make_unique<SimpleScheduler>());
  r.add_expr(must_parse(nested_sum(8)));
  auto rules = assoc_rules();
  std::vector<std::size_t> comm_only{0};
  EXPECT_EQ(r.run(rules, comm_only).kind, StopKind::Saturated);
  std::size_t first_run = r.iterations.size();
  std::size_t classes = r.egraph.num_classes();
  EXPECT_EQ(r.run(rules).to_string(), "IterationLimit(2)");  // counted from this run's start
  EXPECT_EQ(r.run_first_iteration(), first_run);
  EXPECT_EQ(r.iterations.size(), first_run + 2);
  EXPECT_GT(r.egraph.num_classes(), classes);
  r.set_limits({.iter_limit = 100, .node_limit = 1'000'000});
  EXPECT_EQ(r.run(rules).kind, StopKind::Saturated);
  EXPECT_EQ(r.egraph.num_classes(), 255u);  // 2^8 - 1, as one run gives
}

TEST(Runner, ChecksTheNodeLimitWhileOneRuleIsApplied) {
  // n = 9: the first iterations' matches alone would carry the graph far
  // past the limit; checked after every match, it stops within one match's
  // nodes (an associativity adds at most two).
  for (std::size_t every : {std::size_t{1}, std::size_t{4}}) {
    AssocRunner r(RunnerLimits{.node_limit = 300, .check_every = every});
    StopReason s = run_assoc(r.limits(), 9, &r);
    EXPECT_EQ(s.kind, StopKind::NodeLimit);
    EXPECT_LE(r.egraph.num_nodes(), 300 + 2 * every) << every;
  }
  AssocRunner unchecked(RunnerLimits{.node_limit = 300, .check_every = 1'000'000});
  run_assoc(unchecked.limits(), 9, &unchecked);
  EXPECT_GT(unchecked.egraph.num_nodes(), 300 + 8u);
}

}  // namespace
}  // namespace refinery::egraph::math
