// Substitutions and match buffers. A search writes all its matches into one
// flat buffer (root class + one id per rule variable), so the matcher's hot
// loop never allocates per match.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "egraph/id.h"

namespace refinery::egraph {

// Variable -> e-class, for one match. Indexed by the rule's Var numbers.
struct Subst {
  std::span<const Id> ids;
  Id operator[](Var v) const { return ids[index(v)]; }
  std::size_t size() const { return ids.size(); }
};

// A std::allocator whose resize() leaves new elements uninitialised (a
// value given is still copied in): the matcher grows the match buffers and
// writes every element after, so zero-filling them first is wasted (it was
// 2% of a saturating run's instructions).
template <class T>
struct NoInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = NoInitAllocator<U>;
  };
  NoInitAllocator() = default;
  template <class U>
  NoInitAllocator(const NoInitAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

using IdBuffer = std::vector<Id, NoInitAllocator<Id>>;

struct SearchMatches {
  std::uint32_t num_vars = 0;
  IdBuffer roots;   // per match: the class the (first) pattern matched
  IdBuffer substs;  // per match: num_vars ids

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
