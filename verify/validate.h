// Whole-graph validation before anything is written (ARCHITECTURE.md,
// decision 7): the original and the refined graph run through the reference
// interpreter on the same seeded random inputs, several samples; the largest
// absolute and relative errors are reported, and when they exceed the
// tolerance the first diverging value is named (intermediate values that
// both graphs share by name are compared, in the refined graph's order).
//
// Two f32 runs of the same function differ by rounding: a model of ~100
// layers whose rewrites change the order of its sums (a conv as a MatMul, a
// sum reassociated) can drift past the f32 tolerance without any change of
// meaning. When the f32 comparison fails, the rounding check runs both graphs
// again in f64 on the samples that failed, and passes them only when
//  (1) their f64 outputs agree within the tolerance scaled by 1e-6 (they are
//      the same real-number function), and
//  (2) for every float output over the f32 tolerance, the refined f32
//      output is no further from the original's f64 output than twice the
//      original's own f32 output is (the refined model is as accurate as the
//      original there).
// Both figures are reported. A mismatch at an opaque op's inputs is final.
//
// A spiking graph is validated by simulation through time (runtime/spiking.h)
// instead: outputs at every step within the tolerance, and the spike trains
// of the layers both graphs name alike identical.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/diag.h"
#include "ir/graph.h"
#include "runtime/interpreter.h"
#include "runtime/spiking.h"

namespace refinery::verify {

struct ValidationOptions {
  int samples = 3;  // seeds seed, seed+1, ...
  std::uint64_t seed = 0;
  double atol = 1e-4, rtol = 1e-3;           // pass: |a - b| <= atol + rtol * |a| everywhere
  std::map<std::string, std::int64_t> dims;  // symbolic dims (default 1)
  // The last of two or more samples draws each symbolic dim of the inputs
  // that `dims` leaves unset at 2, 3, 4, ... (in the order the inputs name
  // them) instead of 1: a softmax over one key, a batch of one or a
  // sequence of one hides what a rewrite does across that axis. Where the
  // original does not run at those sizes, the sample keeps `dims`.
  bool widen_symbolic = true;
  std::int64_t int_high = runtime::kIntHigh;  // integer inputs in [0, int_high)
  bool rounding_check = true;                 // on an f32 failure, tell rounding from meaning in f64
  // Spiking graphs (a stateful op: they run through time) are simulated on
  // seeded random spike trains (each input element fires with probability
  // spike_rate per step); their outputs over every step are compared, and
  // the spike trains of layers both graphs name alike.
  runtime::SimOptions sim;
  double spike_rate = 0.2;
};

// "batch=2, seq=3": symbolic dims as the reports print them.
std::string dims_text(const std::map<std::string, std::int64_t>& dims);

// The f64 tolerance is the f32 one times this.
inline constexpr double kWideToleranceScale = 1e-6;
// The refined f32 output may be this many times as far from the f64
// reference as the original f32 output is.
inline constexpr double kRoundingFactor = 2.0;

// One output of the original over every sample (the f32 comparison).
struct OutputError {
  std::string name;
  double max_abs_error = 0, max_rel_error = 0;  // as ValidationResult's, this output only
  bool within_tolerance = true;                 // |a - b| <= atol + rtol * |a| on every element of every sample
};

// A spiking layer both graphs name alike, over every sample: its spike
// trains are identical or not, and their spike counts.
struct SpikeTrainAgreement {
  std::string layer, op;
  std::int64_t original_spikes = 0, refined_spikes = 0;
  bool identical = true;
};

struct ValidationResult {
  bool passed = false;
  int samples = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;  // |a - b| / |a| over elements with |a| > atol
  std::string worst_output;  // the output where max_abs_error was seen
  // The symbolic dims the last sample ran at, when widened (widen_symbolic);
  // empty otherwise, with the reason in `widen_note` when it was tried.
  std::map<std::string, std::int64_t> widened_dims;
  std::string widen_note;
  // When it failed: the first diverging value, e.g. "value 'x' (node 'y',
  // mul) element 17 of sample 0: original 1.5, refined 1.25".
  std::string first_divergence;
  std::vector<OutputError> outputs;               // per output of the original, in order
  std::vector<SpikeTrainAgreement> spike_trains;  // spiking graphs: per spiking layer both name alike

  // The rounding check (when the f32 comparison failed and it was enabled).
  bool rounding_checked = false;
  bool within_rounding = false;   // it passed: the f32 difference is rounding
  double wide_max_abs_error = 0;  // refined vs original, both in f64
  double original_rounding = 0;   // max |original f32 - original f64|
  double refined_rounding = 0;    // max |refined f32 - original f64|
  std::string rounding_verdict;   // why it passed or failed, one line

  // The class of the result, in the words of rule verification
  // (docs/rules.md): "exact" (no difference on the samples), "rounds
  // differently" (passed), "refuted (special values)" (failed where one
  // graph gives NaN or an infinity and the other does not), "refuted".
  std::string verdict;
};

// Fails (a Diag) when either graph cannot run or their outputs differ in
// number, type or shape; a numeric difference is a result with passed false.
// `refined_exact`, where given, is the refined graph before its constant
// expressions were evaluated into f32 initializers (the same computation):
// the rounding check runs it, not `refined`, in f64, so that a constant's
// rounding to f32 (Wq / sqrt(d) folded into one weight) is not taken for a
// change of meaning. The f32 comparison and the refined f32 output's
// distance from the f64 result are the written graph's.
Expected<ValidationResult> validate(const ir::Graph& original, const ir::Graph& refined,
                                    const ValidationOptions& options = {},
                                    const ir::Graph* refined_exact = nullptr);

}  // namespace refinery::verify
