// Saturation that survives real models. Multi-pattern and permuting
// (associative / commutative) rules blow e-graphs up, so the default
// strategy runs in phases (docs/optimize.md):
//   1. simplify: the single-pattern, non-permuting rules, to saturation or
//      their share of the time;
//   2. explore: every rule, multi-patterns only in the first few iterations
//      of the phase, permuting rules under a tight backoff threshold;
//   3. cleanup: the simplify rules again on what exploring added.
// `Flat` runs every rule together under egg's backoff scheduler, for
// comparison. The driver calls the engine's search / apply / rebuild and
// records, per iteration, the e-graph's size, and per e-node the rule that
// created it (so the report can say which rules the result uses).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "egraph/rewrite.h"
#include "egraph/tensor/analysis.h"
#include "verify/report.h"

namespace refinery::optimize {

using egraph::tensor::TensorEGraph;
using TensorRewrite = egraph::Rewrite<egraph::tensor::TensorNode, egraph::tensor::TensorAnalysis>;

// What the strategy needs to know about a rule.
struct RuleInfo {
  bool multi = false;      // a multi-pattern
  bool permuting = false;  // its right side has the same operators as its left (AC, reordering)
  bool expanding = false;  // more operators on the right, and only arithmetic ones gone (distributing, sub -> add neg)
};

// "(add ?a ?b) => (add ?b ?a)" is permuting; so is any rule whose two sides
// use the same multiset of operators.
// `text` is "LHS => RHS ..." or a library rule's whole form ("(rule NAME ...)",
// `<=>` too); `reverse` classifies the right-to-left direction (NAME-rev).
RuleInfo classify_rule_text(std::string_view text, bool multi, bool reverse = false);

// A rewrite written directly in C++ over the e-graph (tests, experiments):
// applies itself once per iteration and returns the unions it made.
struct GraphRewriter {
  std::string name;
  std::function<std::size_t(TensorEGraph&)> apply;
};

enum class Strategy { Phased, Flat };

struct SaturationOptions {
  Strategy strategy = Strategy::Phased;
  double time_limit_s = 5;
  std::size_t node_limit = 20'000;
  std::size_t iter_limit = 30;           // per phase
  std::size_t multi_iter_limit = 2;      // explore-phase iterations that run multi-patterns
  std::size_t permuting_match_limit = 64;  // backoff threshold of permuting rules when exploring
};

struct SaturationResult {
  std::vector<verify::SaturationPhaseReport> phases;
  std::string stop_reason;
  std::map<std::string, std::size_t> fired;  // rule -> unions made
  // Per e-graph id: the index of the rule (rules first, then rewriters)
  // whose application created it; -1 for ids that existed before.
  std::vector<std::int32_t> created_by;
  std::vector<std::string> rule_names;       // by that index
  // Every union that changed the graph: the two ids merged and the rule (by
  // the index above) that made it; -1 for rebuild's congruence unions.
  struct Union {
    egraph::Id a, b;
    std::int32_t rule;
  };
  std::vector<Union> unions;
};

// `infos` is parallel to `rules` (empty: classify from is_multi() only).
SaturationResult saturate(TensorEGraph& egraph, std::span<const TensorRewrite> rules, std::span<const RuleInfo> infos,
                          std::span<const GraphRewriter> rewriters, const SaturationOptions& options);

}  // namespace refinery::optimize
