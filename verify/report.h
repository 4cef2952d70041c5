// The optimisation report (docs/report.md): what was done to a model, how
// long each phase took, how the e-graph grew, what the cost model said
// before and after, and the validation error. Written as JSON.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "verify/validate.h"

namespace refinery::verify {

struct IterationReport {
  std::size_t nodes = 0, classes = 0;  // e-graph size at the start of the iteration
  std::size_t applied = 0;             // unions that changed the graph
  double seconds = 0;
};

struct SaturationPhaseReport {
  std::string name;
  std::size_t rules = 0;               // rules active in this phase
  std::string stop_reason;
  std::vector<IterationReport> iterations;
};

struct Report {
  static constexpr int kVersion = 1;
  std::string model, output, target, extractor, strategy;
  // "optimized", "kept original" (not cheaper), or "validation failed".
  std::string result;
  std::string reason;                            // why the original was kept, or why it failed
  std::vector<std::pair<std::string, double>> phase_seconds;  // in order
  std::vector<SaturationPhaseReport> saturation;
  std::string stop_reason;                       // of the last saturation phase
  std::size_t egraph_nodes = 0, egraph_classes = 0;  // at the end of saturation
  std::map<std::string, std::size_t> rules_fired;    // rule -> unions it made
  std::map<std::string, std::size_t> rules_used;     // rule -> e-nodes it created that the result uses
  std::string extraction_status;
  double cost_before = 0, cost_after = 0;        // seconds under the target's model
  std::size_t nodes_before = 0, nodes_after = 0;
  std::map<std::string, std::int64_t> ops_before, ops_after;
  std::size_t constants_folded = 0;
  std::optional<ValidationResult> validation;
  ValidationOptions validation_options;
};

std::string to_json(const Report& report);  // pretty-printed, keys in a fixed order

}  // namespace refinery::verify
