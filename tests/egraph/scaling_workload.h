// The assoc/comm scaling workload: (+ 1 (+ 2 ... n)) under comm-add and
// assoc-add with the simple scheduler, until saturation or 1,000,000
// e-nodes. At saturation there are 2^n - 1 classes and 3^n - 2^(n+1) + 1 + n
// e-nodes. Shared by the scaling test and bench_egraph_scaling.
#pragma once

#include <chrono>
#include <ctime>
#include <memory>
#include <string>

#include "egraph/runner.h"
#include "tests/egraph/math_suite.h"

namespace refinery::egraph::math {

inline std::string nested_sum(int n) {
  std::string s;
  for (int i = 1; i < n; ++i) s += "(+ " + std::to_string(i) + " ";
  s += std::to_string(n);
  s += std::string(static_cast<std::size_t>(n - 1), ')');
  return s;
}

struct ScalingResult {
  std::size_t iterations = 0, nodes = 0, classes = 0;
  StopReason stop;
  double ms = 0;      // wall clock
  double cpu_ms = 0;  // the process's CPU time (robust on a shared machine; every searching thread's)
};

inline double process_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

inline ScalingResult run_scaling(int n, std::size_t node_limit = 1'000'000, std::size_t threads = 1) {
  using namespace std::chrono_literals;
  auto rules = assoc_rules();
  auto t0 = std::chrono::steady_clock::now();
  double c0 = process_cpu_ms();
  Runner<MathNode, NoAnalysis> runner(RunnerLimits{.iter_limit = 1'000, .node_limit = node_limit, .time_limit = 3600s});
  runner.set_scheduler(std::make_unique<SimpleScheduler>());
  runner.set_threads(threads);
  runner.add_expr(must_parse(nested_sum(n)));
  runner.run(rules);
  ScalingResult r;
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  r.cpu_ms = process_cpu_ms() - c0;
  r.iterations = runner.iterations.size();
  r.nodes = runner.egraph.num_nodes();
  r.classes = runner.egraph.num_classes();
  r.stop = *runner.stop_reason;
  return r;
}

}  // namespace refinery::egraph::math
