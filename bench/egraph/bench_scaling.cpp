// bench_egraph_scaling [n_min [n_max [threads]]]: the assoc/comm workload for each n,
// one line per n: "n iterations enodes eclasses stop_reason ms cpu_ms
// median_ms runs" — the best wall-clock and CPU milliseconds of `runs` runs
// (5 below n = 11, where a run takes seconds, else 1) and their median
// wall-clock time. This machine's timings vary by up to 40% run to run; the
// best is the figure least disturbed by its neighbours, the median says how
// far a typical run is from it. `threads` search (Runner::set_threads,
// default 1); cpu_ms is the process's, every thread's.
#include <algorithm>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "tests/egraph/scaling_workload.h"

int main(int argc, char** argv) {
  int lo = argc > 1 ? std::atoi(argv[1]) : 6;
  int hi = argc > 2 ? std::atoi(argv[2]) : 12;
  std::size_t threads = argc > 3 ? static_cast<std::size_t>(std::max(1, std::atoi(argv[3]))) : 1;
  fmt::print("# {} search thread(s)\n", threads);
  fmt::print("n iterations enodes eclasses stop_reason ms cpu_ms median_ms runs\n");
  for (int n = lo; n <= hi; ++n) {
    const int runs = n < 11 ? 5 : 1;
    std::vector<double> wall;
    double best_cpu = 0;
    refinery::egraph::math::ScalingResult first;
    for (int i = 0; i < runs; ++i) {
      auto r = refinery::egraph::math::run_scaling(n, 1'000'000, threads);
      if (i == 0) first = r;
      // The sizes are identical run to run (tests/egraph/scaling_test.cpp).
      if (r.nodes != first.nodes || r.classes != first.classes || r.iterations != first.iterations) {
        fmt::print(stderr, "n = {}: run {} differs from the first\n", n, i);
        return 1;
      }
      wall.push_back(r.ms);
      best_cpu = i == 0 ? r.cpu_ms : std::min(best_cpu, r.cpu_ms);
    }
    std::sort(wall.begin(), wall.end());
    fmt::print("{} {} {} {} {} {:.1f} {:.1f} {:.1f} {}\n", n, first.iterations, first.nodes, first.classes,
               refinery::egraph::to_string(first.stop.kind), wall.front(), best_cpu, wall[wall.size() / 2], runs);
    std::fflush(stdout);
  }
}
