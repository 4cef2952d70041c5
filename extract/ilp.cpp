#include "extract/ilp.h"

#include <coin/Cbc_C_Interface.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <ctime>
#include <limits>
#include <map>
#include <memory>

#include "extract/greedy.h"
#include "extract/ilp_model.h"

namespace refinery::extract {

std::string_view to_string(IlpStatus status) {
  switch (status) {
    case IlpStatus::Optimal: return "optimal";
    case IlpStatus::Feasible: return "feasible";
    case IlpStatus::GreedyKept: return "greedy kept";
    case IlpStatus::TooLarge: return "too large";
  }
  return "?";
}

namespace {

using ilp::Model;

// The process's CPU seconds: CBC's time limit is on this clock.
double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void set_parameters(Cbc_Model* m, const IlpOptions& options) {
  for (const auto& [name, value] : options.cbc_parameters) Cbc_setParameter(m, name.c_str(), value.c_str());
}

// A lower bound on the optimum of q from its condensed relaxation
// (reduce.h), solved by CBC within `seconds` of CPU time: CBC's best bound
// on it (its optimum when proved). `upper_bound`: the cost of an answer of
// q, which bounds the condensed optimum too. `overrun`: the CPU seconds
// CBC took beyond `seconds` when it stopped on its clock, else 0.
double condensed_bound(const Problem& q, double upper_bound, double scale, double seconds, const IlpOptions& options,
                       double& overrun) {
  overrun = 0;
  Reduced red = reduce(condensed(q), upper_bound, options.path_bound);
  if (red.problem.classes.empty()) return red.fixed_cost;  // decided by the reduction alone
  const Problem& c = red.problem;
  std::vector<std::uint32_t> comp = class_components(c.classes);
  std::vector<std::uint32_t> comp_size(c.classes.size(), 0);
  for (std::uint32_t s : comp) ++comp_size[s];
  Model model(c, red.required, comp, comp_size, false, scale);
  // Reduction removes no cycle the condensation lacked, but it may leave
  // none: with no component of several classes the model has no cycle rows.
  model.add_use_cuts();
  if (options.requirement_cuts) model.add_requirement_cuts();
  Cbc_Model* m = model.get();
  set_parameters(m, options);
  Solution start = extract_greedy_dag(c).solution;
  if (check_solution(c, start).empty()) model.warm_start(start);
  Cbc_setAllowableGap(m, 1e-6);
  Cbc_setMaximumSeconds(m, seconds);
  const double solve_start = cpu_now();
  Cbc_solve(m);
  if (Cbc_isSecondsLimitReached(m) != 0) overrun = std::max(0.0, cpu_now() - solve_start - seconds);
  double bound = Cbc_getBestPossibleObjValue(m) / scale;
  if (!std::isfinite(bound) || std::abs(bound) > 1e40) bound = 0;
  if (Cbc_isProvenOptimal(m) != 0) bound = std::max(bound, Cbc_getObjValue(m) / scale);
  return red.fixed_cost + std::max(0.0, bound);
}

}  // namespace

IlpResult extract_ilp(const Problem& p, const IlpOptions& options) { return extract_ilp(p, options, Solution{}); }

IlpResult extract_ilp(const Problem& p, const IlpOptions& options, const Solution& known) {
  auto start = std::chrono::steady_clock::now();
  const double cpu_start = cpu_now();
  IlpResult r;
  auto finish = [&](IlpStatus status) {
    r.status = status;
    r.cost = dag_cost(p, r.solution);
    r.bound = std::min(r.bound, r.cost);
    if (r.status == IlpStatus::Optimal) r.bound = r.cost;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.cpu_seconds = cpu_now() - cpu_start;
    return r;
  };
  r.solution = extract_greedy_dag(p).solution;
  r.greedy_cost = r.cost = dag_cost(p, r.solution);
  const bool have_known = known.choice.size() == p.classes.size() && check_solution(p, known).empty();
  if (have_known && dag_cost(p, known) < r.cost) {
    r.solution = prune_unreachable(p, known);
    r.cost = dag_cost(p, r.solution);
  }

  Reduced red;
  if (options.reduce) {
    red = reduce(p, r.cost, options.path_bound);
  } else {
    red.problem = p;
    red.required.assign(p.classes.size(), 0);
    for (std::uint32_t root : p.roots) red.required[root] = 1;
    for (std::uint32_t c = 0; c < p.classes.size(); ++c) {
      red.original_class.push_back(c);
      red.original_candidate.emplace_back(p.classes[c].size());
      for (std::size_t i = 0; i < p.classes[c].size(); ++i) red.original_candidate[c][i] = static_cast<std::int32_t>(i);
    }
    red.steps.push_back({"input", p.classes.size(), num_candidates(p)});
  }
  r.reduction = red.steps;
  const Problem& q = red.problem;
  r.bound = red.fixed_cost;  // the reduced problem's costs are >= 0

  // Takes a solution of the reduced problem when it is valid and no costlier.
  auto take = [&](const Solution& s) {
    Solution full = red.expand(p, s);
    if (!check_solution(p, full).empty()) return false;
    const double cost = dag_cost(p, full);
    if (cost > r.cost) return false;
    const bool cheaper = cost < r.cost;
    r.solution = std::move(full);
    r.cost = cost;
    return cheaper;
  };
  bool improved = false;
  if (q.classes.empty()) {
    // Reduction decided every class.
    if (take(Solution{})) improved = true;
    if (check_solution(p, r.solution).empty() && dag_cost(p, r.solution) <= red.fixed_cost * (1 + 1e-12))
      return finish(IlpStatus::Optimal);
    r.detail =
        "the reduced problem is empty but its answer is invalid: " + check_solution(p, red.expand(p, Solution{}));
    return finish(IlpStatus::GreedyKept);
  }
  if (num_candidates(q) > options.max_candidates) {
    r.detail = "too many candidates after reduction";
    return finish(IlpStatus::TooLarge);
  }

  // The incumbent of the reduced problem: greedy on it (always acyclic),
  // with single moves (greedy.h): on the pruned resnets' e-graphs they find
  // answers below greedy's that CBC did not (docs/measurements.md, session 21).
  Solution incumbent = extract_greedy_dag(q, kGreedyWithMoves).solution;
  bool have_incumbent = check_solution(q, incumbent).empty();
  if (std::optional<Solution> mapped = have_known ? red.restrict(p, known) : std::nullopt;
      mapped && (!have_incumbent || dag_cost(q, *mapped) < dag_cost(q, incumbent))) {
    incumbent = std::move(*mapped);
    have_incumbent = true;
  }
  // A greedy answer still: not counted as the solver's improvement.
  if (have_incumbent) take(incumbent);
  const double reduced_cost_scale = r.greedy_cost > 0 ? 1e6 / r.greedy_cost : 1.0;

  std::vector<std::uint32_t> comp = class_components(q.classes);
  std::vector<std::uint32_t> comp_size;
  for (std::uint32_t c : comp) {
    if (c >= comp_size.size()) comp_size.resize(c + 1, 0);
    ++comp_size[c];
  }
  std::vector<std::vector<std::uint32_t>> cuts;
  if (options.acyclicity == Acyclicity::CycleCuts) {
    // Components of the class graph are small in tensor e-graphs (a value
    // and its layouts): every subset of a small one gets its entry cuts up
    // front, which is the whole acyclicity constraint there; larger ones get
    // the cuts of their two-class cycles, and the rest lazily.
    std::vector<std::vector<std::uint32_t>> members(comp_size.size());
    for (std::uint32_t c = 0; c < q.classes.size(); ++c) members[comp[c]].push_back(c);
    for (const auto& group : members) {
      if (group.size() < 2) continue;
      if (group.size() <= options.max_enumerated_component) {
        for (std::uint32_t bits = 1; bits < (1u << group.size()); ++bits) {
          if (std::popcount(bits) < 2) continue;
          std::vector<std::uint32_t> set;
          for (std::size_t b = 0; b < group.size(); ++b)
            if (bits & (1u << b)) set.push_back(group[b]);
          cuts.push_back(std::move(set));
        }
        continue;
      }
      for (std::uint32_t c : group)
        for (const Candidate& cand : q.classes[c])
          for (std::uint32_t k : cand.kids) {
            if (k <= c || comp[k] != comp[c]) continue;
            bool back = std::any_of(q.classes[k].begin(), q.classes[k].end(), [&](const Candidate& other) {
              return std::binary_search(other.kids.begin(), other.kids.end(), c);
            });
            if (back) cuts.push_back({c, k});
          }
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  }

  bool proven = false;
  // Every answer pays at least a path from a root to a leaf (problem.h,
  // path_bounds): on e-graphs where the relaxation spreads an expensive
  // operator over alternatives at a fraction each, this is the higher bound.
  // (Left out of the diagnostic relaxation_only, whose bound is the LP's.)
  const bool paths = options.path_bound && !options.relaxation_only;
  const double path_deadline = cpu_now() + options.path_share * options.time_limit_s;
  // A bound this high proves the answer in hand (closed_by, below).
  const double enough = dag_cost(p, r.solution) * (1 - options.relative_gap) - red.fixed_cost;
  const PathBounds bounds_q =
      paths ? path_bounds(q.classes, q.roots, options.path_work, [&] { return cpu_now() > path_deadline; }, enough)
            : PathBounds{};
  double best_bound_q = paths ? bounds_q.of_answer(q.roots) : 0;
  r.path_bound = red.fixed_cost + best_bound_q;
  // The windows' move (improve_by_windows): several blocks' derivations
  // changed at once, each window's ILP solved with the rest of the answer
  // kept; what it finds is the ILP's (sub-problems') answer.
  if (options.windows.share > 0 && have_incumbent && !options.relaxation_only &&
      (r.cost - r.path_bound) > options.relative_gap * r.cost) {
    const double window_deadline = cpu_start + options.windows.share * options.time_limit_s;
    incumbent = improve_by_windows(
        q, std::move(incumbent), options, [&] { return cpu_now() > window_deadline; }, bounds_q.below);
    improved = take(incumbent) || improved;
  }
  // The layers' bound (layers_bound): where the answer pays more than one
  // path through the network, each layer's own optimum.
  if (options.layers_share > 0 && !options.relaxation_only &&
      (r.cost - r.path_bound) > options.relative_gap * r.cost) {
    const double layers_deadline = cpu_now() + options.layers_share * options.time_limit_s;
    LayersBound layers = layers_bound(q, options, [&] { return layers_deadline - cpu_now(); });
    if (layers.solved > 0) {
      r.layers_bound = red.fixed_cost + layers.bound;
      best_bound_q = std::max(best_bound_q, layers.bound);
    }
  }
  const bool levels_mode = options.acyclicity == Acyclicity::Levels;
  // The condensed relaxation first: a bound that, on e-graphs where the
  // layouts of one value are what the relaxation of q splits, can prove the
  // answer in hand optimal before the main model is built.
  // CBC's clock starts after its first LP and the MIP start, and it reads
  // it between cut passes and nodes: a solve stopped by its limit runs past
  // it by about that much. The condensed solve's excess, when it stopped on
  // its clock, is kept back from the main model's share (a model of about
  // the same size), so that the whole call ends near the time limit.
  double reserve = 0;
  auto closed_by = [&](double bound_q) {
    double cost = dag_cost(p, r.solution);
    return cost <= 0 || (cost - (red.fixed_cost + bound_q)) / cost <= options.relative_gap;
  };
  if (options.condensed_share > 0 && have_incumbent && !closed_by(best_bound_q)) {
    const double cost_q = dag_cost(q, incumbent);
    const double share = options.condensed_share * options.time_limit_s - (cpu_now() - cpu_start);
    double bound = condensed_bound(q, cost_q, reduced_cost_scale, std::max(0.05, share), options, reserve);
    r.condensed_bound = red.fixed_cost + bound;
    best_bound_q = std::max(best_bound_q, bound);
  }
  const bool closed = closed_by(best_bound_q);
  while (!closed) {
    double remaining = options.time_limit_s - (cpu_now() - cpu_start) - reserve;
    if (remaining <= 0.05) break;
    Model model(q, red.required, comp, comp_size, levels_mode, reduced_cost_scale);
    for (const auto& cycle : cuts) model.forbid(cycle);
    if (!levels_mode) model.add_use_cuts();
    if (options.requirement_cuts) model.add_requirement_cuts();
    if (options.entry_choices) model.add_entry_choices();
    if (have_incumbent) model.warm_start(incumbent);
    Cbc_Model* m = model.get();
    set_parameters(m, options);
    // Absolute gap on the scaled objective (the greedy answer costs 1e6).
    Cbc_setAllowableGap(m, std::max(1e-6, options.relative_gap * 1e6));
    Cbc_setMaximumSeconds(m, remaining);
    if (options.relaxation_only) {
      for (int j = 0; j < Cbc_getNumCols(m); ++j) Cbc_setContinuous(m, j);
      Cbc_solve(m);
      ++r.rounds;
      if (Cbc_isProvenOptimal(m) != 0) best_bound_q = std::max(best_bound_q, Cbc_getObjValue(m) / reduced_cost_scale);
      break;
    }
    Cbc_solve(m);
    ++r.rounds;
    double bound_q = Cbc_getBestPossibleObjValue(m) / reduced_cost_scale;
    if (std::isfinite(bound_q) && std::abs(bound_q) < 1e40) best_bound_q = std::max(best_bound_q, bound_q);
    std::optional<Solution> s = model.solution();
    if (!s) {
      if (r.detail.empty()) r.detail = "CBC returned no solution";
      break;
    }
    auto cycles = levels_mode ? std::vector<std::vector<std::uint32_t>>{} : find_cycles(q, *s, 1000);
    if (levels_mode && !check_solution(q, *s).empty()) {
      r.detail = "CBC's answer is invalid: " + check_solution(q, *s);
      break;
    }
    if (cycles.empty()) {
      if (check_solution(q, *s).empty()) {
        improved = take(*s) || improved;
        if (dag_cost(q, *s) < dag_cost(q, incumbent) || !have_incumbent) {
          incumbent = *s;
          have_incumbent = true;
        }
      }
      // Proved optimal (within the allowed gap), and the answer kept is no
      // costlier than CBC's.
      proven = Cbc_isProvenOptimal(m) != 0 &&
               r.cost <= red.fixed_cost + (Cbc_getObjValue(m) / reduced_cost_scale) * (1 + 1e-9) + 1e-300;
      break;
    }
    // The answer has cycles: its bound holds (a relaxation), its choice does not.
    for (auto& cycle : cycles) cuts.push_back(std::move(cycle));
    r.cuts = cuts.size();
  }
  r.cuts = cuts.size();
  r.bound = red.fixed_cost + best_bound_q;
  double cost = dag_cost(p, r.solution);
  // Optimal when the bound meets the answer: CBC proved its answer (its
  // bound is then its objective) and the answer kept is no costlier.
  if (proven || (cost > 0 ? (cost - r.bound) / cost <= options.relative_gap : true)) return finish(IlpStatus::Optimal);
  if (improved) return finish(IlpStatus::Feasible);
  if (r.detail.empty()) r.detail = "no better answer within the time limit";
  return finish(IlpStatus::GreedyKept);
}

}  // namespace refinery::extract
