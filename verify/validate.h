// Whole-graph validation before anything is written (ARCHITECTURE.md,
// decision 7): the original and the refined graph run through the reference
// interpreter on the same seeded random inputs, several samples; the largest
// absolute and relative errors are reported, and when they pass the
// tolerance the first diverging value is named (intermediate values that
// both graphs share by name are compared, in the refined graph's order).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ir/diag.h"
#include "ir/graph.h"

namespace refinery::verify {

struct ValidationOptions {
  int samples = 3;                        // seeds seed, seed+1, ...
  std::uint64_t seed = 0;
  double atol = 1e-4, rtol = 1e-3;        // pass: |a - b| <= atol + rtol * |a| everywhere
  std::map<std::string, std::int64_t> dims;  // symbolic dims (default 1)
  std::int64_t int_high = 10;             // integer inputs in [0, int_high)
};

struct ValidationResult {
  bool passed = false;
  int samples = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;   // |a - b| / |a| over elements with |a| > atol
  std::string worst_output;   // the output where max_abs_error was seen
  // When it failed: the first diverging value, e.g. "value 'x' (node 'y',
  // mul) element 17 of sample 0: original 1.5, refined 1.25".
  std::string first_divergence;
};

// Fails (a Diag) when either graph cannot run or their outputs differ in
// number, type or shape; a numeric difference is a result with passed false.
Expected<ValidationResult> validate(const ir::Graph& original, const ir::Graph& refined,
                                    const ValidationOptions& options = {});

}  // namespace refinery::verify
