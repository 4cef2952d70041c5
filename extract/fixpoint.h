// The least fixpoint of a bound over the classes of an extraction problem
// (Knuth's generalisation of Dijkstra) and what it reads: who uses each
// class. The path bounds (extract/problem.cpp, components_round.cpp) run
// it on the whole problem and on regions of it. Internal to extract/ (docs/optimize.md, "Path bounds").
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "extract/problem.h"

namespace refinery::extract::detail {

// Who reads each class, how many distinct kids each candidate has, and
// where each class's candidates start in one list of all candidates
// (first[c] + i, first[n] of them): built once per path_bounds call, read
// by every search.
struct Links {
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> users;  // kid -> (class, candidate)
  std::vector<std::vector<std::uint32_t>> distinct;                         // class -> candidate -> distinct kids
  std::vector<std::size_t> first;                                           // class -> its first candidate's place
  std::size_t edges = 0;
  explicit Links(const std::vector<std::vector<Candidate>>& classes)
      : users(classes.size()), distinct(classes.size()), first(classes.size() + 1, 0) {
    for (std::uint32_t c = 0; c < classes.size(); ++c) first[c + 1] = first[c] + classes[c].size();
    for (std::uint32_t c = 0; c < classes.size(); ++c)
      for (std::uint32_t i = 0; i < classes[c].size(); ++i) {
        std::vector<std::uint32_t> kids = classes[c][i].kids;
        std::sort(kids.begin(), kids.end());
        kids.erase(std::unique(kids.begin(), kids.end()), kids.end());
        for (std::uint32_t k : kids) users[k].push_back({c, i});
        distinct[c].push_back(static_cast<std::uint32_t>(kids.size()));
        edges += kids.size();
      }
  }
};

// Walks over the class graph for the searches: extend() adds to `list`
// every class below its classes from `start` on (through candidates' kids;
// above them, through their users, where !down) that `keep` admits, and
// counts in `work` (where given) the classes and edges it visits.
class Walk {
 public:
  Walk(const std::vector<std::vector<Candidate>>& classes, const Links& links)
      : classes_(classes), links_(links), listed_(classes.size(), 0) {}
  template <class Keep>
  void extend(std::vector<std::uint32_t>& list, bool down, Keep keep, std::size_t start = 0,
              std::size_t* work = nullptr) {
    for (std::uint32_t c : list) listed_[c] = 1;
    auto visit = [&](std::uint32_t x) {
      if (work != nullptr) ++*work;
      if (listed_[x] || !keep(x)) return;
      listed_[x] = 1;
      list.push_back(x);
    };
    for (std::size_t j = start; j < list.size(); ++j) {
      if (work != nullptr) ++*work;
      if (down) {
        for (const Candidate& cand : classes_[list[j]])
          for (std::uint32_t k : cand.kids) visit(k);
      } else {
        for (auto [p, i] : links_.users[list[j]]) visit(p);
      }
    }
    for (std::uint32_t c : list) listed_[c] = 0;
  }

 private:
  const std::vector<std::vector<Candidate>>& classes_;
  const Links& links_;
  std::vector<std::uint8_t> listed_;  // all 0 between calls
};

// The least fixpoint of b(c) = min(cap(c), min over c's candidates i of
// value(c, i, b)) where value is superior (at least the b of each kid;
// evaluated once all of i's kids are final), by Knuth's generalisation of
// Dijkstra: classes become final in increasing order, and a class no
// finite derivation computes (and no cap) stays infinite. Only the classes
// of `among` (closed under kids) are computed, into s.b (the rest of s.b
// infinite); `cap` (none: infinite everywhere) bounds each from above.
// `work` counts the classes and edges visited.
struct Fixpoint {
  std::vector<double> b;
  std::vector<std::vector<std::uint32_t>> waiting;  // distinct kids not yet final, per candidate
  std::vector<std::uint8_t> in, final;
  explicit Fixpoint(std::size_t n) : b(n, kInfiniteCost), waiting(n), in(n, 0), final(n, 0) {}
  void clear(const std::vector<std::uint32_t>& among) {
    for (std::uint32_t c : among) {
      b[c] = kInfiniteCost;
      waiting[c].clear();
      in[c] = final[c] = 0;
    }
  }
};

template <class Value>
void least_fixpoint(const std::vector<std::vector<Candidate>>& classes, const Links& links,
                    const std::vector<std::uint32_t>& among, const std::vector<double>* cap, std::size_t& work,
                    Value value, Fixpoint& s) {
  using Entry = std::pair<double, std::uint32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  for (std::uint32_t c : among) s.in[c] = 1;
  for (std::uint32_t c : among) {
    ++work;
    if (cap != nullptr && (*cap)[c] < s.b[c]) {
      s.b[c] = (*cap)[c];
      queue.push({s.b[c], c});
      if (s.b[c] <= 0) continue;  // nothing computes it for less
    }
    s.waiting[c] = links.distinct[c];
    for (std::uint32_t i = 0; i < classes[c].size(); ++i) {
      if (s.waiting[c][i] == 0 && classes[c][i].cost < s.b[c]) {
        s.b[c] = classes[c][i].cost;
        queue.push({s.b[c], c});
      }
    }
  }
  while (!queue.empty()) {
    auto [v, k] = queue.top();
    queue.pop();
    if (s.final[k] || v > s.b[k]) continue;
    s.final[k] = 1;
    for (auto [c, i] : links.users[k]) {
      ++work;
      if (!s.in[c] || s.final[c] || s.waiting[c].empty() || --s.waiting[c][i] > 0) continue;
      double candidate = value(c, i, s.b);
      if (candidate < s.b[c]) {
        s.b[c] = candidate;
        queue.push({candidate, c});
      }
    }
  }
}

// least_fixpoint on `region` with `seed` as its caps, class k's bound; then
// `s`, `seed` and `in_region` are as they were on `region` (infinite, 0).
template <class Value>
double region_bound(const std::vector<std::vector<Candidate>>& classes, const Links& links,
                    const std::vector<std::uint32_t>& region, std::vector<double>& seed, std::size_t& work,
                    Value value, Fixpoint& s, std::vector<std::uint8_t>& in_region, std::uint32_t k) {
  least_fixpoint(classes, links, region, &seed, work, value, s);
  const double bound = s.b[k];
  s.clear(region);
  for (std::uint32_t x : region) {
    seed[x] = kInfiniteCost;
    in_region[x] = 0;
  }
  return bound;
}

}  // namespace refinery::extract::detail
