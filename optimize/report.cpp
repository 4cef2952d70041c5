#include "verify/report.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace refinery::verify {

namespace {

using ordered_json = nlohmann::ordered_json;

// JSON has no infinity: large errors are written as null.
ordered_json number(double v) { return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr); }

}  // namespace

std::string to_json(const Report& r) {
  ordered_json j;
  j["refinery_report"] = Report::kVersion;
  j["model"] = r.model;
  j["output"] = r.output;
  j["target"] = r.target;
  j["extractor"] = r.extractor;
  j["result"] = r.result;
  j["reason"] = r.reason;
  ordered_json phases = ordered_json::object();
  for (const auto& [name, s] : r.phase_seconds) phases[name] = s;
  j["seconds"] = phases;
  ordered_json sat;
  sat["strategy"] = r.strategy;
  sat["stop_reason"] = r.stop_reason;
  sat["egraph"] = {{"nodes", r.egraph_nodes}, {"classes", r.egraph_classes}};
  ordered_json sphases = ordered_json::array();
  for (const auto& p : r.saturation) {
    ordered_json its = ordered_json::array();
    for (const auto& it : p.iterations)
      its.push_back({{"nodes", it.nodes}, {"classes", it.classes}, {"applied", it.applied}, {"seconds", it.seconds}});
    sphases.push_back({{"name", p.name}, {"rules", p.rules}, {"stop_reason", p.stop_reason}, {"iterations", its}});
  }
  sat["phases"] = sphases;
  j["saturation"] = sat;
  j["rules_fired"] = r.rules_fired;
  j["rules_used"] = r.rules_used;
  j["extraction"] = {{"extractor", r.extractor}, {"status", r.extraction_status}};
  j["cost"] = {{"model", r.target},
               {"unit", "seconds"},
               {"before", r.cost_before},
               {"after", r.cost_after},
               {"speedup", r.cost_after > 0 ? number(r.cost_before / r.cost_after) : ordered_json(nullptr)}};
  j["graph"] = {{"nodes_before", r.nodes_before},
                {"nodes_after", r.nodes_after},
                {"constants_folded", r.constants_folded},
                {"ops_before", r.ops_before},
                {"ops_after", r.ops_after}};
  if (r.validation) {
    const ValidationResult& v = *r.validation;
    j["validation"] = {{"passed", v.passed},
                       {"samples", v.samples},
                       {"seed", r.validation_options.seed},
                       {"atol", r.validation_options.atol},
                       {"rtol", r.validation_options.rtol},
                       {"max_abs_error", number(v.max_abs_error)},
                       {"max_rel_error", number(v.max_rel_error)},
                       {"worst_output", v.worst_output},
                       {"first_divergence", v.first_divergence},
                       {"rounding_check", r.validation_options.rounding_check}};
    if (v.rounding_checked)
      j["validation"]["rounding"] = {{"within_rounding", v.within_rounding},
                                     {"f64_max_abs_error", number(v.wide_max_abs_error)},
                                     {"original_f32_error", number(v.original_rounding)},
                                     {"refined_f32_error", number(v.refined_rounding)},
                                     {"verdict", v.rounding_verdict}};
  } else {
    j["validation"] = nullptr;
  }
  return j.dump(2) + "\n";
}

}  // namespace refinery::verify
