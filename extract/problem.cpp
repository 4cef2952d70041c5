#include "extract/problem.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <queue>
#include <unordered_map>

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

namespace {

using detail::Fixpoint;
using detail::least_fixpoint;
using detail::Links;
using detail::region_bound;

// Several classes of one strongly connected component S, which every
// bound above sees as one value (a search stops where one kid reaches
// another; a path pays one class of S): the Q, K and V projections of an
// attention, their merged forms and layouts. Where a candidate's kids need
// several classes of S, its computation pays, in disjoint parts, its own
// cost; the cheapest set E of S's entering candidates (no kid in S) from
// which all those kids can be derived (a Horn fixpoint over the classes
// between them and S, S's other candidates and the classes not reaching S
// free: the entering candidates an answer chooses are such a set); and the
// heaviest path outside S from any kid, S's classes at the least, over
// S's entering candidates, of their heaviest kid's bound (an answer enters
// S somewhere). Components are settled sinks first, so the paths outside S
// count what the components below gained (each attention of a stack its
// own). `floor`: each candidate's bound so far (at links.first[c] + i);
// each keeps the larger. Only
// components whose cheapest entering candidate alone cannot derive all of
// their classes are asked; the work is counted, and past `budget` or once
// `out_of_time` says so the demands stop (the paths go on).
//
// The same holds for any set U of classes that is convex (no class outside
// U both below a class of U and above one: then an entering candidate's
// kids do not reach U, and the parts stay disjoint). Where components are
// each other's alternatives, or a class above S can be computed without it,
// S alone asks nothing, and U is S grown by them (below). A candidate asks
// U once the kids of U's entering candidates are settled (U's exit is
// known then).
//
// The classes between a candidate's kids and S, at most this many per class
// of S: on the bert e-graphs the gains came from 42-65 classes over an S of
// 18, and the regions of 118-536 on the gpu gained nothing in 67M steps of
// work (docs/measurements.md, session 22).
constexpr std::size_t kRegionPerClass = 8;

struct ComponentsRound {
  std::vector<double> below;
  std::vector<std::uint8_t> asked;  // per class: its component was asked
};

ComponentsRound several_classes(const std::vector<std::vector<Candidate>>& classes, const Links& links,
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
  // Extends `list` with every class below its classes from `start` on
  // (through candidates' kids; above them, through their users, where
  // !down) that `keep` admits.
  std::vector<std::uint8_t> listed(n, 0);
  auto extend = [&](std::vector<std::uint32_t>& list, bool down, auto keep, std::size_t start = 0) {
    for (std::uint32_t c : list) listed[c] = 1;
    auto visit = [&](std::uint32_t x) {
      if (listed[x] || !keep(x)) return;
      listed[x] = 1;
      list.push_back(x);
    };
    for (std::size_t j = start; j < list.size(); ++j)
      if (down) {
        for (const Candidate& cand : classes[list[j]])
          for (std::uint32_t k : cand.kids) visit(k);
      } else {
        for (auto [p, i] : links.users[list[j]]) visit(p);
      }
    for (std::uint32_t c : list) listed[c] = 0;
  };
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
    extend(up, false, [](std::uint32_t) { return true; });
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
      extend(up, false, [](std::uint32_t) { return true; });
      for (std::uint32_t c : up) up_of[c] = 1;
      extend(u, true, [&](std::uint32_t k) { return up_of[k] != 0; }, group);
      for (std::uint32_t c : up) up_of[c] = 0;
      work += up.size();
    };
    // Convex: no class outside U both below U and reaching U (a.reaches).
    auto convex = [&](const Asked& a) {
      std::vector<std::uint32_t> down = a.members;
      extend(down, true, [](std::uint32_t) { return true; });
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
    extend(down, true, [&](std::uint32_t x) { return comp[x] >= comp[k]; });
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
  std::vector<std::uint8_t> seen(n, 0);
  auto reach_of = [&](std::uint32_t k) -> Reach& {
    auto [it, added] = reach.try_emplace(k);
    if (!added) return it->second;
    std::vector<std::uint32_t>& list = it->second.list;
    list.push_back(k);
    seen[k] = 1;
    for (std::size_t j = 0; j < list.size(); ++j) {
      ++work;
      for (const Candidate& cand : classes[list[j]])
        for (std::uint32_t kid : cand.kids) {
          ++work;
          if (!seen[kid]) {
            seen[kid] = 1;
            list.push_back(kid);
          }
        }
    }
    for (std::uint32_t c : list) seen[c] = 0;
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
    ComponentsRound round = several_classes(classes, links, searched.of_candidate, budget, out_of_time);
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
          several_classes(inside, links, std::vector<double>(links.first[n], 0), budget, out_of_time);
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
