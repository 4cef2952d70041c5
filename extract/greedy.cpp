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

// The answer of a full solution (the classes the roots reach through its
// choices) and its DAG cost, kept by reference counts (per class, how many
// of the answer's chosen candidates read it, with multiplicity, and the
// roots): a move sets some classes' choices and is priced by the classes it
// brings in and drops, not by a walk of the whole problem. Counts do not see
// cycles, so a move that closes one is priced as if it had not: a move is
// kept (keep) only after its whole answer is checked and priced exactly.
class Answer {
 public:
  // `full`'s answer must be complete (the callers check it).
  Answer(const Problem& p, Solution full) : p_(p), full_(std::move(full)), count_(p.classes.size(), 0) {
    for (std::uint32_t r : p_.roots) count(r, +1);
    keep(change_);
  }
  const Solution& full() const { return full_; }
  bool has(std::uint32_t c) const { return count_[c] > 0; }
  // The cost the answer gains by the moves since the last keep() (infinite
  // while a class it needs has no choice), and the cost at that keep().
  double change() const { return unchosen_ > 0 ? kInfiniteCost : change_; }
  double cost() const { return cost_; }
  void set(std::uint32_t c, std::int32_t i) {
    const std::int32_t before = full_.choice[c];
    choices_.push_back({c, before});
    full_.choice[c] = i;
    if (count_[c] == 0) return;
    if (i != kUnchosen) {
      change_ += p_.classes[c][static_cast<std::size_t>(i)].cost;
      for (std::uint32_t k : p_.classes[c][static_cast<std::size_t>(i)].kids) count(k, +1);
    } else {
      ++unchosen_;
    }
    if (before != kUnchosen) {
      change_ -= p_.classes[c][static_cast<std::size_t>(before)].cost;
      for (std::uint32_t k : p_.classes[c][static_cast<std::size_t>(before)].kids) count(k, -1);
    } else {
      --unchosen_;
    }
  }
  // The moves since the last keep() become the answer, whose exact cost is
  // `cost`; it is complete (every class of it has a choice).
  void keep(double cost) {
    cost_ = cost;
    change_ = 0;
    counts_.clear();
    choices_.clear();
  }
  void undo() {
    for (auto it = counts_.rbegin(); it != counts_.rend(); ++it) count_[it->first] = it->second;
    for (auto it = choices_.rbegin(); it != choices_.rend(); ++it) full_.choice[it->first] = it->second;
    unchosen_ = 0;
    change_ = 0;
    counts_.clear();
    choices_.clear();
  }

 private:
  // Adds (+1) or drops (-1) a reading of class k; a class entering or
  // leaving the answer adds or drops its own reads in turn.
  void count(std::uint32_t k, int sign) {
    stack_.assign(1, k);
    while (!stack_.empty()) {
      const std::uint32_t x = stack_.back();
      stack_.pop_back();
      counts_.push_back({x, count_[x]});
      count_[x] = sign > 0 ? count_[x] + 1 : count_[x] - 1;
      if (count_[x] != (sign > 0 ? 1u : 0u)) continue;  // in the answer before and after
      if (full_.choice[x] == kUnchosen) {
        unchosen_ = sign > 0 ? unchosen_ + 1 : unchosen_ - 1;
        continue;
      }
      const Candidate& cand = p_.classes[x][static_cast<std::size_t>(full_.choice[x])];
      change_ += sign * cand.cost;
      stack_.insert(stack_.end(), cand.kids.begin(), cand.kids.end());
    }
  }

  const Problem& p_;
  Solution full_;
  std::vector<std::uint32_t> count_;
  double cost_ = 0, change_ = 0;
  std::size_t unchosen_ = 0;                                     // classes of the answer without a choice
  std::vector<std::pair<std::uint32_t, std::uint32_t>> counts_;  // (class, its count before), since keep()
  std::vector<std::pair<std::uint32_t, std::int32_t>> choices_;  // (class, its choice before), since keep()
  std::vector<std::uint32_t> stack_;
};

// Whether the moves since the answer's last keep() give a cheaper answer,
// checked acyclic and priced whole; if so they are kept (the caller undoes
// them otherwise). The counts' change is the whole answer's up to rounding:
// a move whose change is not below half the tolerance is not priced whole.
bool kept_if_cheaper(const Problem& p, Answer& answer) {
  const double tolerance = 1e-12 * std::max(1.0, answer.cost());
  if (!(answer.change() < -tolerance / 2)) return false;
  Solution pruned = prune_unreachable(p, answer.full());
  if (!check_solution(p, pruned).empty()) return false;
  const double cost = dag_cost(p, pruned);
  if (cost >= answer.cost() - tolerance) return false;
  answer.keep(cost);
  return true;
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
  const Solution best = prune_unreachable(p, full);
  if (!check_solution(p, best).empty()) return full;
  Answer answer(p, std::move(full));
  answer.keep(dag_cost(p, best));
  // Every class among the users of `from` (not in `skip`) with a candidate using one of them, switched to its
  // cheapest such candidate whose kids all have a choice; returns the classes whose choice uses one now.
  std::vector<std::uint8_t> in_from(p.classes.size(), 0), seen(p.classes.size(), 0);
  auto switch_users = [&](const std::vector<std::uint32_t>& from, const std::vector<std::uint8_t>& skip,
                          std::size_t& switched) {
    const std::vector<std::int32_t>& choice = answer.full().choice;
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
          bool ready =
              std::all_of(cand.kids.begin(), cand.kids.end(), [&](std::uint32_t k) { return choice[k] != kUnchosen; });
          if (ready && (pick == kUnchosen || cand.cost < p.classes[q][static_cast<std::size_t>(pick)].cost))
            pick = static_cast<std::int32_t>(i);
        }
        if (pick == kUnchosen) continue;
        users.push_back(q);
        if (pick != choice[q]) {
          answer.set(q, pick);
          ++switched;
        }
      }
    for (std::uint32_t c : from)
      for (std::uint32_t q : parents[c]) seen[q] = 0;
    for (std::uint32_t c : from) in_from[c] = 0;
    return users;
  };
  std::vector<std::uint8_t> skip(p.classes.size(), 0);
  for (std::size_t round = 0; round < rounds; ++round) {
    bool improved = false;
    for (std::uint32_t shared = 0; shared < p.classes.size(); ++shared) {
      if (parents[shared].size() < 2 || answer.full().choice[shared] == kUnchosen) continue;
      std::size_t switched = 0;
      skip[shared] = 1;
      std::vector<std::uint32_t> first = switch_users({shared}, skip, switched);
      // A single switch is what the fixpoint already weighed.
      bool kept = switched >= 2 && kept_if_cheaper(p, answer);
      if (!kept && switched >= 1) {  // the first switches stay for the second
        const std::size_t at_first = switched;
        for (std::uint32_t c : first) skip[c] = 1;
        switch_users(first, skip, switched);
        for (std::uint32_t c : first) skip[c] = 0;
        kept = switched > at_first && switched >= 2 && kept_if_cheaper(p, answer);
      }
      if (!kept) answer.undo();
      skip[shared] = 0;
      improved = improved || kept;
    }
    if (!improved) break;
  }
  return answer.full();
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
  const Solution best = prune_unreachable(p, full);
  if (!check_solution(p, best).empty()) return full;
  Answer answer(p, std::move(full));
  answer.keep(dag_cost(p, best));
  for (std::size_t round = 0; round < rounds; ++round) {
    bool improved = false;
    for (std::uint32_t c = 0; c < p.classes.size(); ++c) {
      if (!answer.has(c)) continue;  // not in the answer: a switch changes nothing
      for (std::size_t i = 0; i < p.classes[c].size(); ++i) {
        const std::vector<std::int32_t>& choice = answer.full().choice;
        if (static_cast<std::int32_t>(i) == choice[c]) continue;
        const Candidate& cand = p.classes[c][i];
        if (!std::all_of(cand.kids.begin(), cand.kids.end(), [&](std::uint32_t k) { return choice[k] != kUnchosen; }))
          continue;
        answer.set(c, static_cast<std::int32_t>(i));
        if (kept_if_cheaper(p, answer))
          improved = true;
        else
          answer.undo();
      }
    }
    if (!improved) break;
  }
  return answer.full();
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
