// Hash mixing used by the hashcons and by language node types. Open
// addressing with linear probing needs well-spread hashes, so every value is
// folded through a multiply-xorshift finaliser (hash_combine, then
// hash_finalize: also the mixing of stable fingerprints, e.g. discovery's
// and the tensor context's), or through hash_mix, which is cheaper.
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

// A node of two words hashed in one step: a 64x64->128-bit multiply whose
// halves are folded together (wyhash's "mum"), so every bit of the result
// depends on every bit of both words; about 5 instructions against about 30
// for combine-combine-finalize. For a hashcons key, which is hashed once or
// twice per node added (docs/egraph.md, "Performance").
constexpr std::uint64_t hash_mix(std::uint64_t a, std::uint64_t b) {
  __extension__ using Wide = unsigned __int128;
  Wide p = static_cast<Wide>(a ^ 0xa0761d6478bd642fULL) * static_cast<Wide>(b ^ 0xe7037ed1a0b428dbULL);
  return static_cast<std::uint64_t>(p) ^ static_cast<std::uint64_t>(p >> 64);
}

}  // namespace refinery::egraph
