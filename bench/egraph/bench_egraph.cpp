// bench_egraph: e-graph micro-benchmarks (add, union, rebuild throughput)
// and egg's math suite. Before the Google Benchmark runs, the math suite is
// timed under egg's own settings, the simple and the backoff scheduler, one
// line per test: "name iterations enodes eclasses stop_reason ms" (ms is the
// best of --math_reps runs). `--math_only` skips the micro-benchmarks;
// `--math_case=NAME` times that test alone under egg's settings (and skips
// them too: for a profiler or callgrind).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "egraph/basic_node.h"
#include "egraph/egraph.h"
#include "tests/egraph/math_suite.h"

namespace refinery::egraph {
namespace {

using Node = BasicNode<2>;

// 64 leaves, then n unary and n binary nodes over random earlier nodes;
// children are indices into the returned vector (handles).
std::vector<Node> random_nodes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<Node> out;
  for (std::uint32_t i = 0; i < 64; ++i) out.push_back(Node(i, {}));
  for (std::size_t i = 0; i < 2 * n; ++i) {
    auto pick = [&] { return make_id(rng() % out.size()); };
    out.push_back(i % 2 ? Node(64, {pick()}) : Node(65, {pick(), pick()}));
  }
  return out;
}

// Adds the handle-indexed nodes; returns handle -> class id.
std::vector<Id> add_all(EGraph<Node>& g, const std::vector<Node>& nodes) {
  std::vector<Id> ids;
  ids.reserve(nodes.size());
  for (Node n : nodes) {
    for (Id& c : n.children()) c = ids[index(c)];
    ids.push_back(g.add(n));
  }
  return ids;
}

void BM_Add(benchmark::State& state) {
  auto nodes = random_nodes(static_cast<std::size_t>(state.range(0)), 1);
  for (auto _ : state) {
    EGraph<Node> g;
    benchmark::DoNotOptimize(add_all(g, nodes));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(nodes.size()));
}
BENCHMARK(BM_Add)->Arg(1'000)->Arg(100'000);

// Unions of random node pairs, then one rebuild that restores congruence
// over all the nodes above them.
void BM_UnionRebuild(benchmark::State& state) {
  auto n = static_cast<std::size_t>(state.range(0));
  auto nodes = random_nodes(n, 2);
  std::mt19937 rng(3);
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t i = 0; i < n / 4; ++i) pairs.emplace_back(rng() % nodes.size(), rng() % nodes.size());
  for (auto _ : state) {
    state.PauseTiming();
    EGraph<Node> g;
    auto ids = add_all(g, nodes);
    g.rebuild();
    state.ResumeTiming();
    for (auto [a, b] : pairs) g.merge(ids[a], ids[b]);
    benchmark::DoNotOptimize(g.rebuild());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(pairs.size()));
}
BENCHMARK(BM_UnionRebuild)->Arg(1'000)->Arg(100'000);

// Merging n singleton classes one after another, without rebuild.
void BM_Union(benchmark::State& state) {
  auto n = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    EGraph<Node> g;
    std::vector<Id> ids{g.add(Node(0, {}))};  // a unary chain: n distinct classes
    for (std::size_t i = 1; i < n; ++i) ids.push_back(g.add(Node(64, {ids.back()})));
    state.ResumeTiming();
    for (std::size_t i = 1; i < n; ++i) g.merge(ids[i - 1], ids[i]);
    benchmark::DoNotOptimize(g.num_classes());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}
BENCHMARK(BM_Union)->Arg(100'000);

void BM_MathCase(benchmark::State& state) {
  auto cases = math::math_cases();
  const auto& mc = cases[static_cast<std::size_t>(state.range(0))];
  state.SetLabel(std::string(mc.name));
  for (auto _ : state) benchmark::DoNotOptimize(math::run_math_case(mc).nodes);
}
BENCHMARK(BM_MathCase)->DenseRange(0, 19)->Unit(benchmark::kMillisecond);

std::string stop_text(const StopReason& s) {
  return s.kind == StopKind::Other ? s.to_string() : std::string(to_string(s.kind));
}

void print_math_suite(const char* label, math::SchedulerChoice choice, int reps, std::size_t threads,
                      std::string_view only) {
  fmt::print("# math suite, scheduler: {}, {} search thread(s) (ms: best and median of {})\n", label, threads, reps);
  fmt::print("name iterations enodes eclasses stop_reason ms median_ms\n");
  double total = 0, total_median = 0;
  for (const auto& mc : math::math_cases()) {
    if (!only.empty() && mc.name != only) continue;
    auto best = math::run_math_case(mc, choice, {}, false, threads);
    std::vector<double> ms{best.ms};
    for (int r = 1; r < reps; ++r) {
      auto again = math::run_math_case(mc, choice, {}, false, threads);
      ms.push_back(again.ms);
      if (again.ms < best.ms) best = std::move(again);
    }
    std::sort(ms.begin(), ms.end());
    total += best.ms;
    total_median += ms[ms.size() / 2];
    fmt::print("{} {} {} {} {} {:.3f} {:.3f}\n", mc.name, best.iterations, best.nodes, best.classes,
               stop_text(best.stop), best.ms, ms[ms.size() / 2]);
  }
  fmt::print("total {:.3f} {:.3f}\n\n", total, total_median);
}

}  // namespace
}  // namespace refinery::egraph

int main(int argc, char** argv) {
  using refinery::egraph::math::SchedulerChoice;
  bool math_only = false;
  int reps = 10;
  std::size_t threads = 1;
  std::string_view only;  // --math_case=NAME: that test alone, under egg's settings only
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--math_only") == 0) {
      math_only = true;
    } else if (std::strncmp(argv[i], "--math_reps=", 12) == 0) {
      reps = std::max(1, std::atoi(argv[i] + 12));
    } else if (std::strncmp(argv[i], "--threads=", 10) == 0) {
      threads = static_cast<std::size_t>(std::max(1, std::atoi(argv[i] + 10)));
    } else if (std::strncmp(argv[i], "--math_case=", 12) == 0) {
      only = argv[i] + 12;
      math_only = true;
    } else {
      rest.push_back(argv[i]);
    }
  }
  refinery::egraph::print_math_suite("as in egg (backoff; simple for math_associate_adds)", SchedulerChoice::AsInEgg,
                                     reps, threads, only);
  if (only.empty()) {
    refinery::egraph::print_math_suite("simple", SchedulerChoice::Simple, reps, threads, only);
    refinery::egraph::print_math_suite("backoff", SchedulerChoice::Backoff, reps, threads, only);
  }
  std::fflush(stdout);
  if (math_only) return 0;
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
