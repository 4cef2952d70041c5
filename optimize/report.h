// The optimize report (docs/report.md): each stage of the pipeline returns
// its record (saturation, extraction, the never-worse decision) and the
// report holds them, with validation's result (verify/) and the outcome.
// Written as JSON, keys in a fixed order.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "egraph/stop_reason.h"
#include "extract/reduce.h"
#include "optimize/channel_blocks.h"
#include "optimize/fit_weights.h"
#include "targets/neuromorphic.h"
#include "verify/validate.h"

namespace refinery::optimize {

enum class Outcome {
  Optimized,         // the refined graph, validated
  KeptOriginal,      // nothing cheaper enough: the original is written unchanged
  ValidationFailed,  // the refined graph differs: nothing may be written
};
// "optimized", "kept original", "validation failed".
std::string_view to_string(Outcome outcome);

struct IterationRecord {
  std::size_t nodes = 0, classes = 0;  // e-graph size at the start of the iteration
  std::size_t applied = 0;             // unions that changed the graph
  double seconds = 0;
};

struct PhaseRecord {
  std::string name;
  std::size_t rules = 0;  // rules active in this phase
  egraph::StopReason stop_reason;
  std::vector<IterationRecord> iterations;
};

struct SaturationRecord {
  std::string strategy;  // "phased" or "flat"
  std::vector<PhaseRecord> phases;
  egraph::StopReason stop_reason;                    // of the last phase
  std::size_t egraph_nodes = 0, egraph_classes = 0;  // at the end
  // The explanations' proof forest at the end (egraph/explain.h): ids,
  // edges, match premises and its bytes in the e-graph's memory estimate.
  struct ProofForestSize {
    std::size_t ids = 0, edges = 0, premises = 0, bytes = 0;
  } proof_forest;
  std::map<std::string, std::size_t> rules_fired;    // rule -> unions it made
  std::size_t iterations() const;
};

// How one value of the original came to be computed by a new node: the
// rules on the explanation's path from its original node to the chosen one,
// in order ("NAME" forward, "NAME (backward)").
struct ValueExplanation {
  std::string value;
  std::vector<std::string> steps;
};

struct ExtractionRecord {
  std::string extractor;  // "greedy" or "ilp"
  // greedy: "greedy (dag)" or "greedy (tree answer)"; ilp: extract::IlpStatus
  // as text ("optimal", "feasible", "greedy kept", "too large").
  std::string status;
  std::string detail;  // ilp: why the greedy answer was kept
  // The chosen answer's DAG cost (seconds under the target's model, a
  // shared sub-graph counted once), the greedy answer's on the same scale,
  // and, for ilp, the best lower bound and the relative gap between them.
  double objective = 0, greedy_objective = 0;
  std::optional<double> bound, gap;
  double seconds = 0, cpu_seconds = 0;            // ilp: the solver's wall and CPU time (CBC's limit is CPU time)
  std::vector<extract::ReductionStep> reduction;  // ilp: problem size before and after each reduction
  // rule -> chosen e-nodes whose explanation (from the nodes of the original
  // values they compute, or the first node of a class rules made) uses it.
  std::map<std::string, std::size_t> rules_used;
  std::vector<ValueExplanation> explanations;  // per original value now computed differently
};

// A neuromorphic target (targets/neuromorphic.h): each graph mapped onto
// the chip, with the activity measured by simulating it on the validation's
// seeded input spike trains (samples x steps at input_rate).
struct NeuromorphicRecord {
  int64_t steps = 0;  // one inference: the validation's steps
  int samples = 0;
  double input_rate = 0;
  targets::CoreMap before, after;
  std::map<std::string, std::string> secondary;  // the spec's figures from secondary sources
  std::vector<Rescaled> rescaled;                 // layers rescaled into the chip's weight format (fit_weights.h)
  double energy_per_inference_before() const { return before.energy_per_step * static_cast<double>(steps); }
  double energy_per_inference_after() const { return after.energy_per_step * static_cast<double>(steps); }
};

struct Report {
  static constexpr int kVersion = 9;
  std::string model, output, target;
  // What priced the graphs (targets::Target): "learned", with its file, or
  // "analytic" (no file).
  std::string cost_model = "analytic", cost_model_file;
  std::string command;  // the command line that wrote the report, when a CLI ran it (report/command.h)
  Outcome outcome = Outcome::KeptOriginal;
  std::string reason;                                         // why the original was kept, or why validation failed
  std::vector<std::pair<std::string, double>> stage_seconds;  // in order, then "total"
  SaturationRecord saturation;
  ExtractionRecord extraction;
  double cost_before = 0, cost_after = 0;  // seconds under the target's model (neuromorphic: joules per time step)
  // The work of the kernels each graph runs (targets::graph_work): FLOPs,
  // and bytes moved (read + written), beside the cost.
  double flops_before = 0, flops_after = 0, bytes_before = 0, bytes_after = 0;
  std::size_t nodes_before = 0, nodes_after = 0;
  std::map<std::string, std::int64_t> ops_before, ops_after;
  std::size_t constants_folded = 0;
  std::vector<PaddedChannels> channels_padded;  // widened to the runtime's channel blocks (channel_blocks.h)
  std::optional<NeuromorphicRecord> neuromorphic;  // neuromorphic targets only
  std::optional<verify::ValidationResult> validation;
  verify::ValidationOptions validation_options;

  double total_seconds() const { return stage_seconds.empty() ? 0 : stage_seconds.back().second; }
};

// The guard on modelled gains (ARCHITECTURE.md decision 11): a speedup
// under the target's model above kFlaggedSpeedup while the FLOPs and the
// bytes moved are each within kSameWork of the original's is flagged with
// kGainFromModel: relabelling the same work should cost the same, so such a
// gain is the model's, not the hardware's, until someone shows otherwise.
inline constexpr double kFlaggedSpeedup = 1.5, kSameWork = 0.01;
inline constexpr std::string_view kGainFromModel = "gain from the model, not from less work";
bool gain_from_model(const Report& report);

std::string to_json(const Report& report);  // pretty-printed, keys in a fixed order

}  // namespace refinery::optimize
