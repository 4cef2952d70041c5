// bench_egraph_scaling [n_min [n_max]]: the assoc/comm workload for each n,
// one line per n: "n iterations enodes eclasses stop_reason ms cpu_ms"
// (wall-clock and CPU milliseconds).
#include <cstdlib>

#include <fmt/format.h>

#include "tests/egraph/scaling_workload.h"

int main(int argc, char** argv) {
  int lo = argc > 1 ? std::atoi(argv[1]) : 6;
  int hi = argc > 2 ? std::atoi(argv[2]) : 12;
  fmt::print("n iterations enodes eclasses stop_reason ms cpu_ms\n");
  for (int n = lo; n <= hi; ++n) {
    auto r = refinery::egraph::math::run_scaling(n);
    fmt::print("{} {} {} {} {} {:.1f} {:.1f}\n", n, r.iterations, r.nodes, r.classes,
               refinery::egraph::to_string(r.stop.kind), r.ms, r.cpu_ms);
    std::fflush(stdout);
  }
}
