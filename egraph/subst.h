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
#include <unordered_set>
#include <utility>
#include <vector>

#include "egraph/hash.h"
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
  // Drops every match equal to an earlier one (root and subst), keeping the
  // order of the rest; returns how many went. The search finds a match once
  // per way the pattern's nodes can be taken, so a pattern whose sub-terms a
  // class holds in several forms with the same children (attributes the
  // pattern leaves open) finds one match many times over.
  std::size_t drop_repeats() {
    const std::size_t n = size(), w = num_vars;
    if (n < 2) return 0;
    auto key = [&](std::size_t i) { return std::span<const Id>(substs).subspan(i * w, w); };
    auto hash = [&](std::size_t i) {
      std::uint64_t h = index(roots[i]);
      for (Id id : key(i)) h = hash_combine(h, index(id));
      return static_cast<std::size_t>(hash_finalize(h));
    };
    auto equal = [&](std::size_t a, std::size_t b) {
      return roots[a] == roots[b] && std::ranges::equal(key(a), key(b));
    };
    std::vector<bool> first(n);
    {
      std::unordered_set<std::size_t, decltype(hash), decltype(equal)> seen(2 * n, hash, equal);
      for (std::size_t i = 0; i < n; ++i) first[i] = seen.insert(i).second;
    }
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (!first[i]) continue;
      if (kept != i) {
        roots[kept] = roots[i];
        std::copy_n(substs.begin() + static_cast<std::ptrdiff_t>(i * w), w,
                    substs.begin() + static_cast<std::ptrdiff_t>(kept * w));
      }
      ++kept;
    }
    roots.resize(kept);
    substs.resize(kept * w);
    return n - kept;
  }
};

}  // namespace refinery::egraph
