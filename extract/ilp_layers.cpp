// The layers' bound of the ILP extractor (ilp.h, layers_bound): the costs
// split at the classes every answer computes, each layer solved on its own.
#include <algorithm>
#include <bit>

#include "extract/ilp.h"

namespace refinery::extract {

namespace {

// The chain the layers are cut at: the classes the roots require
// (requirements labelled by class) that are bottlenecks among them, every
// other required class either required by it or requiring it (a block's
// output, not one of its two branches: cut at a branch, the transform both
// branches read would be paid by neither layer). Bottlenecks are totally
// ordered by requirement: fewest requirements first, each requires the
// one before.
std::vector<std::uint32_t> required_chain(const Problem& q) {
  const std::size_t n = q.classes.size();
  const Requirements req = class_requirements(q.classes);
  std::vector<std::uint64_t> required(req.words, 0);
  for (std::uint32_t root : q.roots)
    for (std::size_t w = 0; w < req.words; ++w) required[w] |= req.of(root)[w];
  std::vector<std::uint32_t> all;
  for (std::uint32_t c = 0; c < n; ++c)
    if ((required[c / 64] >> (c % 64)) & 1) all.push_back(c);
  std::vector<std::pair<std::size_t, std::uint32_t>> chain_by_count;  // (requirements among `all`, class)
  for (std::uint32_t c : all) {
    std::size_t below = 0, above = 0;  // required classes c requires (itself among them), and that require c
    for (std::size_t w = 0; w < req.words; ++w)
      below += static_cast<std::size_t>(std::popcount(req.of(c)[w] & required[w]));
    for (std::uint32_t d : all) above += d != c && req.has(d, c);
    if (below + above == all.size()) chain_by_count.emplace_back(below, c);
  }
  std::sort(chain_by_count.begin(), chain_by_count.end());
  std::vector<std::uint32_t> chain;
  for (const auto& [count, c] : chain_by_count) chain.push_back(c);
  return chain;
}

// layer[c]: the first class of the chain whose reach holds c
// (chain.size(): the roots' layer, what none reaches); each search stops at
// the classes an earlier one took. A class's kids are in its layer or an
// earlier one (a reach is closed), whatever the chain; the chain's order
// makes the reaches nested, so each layer is what its class adds.
std::vector<std::uint32_t> layers_of(const Problem& q, const std::vector<std::uint32_t>& chain) {
  const auto outside = static_cast<std::uint32_t>(chain.size());
  std::vector<std::uint32_t> layer(q.classes.size(), outside), stack;
  for (std::uint32_t i = 0; i < chain.size(); ++i) {
    if (layer[chain[i]] != outside) continue;  // in an earlier one's reach: no layer of its own
    stack.push_back(chain[i]);
    layer[chain[i]] = i;
    while (!stack.empty()) {
      std::uint32_t c = stack.back();
      stack.pop_back();
      for (const Candidate& cand : q.classes[c])
        for (std::uint32_t k : cand.kids)
          if (layer[k] == outside) {
            layer[k] = i;
            stack.push_back(k);
          }
    }
  }
  return layer;
}

}  // namespace

LayersBound layers_bound(const Problem& q, const IlpOptions& options, const std::function<double()>& seconds_left) {
  LayersBound out;
  const std::size_t n = q.classes.size();
  const std::vector<std::uint32_t> chain = required_chain(q);
  const std::vector<std::uint32_t> layer = layers_of(q, chain);
  const auto outside = static_cast<std::uint32_t>(chain.size());
  std::vector<std::vector<std::uint32_t>> members(chain.size() + 1);
  for (std::uint32_t c = 0; c < n; ++c) members[layer[c]].push_back(c);
  // A layer's problem: its classes, and the classes of earlier layers its
  // candidates need as free leaves (any class of an earlier layer is
  // computed there at no cost to this one, by computations that cannot
  // reach back: an earlier layer's reach is closed).
  std::vector<std::size_t> to_solve;
  for (std::size_t i = 0; i < members.size(); ++i) {
    bool costs = false;
    for (std::uint32_t c : members[i])
      for (const Candidate& cand : q.classes[c]) costs = costs || cand.cost > 0;
    if (costs) to_solve.push_back(i);
  }
  out.layers = to_solve.size();
  // One layer is the whole problem again: nothing to gain.
  if (to_solve.size() < 2) return out;
  IlpOptions inner = options;
  inner.windows.share = 0;
  inner.layers_share = 0;
  std::vector<std::uint32_t> index(n, UINT32_MAX);
  for (std::size_t t = 0; t < to_solve.size(); ++t) {
    const double left = seconds_left();
    if (left <= 0) return out;  // the layers not solved count 0: still a bound
    const std::size_t i = to_solve[t];
    Problem part;
    std::vector<std::uint32_t> used;
    auto add = [&](std::uint32_t c) {
      if (index[c] == UINT32_MAX) {
        index[c] = static_cast<std::uint32_t>(used.size());
        used.push_back(c);
      }
      return index[c];
    };
    for (std::uint32_t c : members[i]) add(c);
    part.classes.resize(members[i].size());
    for (std::uint32_t c : members[i])
      for (const Candidate& cand : q.classes[c]) {
        Candidate mapped{cand.cost, {}};
        for (std::uint32_t k : cand.kids) mapped.kids.push_back(add(k));
        part.classes[index[c]].push_back(std::move(mapped));
      }
    part.classes.resize(used.size());
    for (std::size_t j = members[i].size(); j < used.size(); ++j) part.classes[j].push_back(Candidate{0, {}});
    if (i < chain.size())
      part.roots.push_back(index[chain[i]]);
    else
      for (std::uint32_t root : q.roots)
        if (layer[root] == outside) part.roots.push_back(index[root]);
    for (std::uint32_t c : used) index[c] = UINT32_MAX;
    inner.time_limit_s = std::max(0.05, left / static_cast<double>(to_solve.size() - t));
    IlpResult r = extract_ilp(part, inner);
    out.bound += r.bound;
    ++out.solved;
    if (r.status == IlpStatus::Optimal) ++out.optimal;
  }
  return out;
}

}  // namespace refinery::extract
