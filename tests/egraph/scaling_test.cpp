// The assoc/comm workload saturates with exactly 2^n - 1 classes and
// 3^n - 2^(n+1) + 1 + n e-nodes, and its sizes per iteration are the same
// run to run.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/egraph/fingerprint.h"
#include "tests/egraph/scaling_workload.h"

namespace refinery::egraph::math {
namespace {

std::size_t pow_int(std::size_t b, int e) {
  std::size_t r = 1;
  while (e-- > 0) r *= b;
  return r;
}

TEST(Scaling, SaturatedSizesMatchTheClosedForm) {
  for (int n : {6, 7, 8}) {
    ScalingResult r = run_scaling(n);
    EXPECT_EQ(r.stop.kind, StopKind::Saturated) << n;
    EXPECT_EQ(r.classes, pow_int(2, n) - 1) << n;
    EXPECT_EQ(r.nodes, pow_int(3, n) - pow_int(2, n + 1) + 1 + static_cast<std::size_t>(n)) << n;
  }
}

TEST(Scaling, SizesPerIterationAreDeterministic) {
  auto sizes = [] {
    auto rules = assoc_rules();
    Runner<MathNode, NoAnalysis> runner(RunnerLimits{.iter_limit = 100, .node_limit = 1'000'000});
    runner.set_scheduler(std::make_unique<SimpleScheduler>());
    runner.add_expr(must_parse(nested_sum(7)));
    runner.run(rules);
    std::vector<std::pair<std::size_t, std::size_t>> out;
    for (const auto& it : runner.iterations) out.emplace_back(it.egraph_nodes, it.egraph_classes);
    out.emplace_back(runner.egraph.num_nodes(), runner.egraph.num_classes());
    return out;
  };
  EXPECT_EQ(sizes(), sizes());
}

// The scaling run's runner on `threads` search threads, with no time limit
// that a slow (sanitized) build could reach part way.
// `check_interval` sets the pace apply's chunks are timed to.
std::unique_ptr<Runner<MathNode, NoAnalysis>> threaded_runner(
    std::size_t threads, std::chrono::nanoseconds check_interval = RunnerLimits{}.check_interval) {
  auto runner = std::make_unique<Runner<MathNode, NoAnalysis>>(RunnerLimits{
      .iter_limit = 100, .node_limit = 1'000'000, .time_limit = std::chrono::hours(1),
      .check_interval = check_interval});
  runner->set_scheduler(std::make_unique<SimpleScheduler>());
  runner->set_threads(threads);
  return runner;
}

// Issue #20: searching on two threads gives the same e-graph after every
// iteration as one thread (the same sizes, and each rule's matches). With
// 2 and 3 threads the runner searches on the pool, each rule in parts, in
// an iteration of 512 root candidates or more (Runner's grain size: the
// sixth at n = 7; the fifth to eighth at n = 8). The next test compares
// the e-graphs id for id.
TEST(Scaling, TwoSearchThreadsGiveTheSameIterations) {
  auto trace = [](std::size_t threads) {
    auto rules = assoc_rules();
    auto owned = threaded_runner(threads);
    auto& runner = *owned;
    EXPECT_EQ(runner.search_threads(), threads);
    runner.add_expr(must_parse(nested_sum(7)));
    EXPECT_EQ(runner.run(rules).kind, StopKind::Saturated);
    std::vector<std::size_t> out;
    for (const auto& it : runner.iterations) {
      out.insert(out.end(), {it.egraph_nodes, it.egraph_classes});
      for (const auto& r : it.rules) out.insert(out.end(), {r.matches, std::size_t{r.skipped}});
    }
    out.insert(out.end(), {runner.egraph.num_nodes(), runner.egraph.num_classes()});
    return out;
  };
  auto one = trace(1);
  EXPECT_EQ(trace(2), one);
  EXPECT_EQ(trace(3), one);
}

// The n = 8 run's fingerprint (tests/egraph/fingerprint.h) at the start of
// each iteration and at the end.
std::vector<std::uint64_t> fingerprints(std::size_t threads,
                                        std::chrono::nanoseconds check_interval = RunnerLimits{}.check_interval) {
  auto rules = assoc_rules();
  auto owned = threaded_runner(threads, check_interval);
  auto& runner = *owned;
  std::vector<std::uint64_t> out;
  runner.add_hook([&out](Runner<MathNode, NoAnalysis>& r) -> std::optional<std::string> {
    out.push_back(runner_fingerprint(r));
    return std::nullopt;
  });
  // n = 8: iterations with work enough for the pool (see above).
  runner.add_expr(must_parse(nested_sum(8)));
  EXPECT_EQ(runner.run(rules).kind, StopKind::Saturated);
  out.push_back(runner_fingerprint(runner));
  return out;
}

// Searching on the pool's threads and applying on one in rule and match
// order, in batches that are fixed slices of the match list
// (docs/egraph.md): the e-graph at the start of every iteration is the same
// id for id on 1, 2 and 3 threads, not only in size.
TEST(Scaling, ThreadsGiveTheSameEGraphIdForId) {
  auto one = fingerprints(1);
  EXPECT_EQ(one.size(), 10u);  // 9 iterations and the end
  EXPECT_EQ(fingerprints(2), one);
  EXPECT_EQ(fingerprints(3), one);
}

// Where apply's timed chunks end depends on the clock (a sanitized build
// runs each match several times slower); it must decide nothing. Chunks of
// one batch (a pace of one match) and of check_every matches (a pace that
// never ends a chunk early) build the same e-graph id for id: a first chunk
// of one match once shifted every batch after it, by the chunk's length.
TEST(Scaling, ThePaceOfApplyDecidesNothing) {
  auto one = fingerprints(1);
  EXPECT_EQ(fingerprints(1, std::chrono::nanoseconds(1)), one);
  EXPECT_EQ(fingerprints(1, std::chrono::hours(1)), one);
  EXPECT_EQ(fingerprints(2, std::chrono::nanoseconds(1)), one);
}

}  // namespace
}  // namespace refinery::egraph::math
