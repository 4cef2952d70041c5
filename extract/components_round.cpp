#include "extract/components_round.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <utility>

namespace refinery::extract::detail {

namespace {

// The classes between a candidate's kids and S, at most this many per class
// of S: on the bert e-graphs the gains came from 42-65 classes over an S of
// 18, and the regions of 118-536 on the gpu gained nothing in 67M steps of
// work (docs/measurements.md, session 22).
constexpr std::size_t kRegionPerClass = 8;

}  // namespace

ComponentsRound components_round(const std::vector<std::vector<Candidate>>& classes, const Links& links,
                                 const std::vector<double>& floor, std::size_t budget,
                                 const std::function<bool()>& out_of_time) {
  const std::size_t n = classes.size();
  const std::vector<std::uint32_t> comp = class_components(classes);
  std::size_t num = 0;
  for (std::uint32_t s : comp) num = std::max<std::size_t>(num, s + 1);
  std::vector<std::vector<std::uint32_t>> members(num);
  for (std::uint32_t c = 0; c < n; ++c) members[comp[c]].push_back(c);
  std::size_t work = 0;
  auto stopped = [&] { return work >= budget || (out_of_time && out_of_time()); };
  Walk walk(classes, links);
  auto enters = [&](std::uint32_t c, const Candidate& cand) {
    return std::none_of(cand.kids.begin(), cand.kids.end(), [&](std::uint32_t k) { return comp[k] == comp[c]; });
  };
  // A set U of classes asked about (a component, or several that are each
  // other's alternatives, below): its entering candidates (no kid in U,
  // cheapest first), the classes that reach it, and those derivable without it.
  struct Asked {
    std::vector<std::uint32_t> members;
    std::vector<std::uint8_t> in;  // per class: a member
    std::uint32_t ready = 0;       // the last component (class_components' order) its entering candidates' kids lie in
    std::vector<std::pair<double, std::pair<std::uint32_t, std::uint32_t>>> entering;  // (cost, (class, candidate))
    std::vector<std::uint8_t> reaches, free;
    double exit = kInfiniteCost;  // the least, over the entering candidates, of their heaviest kid's bound
  };
  std::vector<Asked> asked;
  const std::vector<std::size_t>& first_of = links.first;
  std::vector<std::int32_t> entry_at(first_of[n], -1);  // an entering candidate's place in its entering
  // Marks a's entering candidates for derive (one set of U may hold
  // another's entering candidates).
  auto install = [&](const Asked& a) {
    for (std::uint32_t c : a.members) std::fill_n(entry_at.begin() + first_of[c], classes[c].size(), -1);
    for (std::size_t e = 0; e < a.entering.size(); ++e) {
      auto [c, i] = a.entering[e].second;
      entry_at[first_of[c] + i] = static_cast<std::int32_t>(e);
    }
  };
  // Horn: may each class of `region` (U's classes and classes reaching U)
  // be derived when only the entering candidates `on` are allowed? The
  // classes outside region are free.
  std::vector<std::uint8_t> in_region(n, 0), have(n, 0);
  std::vector<std::uint32_t> pending(first_of[n], 0), ready;  // per candidate, its kids in region not derived
  auto derive = [&](const Asked& a, const std::vector<std::uint32_t>& region, const std::vector<std::uint8_t>& on) {
    auto allowed = [&](std::uint32_t x, std::size_t i) {
      std::int32_t e = entry_at[first_of[x] + i];
      return !a.in[x] || e < 0 || on[static_cast<std::size_t>(e)];
    };
    for (std::uint32_t x : region) have[x] = 0;
    ready.clear();
    for (std::uint32_t x : region)
      for (std::size_t i = 0; i < classes[x].size(); ++i) {
        if (!allowed(x, i)) continue;
        const auto& kids = classes[x][i].kids;
        std::uint32_t count = 0;
        for (std::size_t j = 0; j < kids.size(); ++j)
          if (in_region[kids[j]] && std::find(kids.begin(), kids.begin() + j, kids[j]) == kids.begin() + j) ++count;
        work += kids.size() + 1;
        pending[first_of[x] + i] = count;
        if (count == 0 && !have[x]) {
          have[x] = 1;
          ready.push_back(x);
        }
      }
    while (!ready.empty()) {
      std::uint32_t k = ready.back();
      ready.pop_back();
      for (auto [c, i] : links.users[k]) {
        ++work;
        if (!in_region[c] || have[c] || !allowed(c, i) || --pending[first_of[c] + i] > 0) continue;
        have[c] = 1;
        ready.push_back(c);
      }
    }
  };
  // U's entering candidates; where one alone derives all of U, U is not
  // asked (nullopt); else the classes that reach U, and which of them U's
  // classes need not compute.
  auto ask = [&](std::vector<std::uint32_t> members) -> std::optional<Asked> {
    Asked a;
    a.in.assign(n, 0);
    for (std::uint32_t c : members) a.in[c] = 1;
    for (std::uint32_t c : members)
      for (std::uint32_t i = 0; i < classes[c].size(); ++i) {
        const auto& kids = classes[c][i].kids;
        if (std::any_of(kids.begin(), kids.end(), [&](std::uint32_t k) { return a.in[k]; })) continue;
        a.entering.push_back({classes[c][i].cost, {c, i}});
        for (std::uint32_t k : kids) a.ready = std::max(a.ready, comp[k]);
      }
    a.members = std::move(members);
    if (a.entering.empty()) return std::nullopt;
    std::sort(a.entering.begin(), a.entering.end());
    install(a);
    std::vector<std::uint8_t> on(a.entering.size(), 0);
    on[0] = 1;
    for (std::uint32_t c : a.members) in_region[c] = 1;
    derive(a, a.members, on);
    bool one_enough = std::all_of(a.members.begin(), a.members.end(), [&](std::uint32_t c) { return have[c]; });
    if (one_enough) {
      for (std::uint32_t c : a.members) in_region[c] = 0;
      return std::nullopt;
    }
    a.reaches.assign(n, 0);
    std::vector<std::uint32_t> up = a.members;
    walk.extend(up, false, [](std::uint32_t) { return true; });
    for (std::size_t j = a.members.size(); j < up.size(); ++j) a.reaches[up[j]] = in_region[up[j]] = 1;
    work += up.size();
    on[0] = 0;
    derive(a, up, on);
    a.free.assign(n, 0);
    for (std::uint32_t c : up) {
      if (!a.in[c]) a.free[c] = have[c];
      in_region[c] = 0;
    }
    return a;
  };
  std::vector<std::uint8_t> asked_comp(num, 0);
  for (std::uint32_t s = 0; s < num; ++s)
    if (members[s].size() >= 2)
      if (std::optional<Asked> a = ask(members[s])) {
        asked_comp[s] = 1;
        asked.push_back(std::move(*a));
      }
  // Components that are each other's alternatives: a class (a bridge) with
  // candidates that enter different asked components (bert_encoder's Q
  // from the products of the LayerNorm's output x, or of x' = x + b, after
  // `residual-bias-into-norm`; or from x times the negated weight, a class
  // of its own). Neither is needed alone, so neither asks anything of the
  // attention that uses Q, K and V. Their union U is asked as well, with
  // the bridges and the classes between the bridges and the components
  // (the negated product, an entering candidate of U then), where no class
  // outside U lies between two of its classes (then an entering
  // candidate's kids do not reach U, and the parts stay disjoint).
  std::vector<std::uint32_t> joined(num);
  std::iota(joined.begin(), joined.end(), 0);
  auto root = [&](std::uint32_t s) {
    while (joined[s] != s) s = joined[s] = joined[joined[s]];
    return s;
  };
  std::vector<std::pair<std::uint32_t, std::uint32_t>> bridges;  // (class, one of the components it enters)
  for (std::uint32_t c = 0; c < n; ++c) {
    std::uint32_t seen = UINT32_MAX;
    bool bridge = false;
    for (const Candidate& cand : classes[c])
      for (std::uint32_t k : cand.kids) {
        if (!asked_comp[comp[k]] || comp[k] == comp[c]) continue;
        if (seen == UINT32_MAX) seen = comp[k];
        if (comp[k] == seen) continue;
        bridge = true;
        if (root(seen) != root(comp[k])) joined[root(comp[k])] = root(seen);
      }
    if (bridge) bridges.push_back({c, seen});
  }
  {
    // Per union: its components' classes, and its bridges.
    std::map<std::uint32_t, std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>>> unions;
    for (std::uint32_t s = 0; s < num; ++s)
      if (asked_comp[s]) {
        auto& u = unions[root(s)].first;
        u.insert(u.end(), members[s].begin(), members[s].end());
      }
    for (auto [c, s] : bridges) unions[root(s)].second.push_back(c);
    std::vector<std::uint8_t> up_of(n, 0);
    // Adds to u the classes reaching its first `group` classes (the
    // components) that lie below u's other classes.
    auto between = [&](std::vector<std::uint32_t>& u, std::size_t group) {
      std::vector<std::uint32_t> up(u.begin(), u.begin() + static_cast<std::ptrdiff_t>(group));
      walk.extend(up, false, [](std::uint32_t) { return true; });
      for (std::uint32_t c : up) up_of[c] = 1;
      walk.extend(u, true, [&](std::uint32_t k) { return up_of[k] != 0; }, group);
      for (std::uint32_t c : up) up_of[c] = 0;
      work += up.size();
    };
    // Convex: no class outside U both below U and reaching U (a.reaches).
    auto convex = [&](const Asked& a) {
      std::vector<std::uint32_t> down = a.members;
      walk.extend(down, true, [](std::uint32_t) { return true; });
      work += down.size();
      return std::none_of(down.begin() + static_cast<std::ptrdiff_t>(a.members.size()), down.end(),
                          [&](std::uint32_t c) { return a.reaches[c]; });
    };
    for (auto& [r, parts] : unions) {
      auto& [u, from] = parts;
      const std::size_t group = u.size();
      u.insert(u.end(), from.begin(), from.end());
      between(u, group);
      // The doors that need not pass through U (a class with a kid in U,
      // derivable without it: x times the negated weight, or bert's
      // x' Wv beside its form through a component) join it, with the
      // classes between them and the components, until none is left.
      std::optional<Asked> a;
      for (int round = 0; round < 4; ++round) {
        a = ask(u);
        if (!a || !convex(*a)) {
          a.reset();
          break;
        }
        const std::size_t before = u.size();
        for (std::uint32_t c = 0; c < n; ++c) {
          if (!a->reaches[c] || !a->free[c]) continue;
          bool door = false;
          for (const Candidate& cand : classes[c])
            door = door || std::any_of(cand.kids.begin(), cand.kids.end(), [&](std::uint32_t k) { return a->in[k]; });
          if (door) u.push_back(c);
        }
        if (u.size() == before) break;
        between(u, group);
        a.reset();
      }
      if (a && u.size() > group) asked.push_back(std::move(*a));
    }
  }
  std::stable_sort(asked.begin(), asked.end(), [](const Asked& x, const Asked& y) { return x.ready < y.ready; });
  // The cheapest set of entering candidates that derives `targets`, by a
  // best-first search over the sets (each popped set costs no less than the
  // ones before it, so the last popped is a bound where the search stops).
  std::map<std::pair<const Asked*, std::vector<std::uint32_t>>, double> entering_of;
  auto min_entering = [&](const Asked& a, const std::vector<std::uint32_t>& targets) {
    auto [it, added] = entering_of.try_emplace({&a, targets}, 0.0);
    if (!added) return it->second;
    install(a);
    std::vector<std::uint32_t> region;
    for (std::uint32_t t : targets)
      if (!in_region[t]) {
        in_region[t] = 1;
        region.push_back(t);
      }
    for (std::size_t j = 0; j < region.size(); ++j)
      for (const Candidate& cand : classes[region[j]])
        for (std::uint32_t k : cand.kids)
          if (!in_region[k] && (a.in[k] || (a.reaches[k] && !a.free[k]))) {
            in_region[k] = 1;
            region.push_back(k);
          }
    if (region.size() > kRegionPerClass * a.members.size()) {  // not asked: 0 is a bound
      for (std::uint32_t x : region) in_region[x] = 0;
      return 0.0;
    }
    // Only the entering candidates of the region's classes can help, and of
    // a class only its cheapest (any of them derives it: their kids are
    // outside U); the free ones are in every set.
    std::vector<std::uint8_t> on(a.entering.size(), 0);
    std::vector<std::uint32_t> choices;
    for (std::size_t e = 0; e < a.entering.size(); ++e) {
      std::uint32_t c = a.entering[e].second.first;
      if (in_region[c] != 1) continue;
      in_region[c] = 2;  // its cheapest is in
      if (a.entering[e].first > 0) {
        choices.push_back(static_cast<std::uint32_t>(e));
      } else {
        on[e] = 1;
      }
    }
    for (std::uint32_t x : region) in_region[x] = 1;
    struct Set {
      double cost;
      std::size_t last;
      std::vector<std::uint32_t> picked;
      bool operator>(const Set& o) const { return cost > o.cost; }
    };
    std::priority_queue<Set, std::vector<Set>, std::greater<>> open;
    open.push({0, SIZE_MAX, {}});
    double found = 0;
    while (!open.empty()) {
      Set set = open.top();
      open.pop();
      found = set.cost;
      if (stopped()) break;
      for (std::uint32_t e : set.picked) on[e] = 1;
      derive(a, region, on);
      for (std::uint32_t e : set.picked) on[e] = 0;
      if (std::all_of(targets.begin(), targets.end(), [&](std::uint32_t t) { return have[t]; })) break;
      // A set that derives everything with one fewer candidate is no
      // dearer, so each candidate added must derive a class the set does
      // not (every prefix of a minimal set, in this order, does that).
      for (std::size_t j = set.last + 1; j < choices.size(); ++j) {  // SIZE_MAX + 1 == 0
        if (have[a.entering[choices[j]].second.first]) continue;
        Set next{set.cost + a.entering[choices[j]].first, j, set.picked};
        next.picked.push_back(choices[j]);
        open.push(std::move(next));
      }
    }
    for (std::uint32_t x : region) in_region[x] = 0;
    it->second = found;
    return found;
  };
  std::vector<double> now(n, kInfiniteCost), cap(n, kInfiniteCost);
  auto path = [&](std::uint32_t c, std::uint32_t i, const std::vector<double>& b) {
    double deepest = 0;
    for (std::uint32_t k : classes[c][i].kids) deepest = std::max(deepest, b[k]);
    return classes[c][i].cost + deepest;
  };
  // The heaviest path from k outside S: S's classes at its exit, the
  // classes not reaching S at their bounds (settled), the rest searched.
  std::map<std::pair<const Asked*, std::uint32_t>, double> outside_of;
  Fixpoint apart(n);
  std::vector<double> held(n, kInfiniteCost);
  auto outside = [&](const Asked& a, std::uint32_t k) {
    if (a.in[k]) return a.exit;
    if (!a.reaches[k]) return now[k];
    auto [it, added] = outside_of.try_emplace({&a, k}, 0.0);
    if (!added) return it->second;
    std::vector<std::uint32_t> among{k};
    in_region[k] = 1;
    for (std::size_t j = 0; j < among.size(); ++j) {
      std::uint32_t x = among[j];
      if (a.in[x] || !a.reaches[x]) {
        held[x] = a.in[x] ? a.exit : now[x];
        continue;
      }
      for (const Candidate& cand : classes[x])
        for (std::uint32_t kid : cand.kids)
          if (!in_region[kid]) {
            in_region[kid] = 1;
            among.push_back(kid);
          }
    }
    return it->second = region_bound(classes, links, among, held, work, path, apart, in_region, k);
  };
  // Whether class k is below class from (a computation of `from` may hold
  // it): a search down from `from` through the components after k's.
  std::map<std::pair<std::uint32_t, std::uint32_t>, bool> below_of;
  auto is_below = [&](std::uint32_t k, std::uint32_t from) {
    auto [it, added] = below_of.try_emplace({k, from}, false);
    if (!added) return it->second;
    std::vector<std::uint32_t> down{from};
    walk.extend(down, true, [&](std::uint32_t x) { return comp[x] >= comp[k]; });
    work += down.size();
    return it->second = std::find(down.begin() + 1, down.end(), k) != down.end();
  };
  auto value = [&](std::uint32_t c, std::uint32_t i, const std::vector<double>& b) {
    double v = std::max(floor[first_of[c] + i], path(c, i, b));
    const Candidate& cand = classes[c][i];
    if (links.distinct[c][i] < 2 || !enters(c, cand)) return v;
    // Where this round lifted the heaviest kid above what the searches
    // priced the candidate at, each other kid no computation of it holds
    // still pays a candidate of its own (bert's residual (x + b) + m, with
    // m's attention demand: the bias Add beside it).
    if (path(c, i, b) > floor[first_of[c] + i] && !stopped()) {
      std::uint32_t heaviest = cand.kids[0];
      for (std::uint32_t k : cand.kids)
        if (b[k] > b[heaviest]) heaviest = k;
      double own = 0;
      for (std::size_t j = 0; j < cand.kids.size(); ++j) {
        std::uint32_t k = cand.kids[j];
        if (k == heaviest || std::find(cand.kids.begin(), cand.kids.begin() + j, k) != cand.kids.begin() + j ||
            is_below(k, heaviest))
          continue;
        double least = kInfiniteCost;
        for (const Candidate& other : classes[k]) least = std::min(least, other.cost);
        own += least;
      }
      v = std::max(v, path(c, i, b) + own);
    }
    for (const Asked& a : asked) {
      if (a.ready >= comp[c] || stopped()) break;
      std::vector<std::uint32_t> targets;
      for (std::uint32_t k : cand.kids)
        if ((a.in[k] || (a.reaches[k] && !a.free[k])) &&
            std::find(targets.begin(), targets.end(), k) == targets.end())
          targets.push_back(k);
      if (targets.size() < 2) continue;
      std::sort(targets.begin(), targets.end());
      double e = min_entering(a, targets);
      // The path outside S is at most each kid's bound (those count S too):
      // where even that cannot lift v, the searches are not made.
      double most = 0;
      for (std::uint32_t k : cand.kids) most = std::max(most, now[k]);
      if (e <= 0 || cand.cost + e + most <= v) continue;
      double o = 0;
      for (std::uint32_t k : cand.kids) o = std::max(o, outside(a, k));
      v = std::max(v, cand.cost + e + o);
    }
    return v;
  };
  // A component at a time, sinks first (class_components' order): its
  // kids outside it are settled and held at their bounds.
  Fixpoint one(n);
  std::size_t next_asked = 0;
  for (std::uint32_t s = 0; s < num; ++s) {
    std::vector<std::uint32_t> among = members[s];
    for (std::uint32_t c : members[s])
      for (const Candidate& cand : classes[c])
        for (std::uint32_t k : cand.kids)
          if (comp[k] != s && cap[k] == kInfiniteCost && now[k] < kInfiniteCost) {
            cap[k] = now[k];
            among.push_back(k);
          }
    least_fixpoint(classes, links, among, &cap, work, value, one);
    for (std::uint32_t c : members[s]) now[c] = one.b[c];
    one.clear(among);
    for (std::size_t j = members[s].size(); j < among.size(); ++j) cap[among[j]] = kInfiniteCost;
    for (; next_asked < asked.size() && asked[next_asked].ready == s; ++next_asked) {
      Asked& a = asked[next_asked];
      for (const auto& [cost, at] : a.entering) {
        double deepest = 0;  // its own cost is the entering set's part
        for (std::uint32_t k : classes[at.first][at.second].kids) deepest = std::max(deepest, now[k]);
        a.exit = std::min(a.exit, deepest);
      }
    }
  }
  std::vector<std::uint8_t> asked_classes(n, 0);
  for (const Asked& a : asked)
    for (std::uint32_t c : a.members) asked_classes[c] = 1;
  return {std::move(now), std::move(asked_classes)};
}

}  // namespace refinery::extract::detail
