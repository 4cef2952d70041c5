// The optimisation pipeline (ARCHITECTURE.md's data flow, end to end): seed
// the e-graph, saturate with a rule set, extract for a target, rebuild the
// graph and fold constant expressions, keep the original unless the result
// is cheaper (never worse), validate numerically. Each stage returns its
// record and the report (optimize/report.h) holds them.
#pragma once

#include <optional>

#include "extract/problem.h"
#include "ir/diag.h"
#include "ir/graph.h"
#include "ir/progress.h"
#include "optimize/report.h"
#include "optimize/saturate.h"
#include "rules/rules.h"
#include "targets/cost_model.h"
#include "verify/validate.h"

namespace refinery::optimize {

enum class ExtractorKind { Greedy, Ilp };
std::string_view to_string(ExtractorKind kind);  // "greedy", "ilp"

struct OptimizeOptions {
  ExtractorKind extractor = ExtractorKind::Greedy;
  SaturationOptions saturation;
  std::optional<double> ilp_time_limit_s;  // unset: the saturation's time limit
  // The refined graph is written only when the target's model prices it at
  // least this fraction cheaper: a smaller modelled gain is inside the
  // model's error (merging inception_v3's 1x1 convolutions models 0.2%
  // cheaper on the CPU and runs 1-2% slower in ONNX Runtime).
  double min_gain = 0.02;
  // Standard ONNX ops only, whatever the target's export vocabulary allows
  // (targets/spec.h, export_domains): rules whose right side makes a
  // contrib op are left out of saturation (docs/targets.md).
  bool portable = false;
  bool validate = true;
  verify::ValidationOptions validation;
  // Where the pipeline is: each stage as it starts, each saturation
  // iteration (phase, iteration, e-graph nodes). Unset: silent.
  ProgressFn progress;
  // Also keep the saturated e-graph as extraction-gym JSON
  // (OptimizeResult::egraph_json), each e-node priced as extraction prices
  // it: bench/extract's input, written by `optimize --egraph`.
  bool egraph_json = false;
};

struct OptimizeResult {
  ir::Graph graph;  // what to write: the refined graph, or the original when kept
  Report report;
  bool changed() const { return report.outcome != Outcome::KeptOriginal; }
  // False: validation failed, nothing may be written.
  bool valid() const { return report.outcome != Outcome::ValidationFailed; }
  // When OptimizeOptions::egraph_json: the whole saturated e-graph (classes
  // no output needs included) in the extraction-gym JSON format
  // (egraph/dump.h). Empty when the graph was not saturated (recurrent).
  std::string egraph_json;
};

// Fails (a Diag) only on internal errors: a graph that cannot be seeded, a
// rule that breaks the type system, an extraction that cannot be rebuilt.
Expected<OptimizeResult> optimize(const ir::Graph& original, const rules::RuleSet& rules, const targets::Target& target,
                                  const OptimizeOptions& options);

}  // namespace refinery::optimize
