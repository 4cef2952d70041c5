// A fingerprint of a runner's e-graph id for id (every class id with its
// nodes, and how many ids were made) and of its last iteration's matches and
// applications per rule: two runs that must build the same e-graph step by
// step compare these at the start of every iteration.
#pragma once

#include <cstdint>

#include "egraph/hash.h"
#include "egraph/id.h"
#include "egraph/runner.h"

namespace refinery::egraph {

template <class R>
std::uint64_t runner_fingerprint(const R& r) {
  const auto& g = r.egraph;
  std::uint64_t h = hash_mix(g.num_ids(), g.num_nodes());
  for (Id c : g.class_ids()) {
    h = hash_mix(h, index(c));
    for (const auto& n : g[c].nodes) h = hash_mix(h, n.hash());
  }
  if (!r.iterations.empty())
    for (const auto& rule : r.iterations.back().rules) h = hash_mix(h, hash_mix(rule.matches, rule.applied));
  return h;
}

}  // namespace refinery::egraph
