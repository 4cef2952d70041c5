// The windows' move of the ILP extractor (ilp.h, improve_by_windows): a
// large-neighbourhood search whose move is the ILP of a window of the answer.
#include <algorithm>
#include <string>

#include "extract/ilp.h"

namespace refinery::extract {

namespace {

// The classes of an acyclic answer, kids before their users (depth-first
// from the roots in order, each candidate's kids in order).
std::vector<std::uint32_t> answer_order(const Problem& q, const Solution& s) {
  std::vector<std::uint32_t> order;
  std::vector<std::uint8_t> state(q.classes.size(), 0);  // 1: on the stack, 2: placed
  std::vector<std::pair<std::uint32_t, std::size_t>> stack;
  for (std::uint32_t root : q.roots) {
    if (state[root] != 0 || s.choice[root] == kUnchosen) continue;
    stack.push_back({root, 0});
    state[root] = 1;
    while (!stack.empty()) {
      auto& [c, next] = stack.back();
      const auto& kids = q.classes[c][static_cast<std::size_t>(s.choice[c])].kids;
      if (next < kids.size()) {
        std::uint32_t k = kids[next++];
        if (state[k] == 0) {
          state[k] = 1;
          stack.push_back({k, 0});
        }
        continue;
      }
      state[c] = 2;
      order.push_back(c);
      stack.pop_back();
    }
  }
  return order;
}

// The windows' first classes (positions in `order`, `stride` apart), the
// ones where the answer pulls furthest from its path bound first. The
// answer's cost of a class c (its chosen sub-graph, each class once) is at
// least below[c] (problem.h, path_bounds); of their difference (what the
// answer pays at c beyond the bound), c's own part is what exceeds the
// largest of its chosen kids'. A window's pull is its classes' own parts,
// summed; ties (and no bounds) keep the topological order.
std::vector<std::size_t> window_starts(const Problem& q, const Solution& s, const std::vector<std::uint32_t>& order,
                                       const std::vector<double>& below, const WindowOptions& options) {
  std::vector<std::size_t> starts;
  for (std::size_t at = 0; at < order.size(); at += options.stride) starts.push_back(at);
  if (below.size() != q.classes.size()) return starts;
  const std::size_t n = order.size(), words = (n + 63) / 64;
  std::vector<std::uint32_t> position(q.classes.size(), UINT32_MAX);
  for (std::size_t i = 0; i < n; ++i) position[order[i]] = static_cast<std::uint32_t>(i);
  std::vector<std::uint64_t> reach(n * words, 0);  // per position, the positions its sub-graph holds
  std::vector<double> excess(n, 0), own(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const Candidate& cand = q.classes[order[i]][static_cast<std::size_t>(s.choice[order[i]])];
    std::uint64_t* row = reach.data() + i * words;
    row[i / 64] |= std::uint64_t{1} << (i % 64);
    double kids_excess = 0;
    for (std::uint32_t k : cand.kids) {
      const std::uint64_t* kid = reach.data() + std::size_t{position[k]} * words;
      for (std::size_t w = 0; w < words; ++w) row[w] |= kid[w];
      kids_excess = std::max(kids_excess, excess[position[k]]);
    }
    double cost = 0;
    for (std::size_t j = 0; j < n; ++j)
      if ((row[j / 64] >> (j % 64)) & 1) cost += q.classes[order[j]][static_cast<std::size_t>(s.choice[order[j]])].cost;
    excess[i] = std::max(0.0, cost - below[order[i]]);
    own[i] = std::max(0.0, excess[i] - kids_excess);
  }
  std::vector<double> pull(starts.size(), 0);
  for (std::size_t w = 0; w < starts.size(); ++w)
    for (std::size_t i = starts[w]; i < std::min(n, starts[w] + options.answer_classes); ++i) pull[w] += own[i];
  std::vector<std::size_t> rank(starts.size());
  for (std::size_t w = 0; w < rank.size(); ++w) rank[w] = w;
  std::stable_sort(rank.begin(), rank.end(), [&](std::size_t a, std::size_t b) { return pull[a] > pull[b]; });
  std::vector<std::size_t> sorted;
  for (std::size_t w : rank) sorted.push_back(starts[w]);
  return sorted;
}

// A window's problem: the free classes with every candidate whose kids are
// in it, the rest of the answer with its chosen candidate alone.
struct Window {
  Problem problem;
  std::vector<std::uint32_t> class_of;               // window class -> q's class
  std::vector<std::vector<std::int32_t>> candidate;  // window candidate -> q's candidate
  Solution start;                                    // the answer, in the window's problem
};

Window make_window(const Problem& q, const Solution& answer, const std::vector<std::uint32_t>& order, std::size_t at,
                   const WindowOptions& options) {
  const std::size_t n = q.classes.size();
  std::vector<std::uint8_t> freed(n, 0), top(n, 0);
  std::vector<std::uint32_t> free_classes;
  for (std::size_t i = at; i < std::min(order.size(), at + options.answer_classes); ++i) {
    top[order[i]] = 1;
    freed[order[i]] = 1;
    free_classes.push_back(order[i]);
  }
  // The classes outside the answer the window reaches, breadth first, up
  // to the limit; a class of the answer outside the window stops the search.
  for (std::size_t next = 0; next < free_classes.size(); ++next)
    for (const Candidate& cand : q.classes[free_classes[next]])
      for (std::uint32_t k : cand.kids) {
        if (freed[k] || (answer.choice[k] != kUnchosen && !top[k])) continue;
        if (free_classes.size() >= options.max_classes) break;
        freed[k] = 1;
        free_classes.push_back(k);
      }
  Window w;
  std::vector<std::uint32_t> index(n, UINT32_MAX);
  for (std::uint32_t c = 0; c < n; ++c)
    if (freed[c] || answer.choice[c] != kUnchosen) {
      index[c] = static_cast<std::uint32_t>(w.class_of.size());
      w.class_of.push_back(c);
    }
  w.problem.classes.resize(w.class_of.size());
  w.candidate.resize(w.class_of.size());
  w.start.choice.assign(w.class_of.size(), kUnchosen);
  for (std::uint32_t wc = 0; wc < w.class_of.size(); ++wc) {
    const std::uint32_t c = w.class_of[wc];
    for (std::size_t i = 0; i < q.classes[c].size(); ++i) {
      const bool chosen = answer.choice[c] == static_cast<std::int32_t>(i);
      if (!freed[c] && !chosen) continue;
      const Candidate& cand = q.classes[c][i];
      if (!std::all_of(cand.kids.begin(), cand.kids.end(), [&](std::uint32_t k) { return index[k] != UINT32_MAX; }))
        continue;
      Candidate mapped{cand.cost, {}};
      for (std::uint32_t k : cand.kids) mapped.kids.push_back(index[k]);
      if (chosen) w.start.choice[wc] = static_cast<std::int32_t>(w.problem.classes[wc].size());
      w.problem.classes[wc].push_back(std::move(mapped));
      w.candidate[wc].push_back(static_cast<std::int32_t>(i));
    }
  }
  for (std::uint32_t root : q.roots) w.problem.roots.push_back(index[root]);
  return w;
}

}  // namespace

Solution improve_by_windows(const Problem& q, Solution incumbent, const IlpOptions& options,
                            const std::function<bool()>& out_of_time, const std::vector<double>& below) {
  const WindowOptions& limits = options.windows;
  if (limits.answer_classes == 0 || limits.stride == 0 || !check_solution(q, incumbent).empty()) return incumbent;
  IlpOptions inner = options;
  inner.windows.share = 0;
  inner.condensed_share = 0;
  inner.time_limit_s = limits.seconds;
  inner.cbc_parameters.emplace_back("maxNodes", std::to_string(limits.max_nodes));
  // CBC's cuts off: a window is small, the start is in hand, and with them
  // one root node took the whole guard (0.3 s) on the resnets' windows; without
  // them CBC ends on its node limit or proves its optimum (docs/optimize.md).
  inner.cbc_parameters.emplace_back("cuts", "off");
  double cost = dag_cost(q, incumbent);
  std::vector<std::uint32_t> order = answer_order(q, incumbent);
  std::vector<std::size_t> starts = window_starts(q, incumbent, order, below, limits);
  for (std::size_t pass = 0; pass < limits.passes; ++pass) {
    bool improved = false;
    for (std::size_t tried = 0; tried < starts.size(); ++tried) {
      if (out_of_time()) return incumbent;
      Window w = make_window(q, incumbent, order, starts[tried], limits);
      IlpResult r = extract_ilp(w.problem, inner, w.start);
      if (!(r.cost < cost * (1 - 1e-9))) continue;
      Solution next{std::vector<std::int32_t>(q.classes.size(), kUnchosen)};
      for (std::size_t wc = 0; wc < w.class_of.size(); ++wc)
        if (r.solution.choice[wc] != kUnchosen)
          next.choice[w.class_of[wc]] = w.candidate[wc][static_cast<std::size_t>(r.solution.choice[wc])];
      next = prune_unreachable(q, std::move(next));
      if (!check_solution(q, next).empty()) continue;
      const double next_cost = dag_cost(q, next);
      if (!(next_cost < cost * (1 - 1e-9))) continue;
      incumbent = std::move(next);
      cost = next_cost;
      order = answer_order(q, incumbent);
      starts = window_starts(q, incumbent, order, below, limits);
      improved = true;
    }
    if (!improved) break;
  }
  return incumbent;
}

}  // namespace refinery::extract
