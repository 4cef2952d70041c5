// Hash mixing used by the hashcons and by language node types. Open
// addressing with linear probing needs well-spread hashes, so every value is
// folded through a multiply-xorshift finaliser.
#pragma once

#include <cstdint>

namespace refinery::egraph {

constexpr std::uint64_t hash_finalize(std::uint64_t x) {
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ULL;
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ULL;
  x ^= x >> 32;
  return x;
}

// Folds `value` into the running hash `seed` (order-sensitive).
constexpr std::uint64_t hash_combine(std::uint64_t seed, std::uint64_t value) {
  return (seed ^ (value + 0x9e3779b97f4a7c15ULL)) * 0xbf58476d1ce4e5b9ULL + (seed >> 29);
}

}  // namespace refinery::egraph
