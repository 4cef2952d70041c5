// Optimal extraction as a 0-1 integer program, solved with CBC (COIN-OR).
// One binary per candidate, one activity per class; a chosen candidate
// activates its children's classes; acyclicity by topological levels (a
// chosen candidate's class sits above each of its children's). Warm-started
// from the greedy DAG answer and bounded in time: when CBC finds nothing
// better in time, the warm start is the answer. Never returns a cyclic or
// incomplete solution.
#pragma once

#include <string>

#include "extract/problem.h"

namespace refinery::extract {

struct IlpOptions {
  double time_limit_s = 10;
  // Problems with more candidates than this are not given to CBC (the greedy
  // answer is returned, status "too large").
  std::size_t max_candidates = 200'000;
};

struct IlpResult {
  Solution solution;
  double cost = 0;
  double greedy_cost = 0;   // the warm start's cost
  std::string status;       // "optimal", "time limit", "too large", "no solution (greedy kept)", ...
  double seconds = 0;
};

IlpResult extract_ilp(const Problem& p, const IlpOptions& options = {});

}  // namespace refinery::extract
