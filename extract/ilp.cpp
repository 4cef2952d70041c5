#include "extract/ilp.h"

#include <coin/Cbc_C_Interface.h>

#include <chrono>
#include <memory>

#include "extract/greedy.h"

namespace refinery::extract {

namespace {

struct CbcDeleter {
  void operator()(Cbc_Model* m) const { Cbc_deleteModel(m); }
};

// Topological levels of a valid solution: a class sits one above its highest child.
std::vector<double> levels(const Problem& p, const Solution& s) {
  std::vector<double> level(p.classes.size(), -1);
  std::vector<std::pair<std::uint32_t, std::size_t>> stack;
  for (std::uint32_t r : p.roots) {
    if (level[r] >= 0) continue;
    stack.push_back({r, 0});
    while (!stack.empty()) {
      auto& [c, next] = stack.back();
      const auto& kids = p.classes[c][static_cast<std::size_t>(s.choice[c])].kids;
      if (next < kids.size()) {
        std::uint32_t k = kids[next++];
        if (level[k] < 0) stack.push_back({k, 0});
        continue;
      }
      double l = 0;
      for (std::uint32_t k : kids) l = std::max(l, level[k] + 1);
      level[c] = l;
      stack.pop_back();
    }
  }
  for (double& l : level) l = std::max(l, 0.0);
  return level;
}

}  // namespace

IlpResult extract_ilp(const Problem& p, const IlpOptions& options) {
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  IlpResult r;
  r.solution = extract_greedy_dag(p).solution;
  r.greedy_cost = r.cost = dag_cost(p, r.solution);
  const std::size_t n = p.classes.size();
  std::size_t num_candidates = 0;
  for (const auto& c : p.classes) num_candidates += c.size();
  if (num_candidates > options.max_candidates) {
    r.status = "too large";
    r.seconds = elapsed();
    return r;
  }

  // Columns: x (one per candidate), then a (one per class), then t (one per class).
  std::vector<std::size_t> first_x(n + 1, 0);
  for (std::size_t c = 0; c < n; ++c) first_x[c + 1] = first_x[c] + p.classes[c].size();
  const int a0 = static_cast<int>(num_candidates), t0 = a0 + static_cast<int>(n);
  std::unique_ptr<Cbc_Model, CbcDeleter> model(Cbc_newModel());
  Cbc_Model* m = model.get();
  Cbc_setLogLevel(m, 0);
  // CBC 2.10 crashes in CglPreProcess::postProcess when its time limit hits
  // during preprocessing (Debian 12 build); the problem is plain enough without.
  Cbc_setParameter(m, "preprocess", "off");
  const double big = static_cast<double>(n);
  // CBC's tolerances are absolute (about 1e-6): costs in seconds would all
  // look equal to it. Scale so that the warm start costs 1e6.
  const double scale = r.greedy_cost > 0 ? 1e6 / r.greedy_cost : 1.0;
  for (std::size_t c = 0; c < n; ++c)
    for (const Candidate& cand : p.classes[c]) {
      bool self_loop = std::find(cand.kids.begin(), cand.kids.end(), c) != cand.kids.end();
      Cbc_addCol(m, "", 0, self_loop ? 0 : 1, cand.cost * scale, 1, 0, nullptr, nullptr);
    }
  std::vector<std::uint8_t> is_root(n, 0);
  for (std::uint32_t root : p.roots) is_root[root] = 1;
  for (std::size_t c = 0; c < n; ++c) Cbc_addCol(m, "", is_root[c] ? 1 : 0, 1, 0, 0, 0, nullptr, nullptr);
  for (std::size_t c = 0; c < n; ++c) Cbc_addCol(m, "", 0, big, 0, 0, 0, nullptr, nullptr);

  std::vector<int> cols;
  std::vector<double> coefs;
  for (std::size_t c = 0; c < n; ++c) {
    // sum of the class's x = a_c
    cols.clear();
    coefs.clear();
    for (std::size_t i = first_x[c]; i < first_x[c + 1]; ++i) {
      cols.push_back(static_cast<int>(i));
      coefs.push_back(1);
    }
    cols.push_back(a0 + static_cast<int>(c));
    coefs.push_back(-1);
    Cbc_addRow(m, "", static_cast<int>(cols.size()), cols.data(), coefs.data(), 'E', 0);
    for (std::size_t i = 0; i < p.classes[c].size(); ++i) {
      int x = static_cast<int>(first_x[c] + i);
      std::vector<std::uint32_t> kids = p.classes[c][i].kids;
      std::sort(kids.begin(), kids.end());
      kids.erase(std::unique(kids.begin(), kids.end()), kids.end());
      for (std::uint32_t k : kids) {
        if (k == c) continue;
        // x <= a_k
        int cx[2] = {x, a0 + static_cast<int>(k)};
        double vx[2] = {1, -1};
        Cbc_addRow(m, "", 2, cx, vx, 'L', 0);
        // t_c - t_k - big * x >= 1 - big
        int ct[3] = {t0 + static_cast<int>(c), t0 + static_cast<int>(k), x};
        double vt[3] = {1, -1, -big};
        Cbc_addRow(m, "", 3, ct, vt, 'G', 1 - big);
      }
    }
  }

  // Warm start from the greedy answer.
  std::vector<double> start_values(static_cast<std::size_t>(t0) + n, 0);
  std::vector<double> level = levels(p, r.solution);
  for (std::size_t c = 0; c < n; ++c) {
    if (r.solution.choice[c] != kUnchosen) {
      start_values[first_x[c] + static_cast<std::size_t>(r.solution.choice[c])] = 1;
      start_values[static_cast<std::size_t>(a0) + c] = 1;
    }
    start_values[static_cast<std::size_t>(t0) + c] = level[c];
  }
  std::vector<int> idx(start_values.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int>(i);
  Cbc_setMIPStartI(m, static_cast<int>(idx.size()), idx.data(), start_values.data());
  double remaining = options.time_limit_s - elapsed();
  Cbc_setMaximumSeconds(m, std::max(0.1, remaining));
  Cbc_solve(m);

  const double* x = Cbc_getColSolution(m);
  bool optimal = Cbc_isProvenOptimal(m);
  if (x == nullptr || Cbc_getNumCols(m) != static_cast<int>(start_values.size())) {
    r.status = "no solution (greedy kept)";
    r.seconds = elapsed();
    return r;
  }
  Solution ilp{std::vector<std::int32_t>(n, kUnchosen)};
  for (std::size_t c = 0; c < n; ++c)
    for (std::size_t i = 0; i < p.classes[c].size(); ++i)
      if (x[first_x[c] + i] > 0.5) ilp.choice[c] = static_cast<std::int32_t>(i);
  ilp = prune_unreachable(p, std::move(ilp));
  if (check_solution(p, ilp).empty() && dag_cost(p, ilp) <= r.cost + 1e-9 * std::max(1.0, r.cost)) {
    r.solution = std::move(ilp);
    r.cost = dag_cost(p, r.solution);
    r.status = optimal ? "optimal" : (Cbc_isSecondsLimitReached(m) ? "time limit" : "feasible");
  } else {
    r.status = "no better solution (greedy kept)";
  }
  r.seconds = elapsed();
  return r;
}

}  // namespace refinery::extract
