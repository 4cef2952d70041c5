// Substitutions and match buffers. A search writes all its matches into one
// flat buffer (root class + one id per rule variable), so the matcher's hot
// loop never allocates per match.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "egraph/id.h"

namespace refinery::egraph {

// Variable -> e-class, for one match. Indexed by the rule's Var numbers.
struct Subst {
  std::span<const Id> ids;
  Id operator[](Var v) const { return ids[index(v)]; }
  std::size_t size() const { return ids.size(); }
};

struct SearchMatches {
  std::uint32_t num_vars = 0;
  std::vector<Id> roots;   // per match: the class the (first) pattern matched
  std::vector<Id> substs;  // per match: num_vars ids

  std::size_t size() const { return roots.size(); }
  bool empty() const { return roots.empty(); }
  Subst subst(std::size_t i) const { return Subst{std::span<const Id>(substs).subspan(i * num_vars, num_vars)}; }
  void reset(std::uint32_t vars) {
    num_vars = vars;
    roots.clear();
    substs.clear();
  }
  // Appends `other`'s matches (same num_vars), at most up to `limit` in all.
  void append(const SearchMatches& other, std::size_t limit) {
    std::size_t take = std::min(other.size(), limit > size() ? limit - size() : 0);
    roots.insert(roots.end(), other.roots.begin(), other.roots.begin() + static_cast<std::ptrdiff_t>(take));
    substs.insert(substs.end(), other.substs.begin(),
                  other.substs.begin() + static_cast<std::ptrdiff_t>(take * num_vars));
  }
  std::size_t memory_bytes() const { return (roots.capacity() + substs.capacity()) * sizeof(Id); }
};

}  // namespace refinery::egraph
