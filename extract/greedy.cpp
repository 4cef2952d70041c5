#include "extract/greedy.h"

#include <algorithm>
#include <deque>

namespace refinery::extract {

namespace {

std::vector<std::vector<std::uint32_t>> parents_of(const Problem& p) {
  std::vector<std::vector<std::uint32_t>> parents(p.classes.size());
  for (std::uint32_t c = 0; c < p.classes.size(); ++c)
    for (const Candidate& n : p.classes[c])
      for (std::uint32_t k : n.kids)
        if (parents[k].empty() || parents[k].back() != c) parents[k].push_back(c);
  return parents;
}

}  // namespace

Solution extract_greedy_tree(const Problem& p, double epsilon) {
  const std::size_t n = p.classes.size();
  std::vector<double> best(n, kInfiniteCost);
  Solution s{std::vector<std::int32_t>(n, kUnchosen)};
  bool changed = true;
  while (changed) {
    changed = false;
    for (std::size_t c = 0; c < n; ++c) {
      for (std::size_t i = 0; i < p.classes[c].size(); ++i) {
        const Candidate& cand = p.classes[c][i];
        double total = cand.cost + epsilon;
        for (std::uint32_t k : cand.kids) total += best[k];
        // Strictly better by more than rounding: children are always strictly
        // cheaper than their parent, hence no cycles.
        if (total < best[c] && best[c] - total > 1e-12 * std::max(1.0, total)) {
          best[c] = total;
          s.choice[c] = static_cast<std::int32_t>(i);
          changed = true;
        }
      }
    }
  }
  return prune_unreachable(p, std::move(s));
}

namespace {

// One DAG-greedy fixpoint. A class in a candidate's needed set is charged
// its chosen node's cost times weight[class].
Solution dag_fixpoint(const Problem& p, const std::vector<std::vector<std::uint32_t>>& parents,
                      const std::vector<double>& weight, const DagGreedyOptions& options) {
  const std::size_t n = p.classes.size();
  // Per class: the chosen candidate, the sorted set of classes its sub-DAG
  // needs (itself included) and that set's total cost.
  std::vector<std::int32_t> choice(n, kUnchosen);
  std::vector<double> own(n, 0), total(n, kInfiniteCost);
  std::vector<std::vector<std::uint32_t>> needs(n);
  std::vector<std::size_t> visits(n, 0);
  std::deque<std::uint32_t> work;
  std::vector<std::uint8_t> queued(n, 0);
  for (std::uint32_t c = 0; c < n; ++c) {
    work.push_back(c);
    queued[c] = 1;
  }
  std::vector<std::uint32_t> set, merged;
  while (!work.empty()) {
    std::uint32_t c = work.front();
    work.pop_front();
    queued[c] = 0;
    if (visits[c]++ > options.max_visits_per_class) continue;
    std::int32_t best_i = kUnchosen;
    double best_total = kInfiniteCost;
    std::vector<std::uint32_t> best_set;
    for (std::size_t i = 0; i < p.classes[c].size(); ++i) {
      const Candidate& cand = p.classes[c][i];
      bool ready = true;
      set.assign(1, c);
      for (std::uint32_t k : cand.kids) {
        if (choice[k] == kUnchosen || k == c) {
          ready = false;
          break;
        }
        merged.clear();
        std::set_union(set.begin(), set.end(), needs[k].begin(), needs[k].end(), std::back_inserter(merged));
        set.swap(merged);
      }
      if (!ready) continue;
      // The class itself must not be needed by its own children.
      bool cyclic = false;
      for (std::uint32_t k : cand.kids)
        if (std::binary_search(needs[k].begin(), needs[k].end(), c)) cyclic = true;
      if (cyclic) continue;
      double t = cand.cost;
      for (std::uint32_t m : set)
        if (m != c) t += own[m] * weight[m];
      // Keep the current choice on ties (stability); otherwise strictly better.
      bool better = t < best_total - 1e-12 * std::max(1.0, t) ||
                    (static_cast<std::int32_t>(i) == choice[c] && t <= best_total + 1e-12 * std::max(1.0, t));
      if (best_i == kUnchosen || better) {
        best_i = static_cast<std::int32_t>(i);
        best_total = t;
        best_set = set;
      }
    }
    if (best_i == kUnchosen) continue;
    bool changed = best_i != choice[c] || best_total != total[c] || best_set != needs[c];
    choice[c] = best_i;
    own[c] = p.classes[c][static_cast<std::size_t>(best_i)].cost;
    total[c] = best_total;
    needs[c] = std::move(best_set);
    if (changed)
      for (std::uint32_t q : parents[c])
        if (!queued[q]) {
          queued[q] = 1;
          work.push_back(q);
        }
  }
  return Solution{std::move(choice)};  // every class that can be computed has a choice
}

// Group moves from a full (unpruned) solution: for a class P that several
// classes could use, switch every class with a candidate that uses P to its
// cheapest such candidate at once, and keep the move when the exact DAG cost
// of the pruned answer drops and it stays acyclic. This is the move a merge
// needs: y1 and y2 both switching to split(merged) pays the merged MatMul
// once, while either alone pays it whole and loses. Where that move is not
// kept, a second one also switches the users of the classes the first
// switched or that use P (each to its cheapest candidate using one of them):
// a LayerNorm's output x' = x + b (residual-bias-into-norm) is read by the
// residual and by a product matmul(x', W), whose user x' W + (c - b W) must
// switch too before x is no longer needed. Repeated while it improves (a
// 3-way merge builds on a 2-way one), at most `rounds` times.
Solution group_moves(const Problem& p, const std::vector<std::vector<std::uint32_t>>& parents, Solution full,
                     std::size_t rounds) {
  Solution best = prune_unreachable(p, full);
  if (!check_solution(p, best).empty()) return full;
  double best_cost = dag_cost(p, best);
  // Every class among the users of `from` (not in `skip`) with a candidate using one of them, switched in `trial`
  // to its cheapest such candidate whose kids all have a choice; returns the classes whose choice uses one now.
  std::vector<std::uint8_t> in_from(p.classes.size(), 0), seen(p.classes.size(), 0);
  auto switch_users = [&](const std::vector<std::uint32_t>& from, const std::vector<std::uint8_t>& skip,
                          Solution& trial, std::size_t& switched) {
    for (std::uint32_t c : from) in_from[c] = 1;
    std::vector<std::uint32_t> users;
    for (std::uint32_t c : from)
      for (std::uint32_t q : parents[c]) {
        if (skip[q] || in_from[q] || seen[q]) continue;
        seen[q] = 1;
        std::int32_t pick = kUnchosen;
        for (std::size_t i = 0; i < p.classes[q].size(); ++i) {
          const Candidate& cand = p.classes[q][i];
          if (std::none_of(cand.kids.begin(), cand.kids.end(), [&](std::uint32_t k) { return in_from[k] != 0; }))
            continue;
          bool ready = std::all_of(cand.kids.begin(), cand.kids.end(),
                                   [&](std::uint32_t k) { return trial.choice[k] != kUnchosen; });
          if (ready && (pick == kUnchosen || cand.cost < p.classes[q][static_cast<std::size_t>(pick)].cost))
            pick = static_cast<std::int32_t>(i);
        }
        if (pick == kUnchosen) continue;
        users.push_back(q);
        if (pick != trial.choice[q]) {
          trial.choice[q] = pick;
          ++switched;
        }
      }
    for (std::uint32_t c : from)
      for (std::uint32_t q : parents[c]) seen[q] = 0;
    for (std::uint32_t c : from) in_from[c] = 0;
    return users;
  };
  // Takes the move (and its trial) when its answer is cheaper than the best so far.
  auto try_move = [&](Solution& trial) {
    Solution pruned = prune_unreachable(p, trial);
    if (!check_solution(p, pruned).empty()) return false;
    double cost = dag_cost(p, pruned);
    if (cost >= best_cost - 1e-12 * std::max(1.0, best_cost)) return false;
    full = std::move(trial);
    best = std::move(pruned);
    best_cost = cost;
    return true;
  };
  std::vector<std::uint8_t> skip(p.classes.size(), 0);
  for (std::size_t round = 0; round < rounds; ++round) {
    bool improved = false;
    for (std::uint32_t shared = 0; shared < p.classes.size(); ++shared) {
      if (parents[shared].size() < 2 || full.choice[shared] == kUnchosen) continue;
      Solution trial = full;
      std::size_t switched = 0;
      skip[shared] = 1;
      std::vector<std::uint32_t> first = switch_users({shared}, skip, trial, switched);
      // A single switch is what the fixpoint already weighed.
      bool kept = switched >= 2 && try_move(trial);
      if (!kept && switched >= 1) {  // try_move left the trial as it was
        const std::size_t at_first = switched;
        for (std::uint32_t c : first) skip[c] = 1;
        switch_users(first, skip, trial, switched);
        for (std::uint32_t c : first) skip[c] = 0;
        kept = switched > at_first && switched >= 2 && try_move(trial);
      }
      skip[shared] = 0;
      improved = improved || kept;
    }
    if (!improved) break;
  }
  return full;
}

// Single moves from a full solution: each class of the answer tries each of
// its other candidates (their kids keep the choices they have, which brings
// in what the fixpoint chose for classes the answer did not use), and a
// switch that lowers the exact DAG cost of the pruned answer and keeps it
// acyclic is kept. The fixpoint prices a candidate by the classes it needs
// as that class alone sees them; what a switch changes for the rest of the
// answer (a class it no longer needs, one another class already pays for)
// shows only in the whole answer's cost.
Solution single_moves(const Problem& p, Solution full, std::size_t rounds) {
  Solution best = prune_unreachable(p, full);
  if (!check_solution(p, best).empty()) return full;
  double best_cost = dag_cost(p, best);
  for (std::size_t round = 0; round < rounds; ++round) {
    bool improved = false;
    for (std::uint32_t c = 0; c < p.classes.size(); ++c) {
      if (best.choice[c] == kUnchosen) continue;  // not in the answer: a switch changes nothing
      for (std::size_t i = 0; i < p.classes[c].size(); ++i) {
        if (static_cast<std::int32_t>(i) == full.choice[c]) continue;
        const Candidate& cand = p.classes[c][i];
        if (!std::all_of(cand.kids.begin(), cand.kids.end(),
                         [&](std::uint32_t k) { return full.choice[k] != kUnchosen; }))
          continue;
        const std::int32_t before = full.choice[c];
        full.choice[c] = static_cast<std::int32_t>(i);
        Solution pruned = prune_unreachable(p, full);
        const double cost = check_solution(p, pruned).empty() ? dag_cost(p, pruned) : kInfiniteCost;
        if (cost < best_cost - 1e-12 * std::max(1.0, best_cost)) {
          best = std::move(pruned);
          best_cost = cost;
          improved = true;
        } else {
          full.choice[c] = before;
        }
      }
    }
    if (!improved) break;
  }
  return full;
}

}  // namespace

DagGreedyResult extract_greedy_dag(const Problem& p, const DagGreedyOptions& options) {
  auto parents = parents_of(p);
  Solution full = dag_fixpoint(p, parents, std::vector<double>(p.classes.size(), 1.0), options);
  if (options.group_move_rounds > 0) full = group_moves(p, parents, std::move(full), options.group_move_rounds);
  DagGreedyResult r{prune_unreachable(p, full), false};
  // Greedy choices are local: two classes that could share one new sub-graph
  // (two MatMuls of one input merged into one) each see its whole cost. A
  // second pass charges a shared class's cost split among the classes that
  // could use it; the cheaper valid answer (exact DAG cost) wins.
  if (options.shared_discount) {
    std::vector<double> weight(p.classes.size(), 1.0);
    for (std::size_t c = 0; c < p.classes.size(); ++c)
      if (parents[c].size() > 1) weight[c] = 1.0 / static_cast<double>(parents[c].size());
    Solution shared_full = dag_fixpoint(p, parents, weight, options);
    Solution shared = prune_unreachable(p, shared_full);
    if (check_solution(p, shared).empty() &&
        (!check_solution(p, r.solution).empty() || dag_cost(p, shared) < dag_cost(p, r.solution))) {
      r.solution = std::move(shared);
      full = std::move(shared_full);
    }
  }
  // The single moves start from the full solution of the answer kept (its
  // choices for the classes the answer does not use are what a switch brings in).
  if (options.single_move_rounds > 0 && check_solution(p, r.solution).empty())
    r.solution = prune_unreachable(p, single_moves(p, std::move(full), options.single_move_rounds));
  // The tree answer is cheap to compute and always valid: take it when the
  // DAG fixpoint did not settle acyclic, or (rarely) when it is cheaper.
  Solution tree = extract_greedy_tree(p);
  if (!check_solution(p, r.solution).empty() || dag_cost(p, tree) < dag_cost(p, r.solution)) {
    r.solution = std::move(tree);
    r.fell_back_to_tree = true;
  }
  return r;
}

}  // namespace refinery::extract
