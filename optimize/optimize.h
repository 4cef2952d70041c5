// The optimisation pipeline (ARCHITECTURE.md's data flow, end to end):
// seed the e-graph, saturate, extract per target, rebuild the graph, fold
// constant expressions, keep the original unless the result is cheaper
// (never worse), validate numerically, and report every step.
#pragma once

#include <span>
#include <string>

#include "ir/diag.h"
#include "ir/graph.h"
#include "optimize/saturate.h"
#include "targets/cost_model.h"
#include "verify/report.h"
#include "verify/validate.h"

namespace refinery::optimize {

enum class ExtractorKind { Greedy, Ilp };

struct OptimizeOptions {
  ExtractorKind extractor = ExtractorKind::Greedy;
  SaturationOptions saturation;
  double ilp_time_limit_s = 5;
  // The refined graph is written only when the target's model prices it at
  // least this fraction cheaper: a smaller modelled gain is inside the
  // model's error (merging inception_v3's 1x1 convolutions models 0.2%
  // cheaper on the CPU and runs 1-2% slower in ONNX Runtime).
  double min_gain = 0.02;
  bool validate = true;
  verify::ValidationOptions validation;
};

struct OptimizeResult {
  ir::Graph graph;         // what to write: the refined graph, or the original when kept
  bool changed = false;    // graph is the refined one
  bool valid = true;       // false: validation failed, nothing may be written
  verify::Report report;
};

// Fails (a Diag) only on internal errors: a graph that cannot be seeded, an
// extraction that cannot be rebuilt. `rule_infos` is parallel to `rules`
// (may be empty).
Expected<OptimizeResult> optimize(const ir::Graph& original, std::span<const TensorRewrite> rules,
                                  std::span<const RuleInfo> rule_infos, std::span<const GraphRewriter> rewriters,
                                  const targets::Target& target, const OptimizeOptions& options);

}  // namespace refinery::optimize
