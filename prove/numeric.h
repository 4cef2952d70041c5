// Internal to prove/: the interpreter's side of verification. The numeric
// cross-check of one instance of a rule (both sides run in runtime/ on the
// same random inputs, drawn to meet the rule's value conditions: a rule
// that Z3 proves but the numbers refute means the two semantics disagree,
// ARCHITECTURE.md, decision 7), and the replay of a solver's counterexample
// (issue #17: a counterexample is printed with the interpreter's values, and
// a model that does not replay is no refutation).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/tensor.h"
#include "prove/instance.h"

namespace refinery::prove {

// Empty when the sides agree (to 1e-4 + 1e-3 |x|); else where they differ.
// `skipped` is set, with the reason returned, when a side does not run.
// `drawn`, when given, receives the inputs drawn (one vector per input).
std::string numeric_check(const Instance& inst, uint64_t seed, bool& skipped,
                          std::vector<std::vector<double>>* drawn = nullptr);

// Both sides of an instance run in the interpreter at given inputs (one
// vector of element values per input, in the instance's order).
struct Replay {
  std::vector<std::vector<double>> inputs;
  std::vector<ir::Tensor> lhs, rhs;  // one per output
  std::string error;                 // a side did not run
  bool ran() const { return error.empty(); }
  // Wide: in f64 (over the reals, up to f64 rounding); else in f32.
  bool wide = false;
  // "?x = [..]", "lhs = [..]", "rhs = [..]": the interpreter's values.
  std::string describe(const Instance& inst) const;
};
Replay replay(const Instance& inst, std::vector<std::vector<double>> inputs, bool wide);
// "NAME = [[..], ..]": values as nested lists, `digits` significant digits
// (NaN as nan).
std::string show_values(const std::string& name, const std::vector<int64_t>& shape, const std::vector<double>& v,
                        int digits = 6);

// Over the reals (a wide replay): some output element differs by more than
// f64 rounding, both sides finite there. `overflow` is set when a side is
// NaN or infinite in f64 (the model's values are too large to replay).
bool differs_over_reals(const Replay& r, bool& overflow);
// In binary32 (an f32 replay): some output element is of another class
// (NaN, +inf, -inf, finite) on the two sides.
bool differs_in_class(const Replay& r);
// In binary32: some output element is not the same value (NaN equal to NaN,
// -0 not +0).
bool differs_in_bits(const Replay& r);

}  // namespace refinery::prove
