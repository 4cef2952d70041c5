#include "extract/problem.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <queue>
#include <unordered_map>

#include "extract/components_round.h"
#include "extract/fixpoint.h"

namespace refinery::extract {

double dag_cost(const Problem& p, const Solution& s) {
  double total = 0;
  for (std::size_t c = 0; c < p.classes.size(); ++c)
    if (s.choice[c] != kUnchosen) total += p.classes[c][static_cast<std::size_t>(s.choice[c])].cost;
  return total;
}

std::vector<std::vector<std::uint32_t>> find_cycles(const Problem& p, const Solution& s, std::size_t limit) {
  std::vector<std::vector<std::uint32_t>> cycles;
  std::vector<std::uint8_t> colour(p.classes.size(), 0);
  std::vector<std::pair<std::uint32_t, std::size_t>> stack;
  for (std::uint32_t root : p.roots) {
    if (colour[root] || s.choice[root] == kUnchosen) continue;
    stack.push_back({root, 0});
    colour[root] = 1;
    while (!stack.empty() && cycles.size() < limit) {
      auto& [c, next] = stack.back();
      const auto& kids = p.classes[c][static_cast<std::size_t>(s.choice[c])].kids;
      if (next == kids.size()) {
        colour[c] = 2;
        stack.pop_back();
        continue;
      }
      std::uint32_t k = kids[next++];
      if (s.choice[k] == kUnchosen) continue;
      if (colour[k] == 1) {
        auto it = std::find_if(stack.begin(), stack.end(), [&](const auto& f) { return f.first == k; });
        std::vector<std::uint32_t> cycle;
        for (; it != stack.end(); ++it) cycle.push_back(it->first);
        cycles.push_back(std::move(cycle));
      } else if (colour[k] == 0) {
        colour[k] = 1;
        stack.push_back({k, 0});
      }
    }
  }
  return cycles;
}

std::optional<std::vector<std::uint32_t>> find_cycle(const Problem& p, const Solution& s) {
  auto cycles = find_cycles(p, s, 1);
  if (cycles.empty()) return std::nullopt;
  std::vector<std::uint32_t> cycle = std::move(cycles.front());
  cycle.push_back(cycle.front());
  return cycle;
}

std::string check_solution(const Problem& p, const Solution& s) {
  if (s.choice.size() != p.classes.size()) return "solution size differs from the problem";
  for (std::uint32_t r : p.roots)
    if (s.choice[r] == kUnchosen) return fmt::format("root class {} has no choice", r);
  for (std::size_t c = 0; c < p.classes.size(); ++c) {
    if (s.choice[c] == kUnchosen) continue;
    if (s.choice[c] < 0 || static_cast<std::size_t>(s.choice[c]) >= p.classes[c].size())
      return fmt::format("class {}: choice {} out of range", c, s.choice[c]);
    for (std::uint32_t k : p.classes[c][static_cast<std::size_t>(s.choice[c])].kids)
      if (s.choice[k] == kUnchosen) return fmt::format("class {} needs class {}, which has no choice", c, k);
  }
  if (auto cycle = find_cycle(p, s)) return fmt::format("cycle through classes {}", fmt::join(*cycle, " -> "));
  return "";
}

Solution prune_unreachable(const Problem& p, Solution s) {
  std::vector<std::uint8_t> seen(p.classes.size(), 0);
  std::vector<std::uint32_t> stack(p.roots.begin(), p.roots.end());
  while (!stack.empty()) {
    std::uint32_t c = stack.back();
    stack.pop_back();
    if (seen[c] || s.choice[c] == kUnchosen) continue;
    seen[c] = 1;
    for (std::uint32_t k : p.classes[c][static_cast<std::size_t>(s.choice[c])].kids) stack.push_back(k);
  }
  for (std::size_t c = 0; c < p.classes.size(); ++c)
    if (!seen[c]) s.choice[c] = kUnchosen;
  return s;
}

std::vector<std::uint32_t> class_components(const std::vector<std::vector<Candidate>>& classes) {
  const std::size_t n = classes.size();
  std::vector<std::vector<std::uint32_t>> out(n);
  for (std::uint32_t c = 0; c < n; ++c) {
    for (const Candidate& cand : classes[c]) out[c].insert(out[c].end(), cand.kids.begin(), cand.kids.end());
    std::sort(out[c].begin(), out[c].end());
    out[c].erase(std::unique(out[c].begin(), out[c].end()), out[c].end());
  }
  constexpr std::uint32_t kNone = UINT32_MAX;
  std::vector<std::uint32_t> index(n, kNone), low(n, 0), comp(n, kNone), stack;
  std::vector<std::pair<std::uint32_t, std::size_t>> calls;
  std::uint32_t next_index = 0, next_comp = 0;
  for (std::uint32_t s = 0; s < n; ++s) {
    if (index[s] != kNone) continue;
    calls.push_back({s, 0});
    index[s] = low[s] = next_index++;
    stack.push_back(s);
    while (!calls.empty()) {
      auto& [c, i] = calls.back();
      if (i < out[c].size()) {
        std::uint32_t k = out[c][i++];
        if (index[k] == kNone) {
          index[k] = low[k] = next_index++;
          stack.push_back(k);
          calls.push_back({k, 0});
        } else if (comp[k] == kNone) {
          low[c] = std::min(low[c], index[k]);
        }
        continue;
      }
      std::uint32_t done = c;
      calls.pop_back();
      if (!calls.empty()) low[calls.back().first] = std::min(low[calls.back().first], low[done]);
      if (low[done] == index[done]) {
        std::uint32_t m;
        do {
          m = stack.back();
          stack.pop_back();
          comp[m] = next_comp;
        } while (m != done);
        ++next_comp;
      }
    }
  }
  return comp;
}

Requirements requirements(const std::vector<std::vector<Candidate>>& classes, const std::vector<std::uint32_t>& comp,
                          const std::vector<std::uint32_t>& label, std::size_t num_labels) {
  const std::size_t n = classes.size();
  Requirements r;
  r.words = (num_labels + 63) / 64;
  r.bits.assign(n * r.words, ~std::uint64_t{0});
  std::vector<std::vector<std::uint32_t>> parents(n);
  for (std::uint32_t c = 0; c < n; ++c)
    for (const Candidate& cand : classes[c])
      for (std::uint32_t k : cand.kids) parents[k].push_back(c);
  for (auto& ps : parents) {
    std::sort(ps.begin(), ps.end());
    ps.erase(std::unique(ps.begin(), ps.end()), ps.end());
  }
  // Kids before parents (class_components numbers the components of the
  // class graph sinks first): one sweep in that order settles every class
  // outside a cycle; the worklist after it only iterates the cycles. In
  // any other order a deep graph is swept once per layer.
  std::vector<std::uint32_t> order(n);
  for (std::uint32_t c = 0; c < n; ++c) order[c] = c;
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return comp[a] < comp[b]; });
  std::vector<std::uint32_t> work;  // classes whose kids changed after they were last evaluated
  std::vector<std::uint8_t> queued(n, 0);
  std::vector<std::uint64_t> meet(r.words), join(r.words);
  std::size_t swept = 0;
  while (swept < n || !work.empty()) {
    std::uint32_t c;
    if (swept < n) {
      c = order[swept++];
    } else {
      c = work.back();
      work.pop_back();
    }
    queued[c] = 0;
    std::fill(meet.begin(), meet.end(), ~std::uint64_t{0});
    for (const Candidate& cand : classes[c]) {
      std::fill(join.begin(), join.end(), 0);
      for (std::uint32_t k : cand.kids)
        for (std::size_t i = 0; i < r.words; ++i) join[i] |= r.of(k)[i];
      for (std::size_t i = 0; i < r.words; ++i) meet[i] &= join[i];
    }
    meet[label[c] / 64] |= std::uint64_t{1} << (label[c] % 64);
    std::uint64_t* now = r.bits.data() + c * r.words;
    if (std::equal(meet.begin(), meet.end(), now)) continue;
    std::copy(meet.begin(), meet.end(), now);  // only ever shrinks: the iteration is monotone from the top
    for (std::uint32_t p : parents[c])
      if (!queued[p]) {
        queued[p] = 1;
        work.push_back(p);
      }
  }
  return r;
}

Requirements class_requirements(const std::vector<std::vector<Candidate>>& classes) {
  std::vector<std::uint32_t> self(classes.size());
  for (std::uint32_t c = 0; c < self.size(); ++c) self[c] = c;
  return requirements(classes, class_components(classes), self, self.size());
}

namespace {

using detail::components_round;
using detail::ComponentsRound;
using detail::Fixpoint;
using detail::least_fixpoint;
using detail::Links;
using detail::region_bound;
using detail::Walk;

double of_answer(const std::vector<double>& below, const std::vector<std::uint32_t>& roots) {
  double most = 0;
  for (std::uint32_t r : roots) most = std::max(most, below[r]);
  return most;
}

// The first two rounds of path_bounds (problem.h): each class's bound and
// each candidate's (of_candidate, at links.first[c] + i); the second (the
// sums) only where the first one's bound of an answer is below `enough`
// (0: never).
struct SearchedBounds {
  std::vector<double> below, of_candidate;
};

SearchedBounds searched_bounds(const std::vector<std::vector<Candidate>>& classes, const Links& links,
                               const std::vector<std::uint32_t>& roots, std::size_t work_per_size,
                               const std::function<bool()>& out_of_time, double enough) {
  const std::size_t n = classes.size();
  std::vector<std::uint32_t> all(n);
  for (std::uint32_t c = 0; c < n; ++c) all[c] = c;
  // The heaviest path down, alone.
  auto path = [&](std::uint32_t c, std::uint32_t i, const std::vector<double>& b) {
    double deepest = 0;
    for (std::uint32_t k : classes[c][i].kids) deepest = std::max(deepest, b[k]);
    return classes[c][i].cost + deepest;
  };
  // The heaviest path alone, a bound on every class's computation, for the
  // searches below.
  std::size_t own_work = 0;
  Fixpoint plain(n);
  if (work_per_size > 0) least_fixpoint(classes, links, all, nullptr, own_work, path, plain);
  // What a kid k2's computation pays outside k1's: the heaviest path from
  // k2 until it meets a class m of k1's computation. A class k1 cannot
  // reach is in none; one it reaches (m) costs k1's computation, when it is
  // in it, at least the cheapest path of candidates from k1 down to m
  // (m's own cost left out) plus m's heaviest path (under it, so apart from
  // that path): what this exceeds k1's bound is paid there, the penalty
  // pen(m), and the search ends at m at that value (or goes on, where that
  // is less). A search of its own per pair, so they get a budget of work
  // (work_per_size searches of the whole problem) and the caller's clock;
  // past either, 0, which is still a bound.
  const std::size_t budget = work_per_size * (n + links.edges);
  std::size_t work = 0;
  struct Reach {
    std::vector<std::uint32_t> list;                     // the classes k reaches, k first
    std::vector<std::pair<std::uint32_t, double>> down;  // the cheapest path from k to each (its own cost left out)
    std::vector<std::uint64_t> bits;                     // list as a set, once asked
    bool has(std::uint32_t c) const { return (bits[c / 64] >> (c % 64)) & 1; }
  };
  std::map<std::uint32_t, Reach> reach;
  std::map<std::pair<std::uint32_t, std::uint32_t>, double> outside;
  Fixpoint scratch(n);
  std::vector<double> cap(n, kInfiniteCost), dist(n, kInfiniteCost);
  Walk walk(classes, links);
  auto reach_of = [&](std::uint32_t k) -> Reach& {
    auto [it, added] = reach.try_emplace(k);
    if (!added) return it->second;
    it->second.list.push_back(k);
    walk.extend(it->second.list, true, [](std::uint32_t) { return true; }, 0, &work);
    return it->second;
  };
  // The cheapest paths down from k1 (Dijkstra), asked only of a heaviest kid.
  auto down_of = [&](std::uint32_t k1) -> const auto& {
    Reach& r = reach_of(k1);
    if (!r.down.empty()) return r.down;
    using Entry = std::pair<double, std::uint32_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
    dist[k1] = 0;
    queue.push({0, k1});
    while (!queue.empty()) {
      auto [d, c] = queue.top();
      queue.pop();
      if (d > dist[c]) continue;
      ++work;
      r.down.push_back({c, d});
      for (const Candidate& cand : classes[c])
        for (std::uint32_t k : cand.kids) {
          ++work;
          if (d + cand.cost < dist[k]) {
            dist[k] = d + cand.cost;
            queue.push({dist[k], k});
          }
        }
    }
    for (std::uint32_t c : r.list) dist[c] = kInfiniteCost;
    return r.down;
  };
  // Inside k2's search, a candidate's kids kj and kl: kl's computation pays
  // outside both k1's and kj's at least the heaviest path from kl until it
  // meets a class either reaches (k1's reach: the classes with a cap). At 0
  // there, not at k1's excess: kj's part may have counted that excess
  // already. A search of its own over what kl reaches without passing
  // through those classes, cached per (kl, kj) while k1 is the same.
  Fixpoint inner(n);
  std::vector<double> zero(n, kInfiniteCost);
  std::vector<std::uint8_t> in_region(n, 0);
  std::vector<std::uint32_t> region;
  std::unordered_map<std::uint64_t, double> apart;  // (k1, kl, kj)
  std::uint64_t first = 0;                          // k1 of the search under way
  auto apart_of = [&](std::uint32_t kl, std::uint32_t kj) {
    auto [it, added] = apart.try_emplace((first * n + kl) * n + kj, 0.0);
    if (!added || cap[kl] < kInfiniteCost || work >= budget || (out_of_time && out_of_time())) return it->second;
    Reach& other = reach_of(kj);
    if (other.bits.empty()) {
      other.bits.assign((n + 63) / 64, 0);
      for (std::uint32_t m : other.list) other.bits[m / 64] |= std::uint64_t{1} << (m % 64);
      work += other.list.size() + other.bits.size();  // the set's memory counted too: n / 64 words a kid
    }
    if (other.has(kl)) return it->second;
    region.assign(1, kl);
    in_region[kl] = 1;
    for (std::size_t j = 0; j < region.size(); ++j) {
      ++work;
      if (zero[region[j]] == 0) continue;  // met: not expanded
      for (const Candidate& cand : classes[region[j]])
        for (std::uint32_t k : cand.kids) {
          ++work;
          if (in_region[k]) continue;
          in_region[k] = 1;
          if (cap[k] < kInfiniteCost || other.has(k)) zero[k] = 0;
          region.push_back(k);
        }
    }
    return it->second = region_bound(classes, links, region, zero, work, path, inner, in_region, kl);
  };
  // A candidate's price with each kid in turn as the base: the base's bound
  // plus the largest of what another kid adds beside it (extra(other,
  // base)), the largest such sum. With `skip_small`, an extra that could not
  // lift the sum above the best so far is not asked for.
  auto each_kid_in_turn = [&](std::uint32_t c, std::uint32_t i, const std::vector<double>& b, auto&& extra,
                              bool skip_small) {
    const auto& kids = classes[c][i].kids;
    double most = 0;
    for (std::uint32_t base : kids) {
      if (b[base] <= 0) continue;
      double add = 0;
      for (std::uint32_t other : kids)
        if (other != base && b[other] > 0 && (!skip_small || b[base] + b[other] > most))
          add = std::max(add, extra(other, base));
      most = std::max(most, b[base] + add);
    }
    return classes[c][i].cost + most;
  };
  // The search's step: a candidate pays its heaviest kid's part, plus what
  // its other kids pay outside that kid's reach (apart_of), each kid in turn.
  bool sums = false;
  auto beside = [&](std::uint32_t c, std::uint32_t i, const std::vector<double>& b) {
    if (!sums) return path(c, i, b);
    return each_kid_in_turn(c, i, b, apart_of, true);
  };
  auto outside_of = [&](std::uint32_t k2, std::uint32_t k1, double below_k1) {
    auto [it, added] = outside.try_emplace({k2, k1}, 0.0);
    if (added && work < budget && !(out_of_time && out_of_time())) {
      const auto& down = down_of(k1);
      work += down.size();
      for (auto [m, d] : down) cap[m] = std::max(0.0, d + plain.b[m] - below_k1);
      first = k1;
      const auto& among = reach_of(k2).list;
      least_fixpoint(classes, links, among, &cap, work, beside, scratch);
      it->second = scratch.b[k2];
      scratch.clear(among);
      for (auto [m, d] : down) cap[m] = kInfiniteCost;
    }
    return it->second;
  };
  // below: a kid's bound, plus what the others pay outside its computation
  // (the largest of them: they may share among themselves), the largest sum
  // over the kids in turn: the heaviest kid's computation may reach a
  // lighter one's cheaply (a small bias class rewritten from the big
  // activation), where the lighter one's does not reach the heavy path.
  auto joint = [&](std::uint32_t c, std::uint32_t i, const std::vector<double>& b) {
    auto beyond = [&](std::uint32_t k2, std::uint32_t k1) { return outside_of(k2, k1, b[k1]); };
    return each_kid_in_turn(c, i, b, beyond, false);
  };
  // Each candidate's bound, the largest of the rounds', for the components'
  // round: a class's bound is the least of its candidates', and where that
  // round lifts some (an unfused attention) the others must keep what the
  // searches gave them (the fused one), not fall back to the class's old
  // least. A candidate the fixpoint never asked (its class was final
  // first) gets its heaviest path on the round's bounds.
  std::vector<double> of_candidate(links.first[n], 0);
  auto kept = [&](std::uint32_t c, std::uint32_t i, const std::vector<double>& b) {
    double v = joint(c, i, b);
    double& k = of_candidate[links.first[c] + i];
    k = std::max(k, v);
    return v;
  };
  auto keep_paths = [&](const std::vector<double>& b) {
    for (std::uint32_t c = 0; c < n; ++c)
      for (std::uint32_t i = 0; i < classes[c].size(); ++i) {
        double& k = of_candidate[links.first[c] + i];
        k = std::max(k, path(c, i, b));
      }
  };
  // Twice: the searches' steps as paths, then with the sums (beside), each
  // with the budget; the larger bound counts, class by class (each is one),
  // so the sums' searches, slower, never leave the first bound worse.
  Fixpoint below(n);
  least_fixpoint(classes, links, all, nullptr, own_work, kept, below);
  keep_paths(below.b);
  if (work_per_size > 0 && of_answer(below.b, roots) < enough) {
    Fixpoint sums_round(n);
    outside.clear();
    work = 0;
    sums = true;
    least_fixpoint(classes, links, all, nullptr, own_work, kept, sums_round);
    keep_paths(sums_round.b);
    for (std::size_t c = 0; c < n; ++c) below.b[c] = std::max(below.b[c], sums_round.b[c]);
  }
  return {std::move(below.b), std::move(of_candidate)};
}

}  // namespace

PathBounds path_bounds(const std::vector<std::vector<Candidate>>& classes, const std::vector<std::uint32_t>& roots,
                       std::size_t work_per_size, const std::function<bool()>& out_of_time, double enough) {
  const std::size_t n = classes.size();
  const Links links(classes);
  SearchedBounds searched = searched_bounds(classes, links, roots, work_per_size, out_of_time, enough);
  std::vector<double> below = std::move(searched.below);
  // Then several classes of one component at once, on top of both.
  const std::size_t budget = work_per_size * (n + links.edges);
  if (work_per_size > 0 && of_answer(below, roots) < enough) {
    ComponentsRound round = components_round(classes, links, searched.of_candidate, budget, out_of_time);
    below = std::move(round.below);
    // And the costs split in two: an answer's cost is what it pays in the
    // asked components plus what it pays outside them, each at least its
    // own problem's bound (the same classes, the other part's costs at 0).
    // Inside, the components' round adds each component's demand to the
    // ones below; outside, the searches count what a path alone misses
    // (the other branches of an attention), which the components' round
    // cannot add to a demand (its path outside a component is a path).
    // Outside, the paths' round alone: on the bert e-graphs the sums'
    // round added nothing there and took 0.3-0.6 s (docs/measurements.md,
    // session 23).
    if (std::find(round.asked.begin(), round.asked.end(), 1) != round.asked.end() &&
        of_answer(below, roots) < enough) {
      std::vector<std::vector<Candidate>> inside = classes, outside = classes;
      for (std::size_t c = 0; c < n; ++c)
        for (Candidate& cand : round.asked[c] ? outside[c] : inside[c]) cand.cost = 0;
      const ComponentsRound in =
          components_round(inside, links, std::vector<double>(links.first[n], 0), budget, out_of_time);
      const std::vector<double> out = searched_bounds(outside, links, roots, work_per_size, out_of_time, 0).below;
      for (std::size_t c = 0; c < n; ++c) below[c] = std::max(below[c], in.below[c] + out[c]);
    }
  }
  PathBounds out{std::move(below), std::vector<double>(n, kInfiniteCost)};
  // above: shortest paths from the roots, a step from c to a kid of its
  // candidate i costing that candidate's cost.
  using Entry = std::pair<double, std::uint32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  for (std::uint32_t r : roots)
    if (out.above[r] > 0) {
      out.above[r] = 0;
      queue.push({0, r});
    }
  std::vector<std::uint8_t> final(n, 0);
  while (!queue.empty()) {
    auto [value, c] = queue.top();
    queue.pop();
    if (final[c] || value > out.above[c]) continue;
    final[c] = 1;
    for (const Candidate& cand : classes[c])
      for (std::uint32_t k : cand.kids)
        if (value + cand.cost < out.above[k]) {
          out.above[k] = value + cand.cost;
          queue.push({out.above[k], k});
        }
  }
  return out;
}

double PathBounds::through(const std::vector<std::vector<Candidate>>& classes, std::size_t c, std::size_t i) const {
  const Candidate& cand = classes[c][i];
  double deepest = 0;
  for (std::uint32_t k : cand.kids) deepest = std::max(deepest, below[k]);
  return above[c] + cand.cost + deepest;
}

double PathBounds::of_answer(const std::vector<std::uint32_t>& roots) const {
  double most = 0;
  for (std::uint32_t r : roots) most = std::max(most, below[r]);
  return most;
}

}  // namespace refinery::extract
