#include "extract/reduce.h"

#include <algorithm>
#include <cmath>

namespace refinery::extract {

namespace {

// The problem being reduced, each class and candidate tagged with where it
// came from. Kids are sorted and unique; no candidate needs its own class.
struct Work {
  std::vector<std::vector<Candidate>> classes;
  std::vector<std::uint32_t> original_class;
  std::vector<std::vector<std::int32_t>> original_candidate;
  std::vector<std::uint32_t> roots;

  std::size_t candidates() const {
    std::size_t n = 0;
    for (const auto& c : classes) n += c.size();
    return n;
  }
};

void normalise(std::vector<std::uint32_t>& kids) {
  std::sort(kids.begin(), kids.end());
  kids.erase(std::unique(kids.begin(), kids.end()), kids.end());
}

// Keeps the classes with keep[c] set, renumbered, and the candidates whose
// kids are all kept.
Work keep_classes(Work w, const std::vector<std::uint8_t>& keep) {
  std::vector<std::uint32_t> index(w.classes.size(), UINT32_MAX);
  Work out;
  for (std::uint32_t c = 0; c < w.classes.size(); ++c)
    if (keep[c]) {
      index[c] = static_cast<std::uint32_t>(out.classes.size());
      out.classes.emplace_back();
      out.original_class.push_back(w.original_class[c]);
      out.original_candidate.emplace_back();
    }
  for (std::uint32_t c = 0; c < w.classes.size(); ++c) {
    if (!keep[c]) continue;
    std::uint32_t to = index[c];
    for (std::size_t i = 0; i < w.classes[c].size(); ++i) {
      Candidate& cand = w.classes[c][i];
      bool ok = std::all_of(cand.kids.begin(), cand.kids.end(), [&](std::uint32_t k) { return keep[k] != 0; });
      if (!ok) continue;
      for (std::uint32_t& k : cand.kids) k = index[k];
      out.classes[to].push_back(std::move(cand));
      out.original_candidate[to].push_back(w.original_candidate[c][i]);
    }
  }
  for (std::uint32_t r : w.roots)
    if (keep[r]) out.roots.push_back(index[r]);
  normalise(out.roots);
  return out;
}

// Classes that can be computed without a cycle (least fixpoint from the
// leaves), then those the roots reach through such candidates.
Work reachable(Work w) {
  const std::size_t n = w.classes.size();
  std::vector<std::uint8_t> computable(n, 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (std::uint32_t c = 0; c < n; ++c) {
      if (computable[c]) continue;
      for (const Candidate& cand : w.classes[c])
        if (std::all_of(cand.kids.begin(), cand.kids.end(), [&](std::uint32_t k) { return computable[k] != 0; })) {
          computable[c] = 1;
          changed = true;
          break;
        }
    }
  }
  std::vector<std::uint8_t> seen(n, 0);
  std::vector<std::uint32_t> stack;
  for (std::uint32_t r : w.roots)
    if (computable[r]) stack.push_back(r);
  while (!stack.empty()) {
    std::uint32_t c = stack.back();
    stack.pop_back();
    if (seen[c]) continue;
    seen[c] = 1;
    for (const Candidate& cand : w.classes[c]) {
      bool ok = std::all_of(cand.kids.begin(), cand.kids.end(), [&](std::uint32_t k) { return computable[k] != 0; });
      if (ok)
        for (std::uint32_t k : cand.kids) stack.push_back(k);
    }
  }
  // A root that cannot be computed stays (with no candidate), so the
  // problem stays infeasible instead of silently losing an output.
  for (std::uint32_t r : w.roots) seen[r] = 1;
  return keep_classes(std::move(w), seen);
}

// Drops a candidate of class c that needs a class which cannot be computed
// without c (every acyclic way to it passes through c): choosing it would
// close a cycle. Only classes of c's strongly connected component can need
// c; for each, computability without c is a worklist fixpoint over the
// component. Returns whether anything was dropped.
bool drop_cyclic(Work& w) {
  const std::size_t n = w.classes.size();
  std::vector<std::uint32_t> comp = class_components(w.classes);
  std::vector<std::vector<std::uint32_t>> members;
  for (std::uint32_t c = 0; c < n; ++c) {
    if (comp[c] >= members.size()) members.resize(comp[c] + 1);
    members[comp[c]].push_back(c);
  }
  // Per class: the candidates (class, index) that need it, inside its component.
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> users(n);
  for (std::uint32_t c = 0; c < n; ++c)
    for (std::uint32_t i = 0; i < w.classes[c].size(); ++i)
      for (std::uint32_t k : w.classes[c][i].kids)
        if (comp[k] == comp[c]) users[k].push_back({c, i});
  std::vector<std::uint8_t> computable(n, 0);
  std::vector<std::vector<std::uint32_t>> missing(n);  // per candidate: kids in the component not yet computable
  std::vector<std::uint32_t> queue;
  bool dropped = false;
  for (const auto& group : members) {
    if (group.size() < 2) continue;
    for (std::uint32_t c : group) missing[c].assign(w.classes[c].size(), 0);
    for (std::uint32_t without : group) {
      queue.clear();
      for (std::uint32_t c : group) {
        computable[c] = 0;
        for (std::uint32_t i = 0; i < w.classes[c].size(); ++i) {
          std::uint32_t m = 0;
          for (std::uint32_t k : w.classes[c][i].kids) m += comp[k] == comp[c] ? 1 : 0;
          missing[c][i] = m;
          if (m == 0 && c != without && !computable[c]) {
            computable[c] = 1;
            queue.push_back(c);
          }
        }
      }
      for (std::size_t q = 0; q < queue.size(); ++q)
        for (auto [c, i] : users[queue[q]])
          if (--missing[c][i] == 0 && c != without && !computable[c]) {
            computable[c] = 1;
            queue.push_back(c);
          }
      // Candidates of `without` that need a class computable only through it.
      auto& cands = w.classes[without];
      std::vector<Candidate> kept;
      std::vector<std::int32_t> idx;
      for (std::size_t i = 0; i < cands.size(); ++i) {
        bool closes = std::any_of(cands[i].kids.begin(), cands[i].kids.end(),
                                  [&](std::uint32_t k) { return comp[k] == comp[without] && !computable[k]; });
        if (closes) {
          dropped = true;
          continue;
        }
        kept.push_back(cands[i]);
        idx.push_back(w.original_candidate[without][i]);
      }
      if (kept.size() != cands.size()) {
        // The users lists index candidates: rebuild them for this component.
        cands = std::move(kept);
        w.original_candidate[without] = std::move(idx);
        missing[without].assign(cands.size(), 0);
        for (std::uint32_t c : group) std::erase_if(users[c], [&](const auto& u) { return u.first == without; });
        for (std::uint32_t i = 0; i < cands.size(); ++i)
          for (std::uint32_t k : cands[i].kids)
            if (comp[k] == comp[without]) users[k].push_back({without, i});
      }
    }
  }
  return dropped;
}

// Drops every candidate b that another candidate a of its class dominates:
// a is no more costly, and each class a needs is one b needs or one that
// every computation of a class b needs uses (class_requirements). In an
// answer that chooses b, all of a's kids are then computed below c without
// c, so choosing a instead keeps the answer acyclic and costs no more. On
// candidates that dominate each other, the first (cheapest, fewest kids)
// stays.
void drop_dominated(Work& w) {
  const Requirements req = class_requirements(w.classes);
  std::vector<std::uint64_t> below(req.words);
  for (std::size_t c = 0; c < w.classes.size(); ++c) {
    auto& cands = w.classes[c];
    if (cands.size() < 2) continue;
    std::vector<std::size_t> order(cands.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      if (cands[a].cost != cands[b].cost) return cands[a].cost < cands[b].cost;
      return cands[a].kids.size() < cands[b].kids.size();
    });
    std::vector<std::size_t> kept;
    for (std::size_t b : order) {
      // What every computation through b uses.
      std::fill(below.begin(), below.end(), 0);
      for (std::uint32_t k : cands[b].kids)
        for (std::size_t i = 0; i < req.words; ++i) below[i] |= req.of(k)[i];
      bool dominated = std::any_of(kept.begin(), kept.end(), [&](std::size_t a) {
        return cands[a].cost <= cands[b].cost &&
               std::all_of(cands[a].kids.begin(), cands[a].kids.end(),
                           [&](std::uint32_t k) { return (below[k / 64] >> (k % 64)) & 1; });
      });
      if (!dominated) kept.push_back(b);
    }
    if (kept.size() == cands.size()) continue;
    std::sort(kept.begin(), kept.end());
    std::vector<Candidate> out;
    std::vector<std::int32_t> idx;
    for (std::size_t i : kept) {
      out.push_back(std::move(cands[i]));
      idx.push_back(w.original_candidate[c][i]);
    }
    cands = std::move(out);
    w.original_candidate[c] = std::move(idx);
  }
}

// Classes every solution needs: the roots and, below a needed class, the
// classes all of its candidates need.
std::vector<std::uint8_t> required_classes(const Work& w) {
  std::vector<std::uint8_t> req(w.classes.size(), 0);
  std::vector<std::uint32_t> stack(w.roots.begin(), w.roots.end());
  while (!stack.empty()) {
    std::uint32_t c = stack.back();
    stack.pop_back();
    if (req[c]) continue;
    req[c] = 1;
    const auto& cands = w.classes[c];
    if (cands.empty()) continue;
    std::vector<std::uint32_t> common = cands[0].kids, next;
    for (std::size_t i = 1; i < cands.size() && !common.empty(); ++i) {
      next.clear();
      std::set_intersection(common.begin(), common.end(), cands[i].kids.begin(), cands[i].kids.end(),
                            std::back_inserter(next));
      common.swap(next);
    }
    for (std::uint32_t k : common) stack.push_back(k);
  }
  return req;
}

// Folds single-candidate classes into their parents where DAG cost allows
// it (see reduce.h). Returns false when nothing was folded.
bool collapse(Work& w, double& fixed_cost, std::vector<std::pair<std::uint32_t, std::int32_t>>& forced) {
  const std::size_t n = w.classes.size();
  std::vector<std::uint8_t> req = required_classes(w), is_root(n, 0);
  for (std::uint32_t r : w.roots) is_root[r] = 1;
  std::vector<std::uint32_t> uses(n, 0), user(n, 0);
  for (std::uint32_t c = 0; c < n; ++c)
    for (const Candidate& cand : w.classes[c])
      for (std::uint32_t k : cand.kids) {
        ++uses[k];
        user[k] = c;
      }
  // What a folded class costs where it goes: nothing, fixed, or moved into
  // the one candidate that uses it.
  enum Kind : std::uint8_t { Kept, Free, Fixed, Moved };
  std::vector<Kind> kind(n, Kept);
  bool any = false;
  for (std::uint32_t c = 0; c < n; ++c) {
    if (w.classes[c].size() != 1) continue;
    double cost = w.classes[c][0].cost;
    if (req[c])
      kind[c] = Fixed;
    else if (cost == 0)
      kind[c] = Free;
    else if (uses[c] == 1 && !is_root[c])
      kind[c] = Moved;
  }
  // A moved cost must land in one place: not under a free class that
  // several candidates use (each would pay it).
  for (std::uint32_t c = 0; c < n; ++c) {
    if (kind[c] == Moved && kind[user[c]] == Free && uses[user[c]] > 1) kind[c] = Kept;
    any = any || kind[c] != Kept;
  }
  if (!any) return false;
  // Per folded class: the kept classes it stands for and the moved cost it
  // carries (memoised DFS; a cycle among folded classes cannot occur after
  // reachable(), and if it did nothing is folded).
  std::vector<std::uint8_t> state(n, 0);  // 1 on the stack, 2 done
  std::vector<std::vector<std::uint32_t>> stands_for(n);
  std::vector<double> carried(n, 0);
  bool cyclic = false;
  auto expand = [&](auto&& self, std::uint32_t c) -> void {
    if (state[c] == 2) return;
    if (state[c] == 1) {
      cyclic = true;
      return;
    }
    state[c] = 1;
    const Candidate& cand = w.classes[c][0];
    double moved = kind[c] == Moved ? cand.cost : 0;
    std::vector<std::uint32_t> set;
    for (std::uint32_t k : cand.kids) {
      if (kind[k] == Kept) {
        set.push_back(k);
        continue;
      }
      self(self, k);
      set.insert(set.end(), stands_for[k].begin(), stands_for[k].end());
      moved += carried[k];
    }
    normalise(set);
    stands_for[c] = std::move(set);
    carried[c] = moved;
    state[c] = 2;
  };
  for (std::uint32_t c = 0; c < n; ++c)
    if (kind[c] != Kept) expand(expand, c);
  if (cyclic) return false;
  for (std::uint32_t c = 0; c < n; ++c) {
    if (kind[c] == Kept) continue;
    forced.emplace_back(w.original_class[c], w.original_candidate[c][0]);
    if (kind[c] == Fixed) fixed_cost += w.classes[c][0].cost;
  }
  std::vector<std::uint8_t> keep(n, 0);
  for (std::uint32_t c = 0; c < n; ++c) {
    if (kind[c] != Kept) continue;
    keep[c] = 1;
    auto& cands = w.classes[c];
    std::vector<Candidate> out;
    std::vector<std::int32_t> idx;
    for (std::size_t i = 0; i < cands.size(); ++i) {
      Candidate cand{cands[i].cost, {}};
      for (std::uint32_t k : cands[i].kids) {
        if (kind[k] == Kept) {
          cand.kids.push_back(k);
          continue;
        }
        cand.kids.insert(cand.kids.end(), stands_for[k].begin(), stands_for[k].end());
        cand.cost += carried[k];
      }
      normalise(cand.kids);
      if (std::binary_search(cand.kids.begin(), cand.kids.end(), c)) continue;  // a cycle through folded classes
      out.push_back(std::move(cand));
      idx.push_back(w.original_candidate[c][i]);
    }
    cands = std::move(out);
    w.original_candidate[c] = std::move(idx);
  }
  std::vector<std::uint32_t> roots;
  for (std::uint32_t r : w.roots) {
    if (kind[r] == Kept)
      roots.push_back(r);
    else
      roots.insert(roots.end(), stands_for[r].begin(), stands_for[r].end());
  }
  normalise(roots);
  w.roots = std::move(roots);
  w = keep_classes(std::move(w), keep);
  return true;
}

// Drops candidates that cost more, with the fixed cost, than a known
// solution: an answer choosing candidate i of c pays at least a path from a
// root down through i (path_bounds: above c, i's own cost, below i's
// deepest kid), each class of it once.
// (`use_paths` false: its own cost alone.)
void drop_bounded(Work& w, double fixed_cost, double upper_bound, bool use_paths) {
  if (!(upper_bound < kInfiniteCost)) return;
  const double limit = upper_bound + 1e-9 * std::max(std::abs(upper_bound), 1e-300);
  const PathBounds paths = use_paths ? path_bounds(w.classes, w.roots) : PathBounds{};
  for (std::size_t c = 0; c < w.classes.size(); ++c) {
    auto& cands = w.classes[c];
    std::vector<Candidate> out;
    std::vector<std::int32_t> idx;
    for (std::size_t i = 0; i < cands.size(); ++i) {
      if (fixed_cost + (use_paths ? paths.through(w.classes, c, i) : cands[i].cost) > limit) continue;
      out.push_back(std::move(cands[i]));
      idx.push_back(w.original_candidate[c][i]);
    }
    cands = std::move(out);
    w.original_candidate[c] = std::move(idx);
  }
}

}  // namespace

std::size_t num_candidates(const Problem& p) {
  std::size_t n = 0;
  for (const auto& c : p.classes) n += c.size();
  return n;
}

Problem condensed(const Problem& p) {
  std::vector<std::uint32_t> comp = class_components(p.classes);
  std::uint32_t num_comps = 0;
  for (std::uint32_t s : comp) num_comps = std::max(num_comps, s + 1);
  Problem out;
  out.classes.resize(num_comps);
  for (std::uint32_t c = 0; c < p.classes.size(); ++c)
    for (const Candidate& cand : p.classes[c]) {
      Candidate mapped{cand.cost, {}};
      bool enters = true;
      for (std::uint32_t k : cand.kids) {
        enters = enters && comp[k] != comp[c];
        mapped.kids.push_back(comp[k]);
      }
      if (!enters) continue;
      normalise(mapped.kids);
      out.classes[comp[c]].push_back(std::move(mapped));
    }
  for (std::uint32_t r : p.roots) out.roots.push_back(comp[r]);
  normalise(out.roots);
  return out;
}

Reduced reduce(const Problem& p, double upper_bound, bool paths) {
  Reduced out;
  Work w;
  w.classes.resize(p.classes.size());
  w.original_candidate.resize(p.classes.size());
  for (std::uint32_t c = 0; c < p.classes.size(); ++c) {
    w.original_class.push_back(c);
    for (std::size_t i = 0; i < p.classes[c].size(); ++i) {
      Candidate cand = p.classes[c][i];
      normalise(cand.kids);
      if (std::binary_search(cand.kids.begin(), cand.kids.end(), c)) continue;  // needs itself
      w.classes[c].push_back(std::move(cand));
      w.original_candidate[c].push_back(static_cast<std::int32_t>(i));
    }
  }
  w.roots = p.roots;
  normalise(w.roots);
  out.steps.push_back({"input", p.classes.size(), num_candidates(p)});
  auto record = [&](const char* name, std::size_t round) {
    if (round == 0) out.steps.push_back({name, w.classes.size(), w.candidates()});
  };
  for (std::size_t round = 0;; ++round) {
    std::size_t classes = w.classes.size(), candidates = w.candidates();
    w = reachable(std::move(w));
    record("reachable", round);
    drop_cyclic(w);
    record("acyclic", round);
    drop_dominated(w);
    record("dominated", round);
    collapse(w, out.fixed_cost, out.forced);
    record("collapsed", round);
    drop_bounded(w, out.fixed_cost, upper_bound, paths);
    record("bounded", round);
    if (w.classes.size() == classes && w.candidates() == candidates) {
      const ReductionStep& last = out.steps.back();
      if (last.classes != w.classes.size() || last.candidates != w.candidates())
        out.steps.push_back({"repeated", w.classes.size(), w.candidates()});
      break;
    }
  }
  out.required = required_classes(w);
  out.problem.classes = std::move(w.classes);
  out.problem.roots = std::move(w.roots);
  out.original_class = std::move(w.original_class);
  out.original_candidate = std::move(w.original_candidate);
  return out;
}

Solution Reduced::expand(const Problem& original, const Solution& reduced) const {
  Solution s{std::vector<std::int32_t>(original.classes.size(), kUnchosen)};
  for (const auto& [c, i] : forced) s.choice[c] = i;
  for (std::size_t c = 0; c < reduced.choice.size(); ++c)
    if (reduced.choice[c] != kUnchosen)
      s.choice[original_class[c]] = original_candidate[c][static_cast<std::size_t>(reduced.choice[c])];
  return prune_unreachable(original, std::move(s));
}

std::optional<Solution> Reduced::restrict(const Problem& original, const Solution& s) const {
  if (s.choice.size() != original.classes.size()) return std::nullopt;
  Solution out{std::vector<std::int32_t>(problem.classes.size(), kUnchosen)};
  for (std::size_t c = 0; c < problem.classes.size(); ++c) {
    const std::int32_t chosen = s.choice[original_class[c]];
    if (chosen == kUnchosen) continue;
    auto it = std::find(original_candidate[c].begin(), original_candidate[c].end(), chosen);
    if (it == original_candidate[c].end()) return std::nullopt;
    out.choice[c] = static_cast<std::int32_t>(it - original_candidate[c].begin());
  }
  out = prune_unreachable(problem, std::move(out));
  if (!check_solution(problem, out).empty()) return std::nullopt;
  return out;
}

}  // namespace refinery::extract
