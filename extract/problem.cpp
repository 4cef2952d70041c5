#include "extract/problem.h"

#include <fmt/format.h>

#include <algorithm>

namespace refinery::extract {

double dag_cost(const Problem& p, const Solution& s) {
  double total = 0;
  for (std::size_t c = 0; c < p.classes.size(); ++c)
    if (s.choice[c] != kUnchosen) total += p.classes[c][static_cast<std::size_t>(s.choice[c])].cost;
  return total;
}

std::optional<std::vector<std::uint32_t>> find_cycle(const Problem& p, const Solution& s) {
  // Iterative DFS; colour 1 = on the stack, 2 = done.
  std::vector<std::uint8_t> colour(p.classes.size(), 0);
  std::vector<std::pair<std::uint32_t, std::size_t>> stack;
  for (std::uint32_t root : p.roots) {
    if (colour[root] || s.choice[root] == kUnchosen) continue;
    stack.push_back({root, 0});
    colour[root] = 1;
    while (!stack.empty()) {
      auto& [c, next] = stack.back();
      const auto& kids = p.classes[c][static_cast<std::size_t>(s.choice[c])].kids;
      if (next == kids.size()) {
        colour[c] = 2;
        stack.pop_back();
        continue;
      }
      std::uint32_t k = kids[next++];
      if (s.choice[k] == kUnchosen) continue;  // check_solution reports it
      if (colour[k] == 1) {
        std::vector<std::uint32_t> cycle{k};
        auto it = std::find_if(stack.begin(), stack.end(), [&](const auto& f) { return f.first == k; });
        for (++it; it != stack.end(); ++it) cycle.push_back(it->first);
        cycle.push_back(k);
        return cycle;
      }
      if (colour[k] == 0) {
        colour[k] = 1;
        stack.push_back({k, 0});
      }
    }
  }
  return std::nullopt;
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

}  // namespace refinery::extract
