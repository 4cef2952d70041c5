// Saturation that survives real models: a schedule of egraph::Runner phases
// over a compiled rule set. Multi-pattern and permuting (associative /
// commutative) rules blow e-graphs up, so the default schedule runs in
// phases (docs/optimize.md), chosen by each rule's kind (rules::RuleKind):
//   1. simplify: the Simplify rules, to saturation or their share of the time;
//   2. explore: every rule, Merge rules (multi-patterns) only in the first
//      few iterations of the phase, Permute and Explore rules under a tight
//      backoff threshold;
//   3. cleanup: the Simplify rules again on what exploring added.
// `Flat` runs every rule together under egg's backoff scheduler, for
// comparison.
#pragma once

#include <cstddef>
#include <span>

#include "egraph/runner.h"
#include "egraph/tensor/analysis.h"
#include "ir/progress.h"
#include "optimize/report.h"
#include "rules/rules.h"

namespace refinery::optimize {

using egraph::tensor::TensorEGraph;
using TensorRunner = egraph::Runner<egraph::tensor::TensorNode, egraph::tensor::TensorAnalysis>;
using rules::TensorRewrite;

enum class Strategy { Phased, Flat };
std::string_view to_string(Strategy strategy);  // "phased", "flat"

struct SaturationOptions {
  Strategy strategy = Strategy::Phased;
  double time_limit_s = 5;
  std::size_t node_limit = 20'000;
  std::size_t iter_limit = 30;             // per phase
  std::size_t multi_iter_limit = 2;        // explore-phase iterations that run Merge rules
  std::size_t permuting_match_limit = 64;  // backoff threshold of Permute and Explore rules when exploring
  // Threads that search the rules of an iteration (egraph::Runner::set_threads):
  // the e-graph after each iteration is the same whatever the count.
  std::size_t threads = 1;
};

// Runs the schedule on the runner's e-graph. `kinds` is parallel to `rules`.
// `progress` hears of each iteration as it starts ("saturate <phase>",
// iteration and e-graph nodes).
SaturationRecord saturate(TensorRunner& runner, std::span<const TensorRewrite> rules,
                          std::span<const rules::RuleKind> kinds, const SaturationOptions& options,
                          const ProgressFn& progress = {});

}  // namespace refinery::optimize
