// Internal to prove/: the numeric cross-check of one instance of a rule:
// both sides run in the interpreter (runtime/) on the same random inputs,
// drawn to meet the rule's value conditions. A rule that Z3 proves but the
// numbers refute means the two semantics disagree (ARCHITECTURE.md,
// decision 7).
#pragma once

#include <cstdint>
#include <string>

#include "prove/instance.h"

namespace refinery::prove {

// Empty when the sides agree (to 1e-4 + 1e-3 |x|); else where they differ.
// `skipped` is set, with the reason returned, when a side does not run.
std::string numeric_check(const Instance& inst, uint64_t seed, bool& skipped);

}  // namespace refinery::prove
