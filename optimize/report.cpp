#include "optimize/report.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace refinery::optimize {

namespace {

using ordered_json = nlohmann::ordered_json;

// JSON has no infinity: large errors are written as null.
ordered_json number(double v) { return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr); }

ordered_json core_map_json(const targets::CoreMap& m, int64_t steps) {
  ordered_json layers = ordered_json::array(), weights = ordered_json::array();
  for (const targets::PopulationMap& p : m.populations)
    layers.push_back({{"layer", p.layer},
                      {"op", p.op},
                      {"neurons", p.neurons},
                      {"synapses", p.synapses},
                      {"fan_in", p.fan_in},
                      {"input_axons", p.input_axons},
                      {"neurons_per_core", p.neurons_per_core},
                      {"cores", p.cores},
                      {"synaptic_events_per_step", p.synaptic_events_per_step}});
  for (const targets::WeightFit& w : m.weights)
    weights.push_back({{"layer", w.layer},
                       {"op", w.op},
                       {"bits_needed", w.bits_needed},
                       {"weight_bits", w.weight_bits},
                       {"fits", w.fits()},
                       {"scale", number(w.scale)}});
  return {{"cores", m.cores},
          {"neurons", m.neurons},
          {"synapses", m.synapses},
          {"synaptic_events_per_step", m.synaptic_events_per_step},
          {"neuron_updates_per_step", m.neuron_updates_per_step},
          {"energy_per_step_j", m.energy_per_step},
          {"energy_per_inference_j", m.energy_per_step * static_cast<double>(steps)},
          {"populations", layers},
          {"weights", weights}};
}

ordered_json neuromorphic_json(const NeuromorphicRecord& n) {
  ordered_json rescaled = ordered_json::array();
  for (const Rescaled& x : n.rescaled)
    rescaled.push_back({{"layer", x.layer},
                        {"neuron", x.neuron},
                        {"factor", x.factor},
                        {"bits_before", x.bits_before},
                        {"bits_after", x.bits_after}});
  return {{"steps", n.steps},
          {"samples", n.samples},
          {"input_rate", n.input_rate},
          {"before", core_map_json(n.before, n.steps)},
          {"after", core_map_json(n.after, n.steps)},
          {"rescaled", rescaled},
          {"secondary_figures", n.secondary}};
}

}  // namespace

std::string_view to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::Optimized: return "optimized";
    case Outcome::KeptOriginal: return "kept original";
    case Outcome::ValidationFailed: return "validation failed";
  }
  return "?";
}

std::size_t SaturationRecord::iterations() const {
  std::size_t n = 0;
  for (const auto& p : phases) n += p.iterations.size();
  return n;
}

bool gain_from_model(const Report& r) {
  auto same = [](double before, double after) {
    return std::abs(after - before) <= kSameWork * std::max(std::abs(before), std::abs(after));
  };
  return r.cost_after > 0 && r.cost_before / r.cost_after > kFlaggedSpeedup && same(r.flops_before, r.flops_after) &&
         same(r.bytes_before, r.bytes_after);
}

std::string to_json(const Report& r) {
  ordered_json j;
  j["refinery_report"] = Report::kVersion;
  j["model"] = r.model;
  j["output"] = r.output;
  j["target"] = r.target;
  j["command"] = r.command;
  j["extractor"] = r.extraction.extractor;
  j["result"] = to_string(r.outcome);
  j["reason"] = r.reason;
  ordered_json stages = ordered_json::object();
  for (const auto& [name, s] : r.stage_seconds) stages[name] = s;
  j["seconds"] = stages;
  const SaturationRecord& s = r.saturation;
  ordered_json sat;
  sat["strategy"] = s.strategy;
  sat["stop_reason"] = s.stop_reason.to_string();
  sat["egraph"] = {{"nodes", s.egraph_nodes}, {"classes", s.egraph_classes}};
  if (const auto& f = s.proof_forest; f.ids > 0)
    sat["egraph"]["explanations"] = {
        {"ids", f.ids}, {"edges", f.edges}, {"premises", f.premises}, {"bytes", f.bytes}};
  ordered_json phases = ordered_json::array();
  for (const auto& p : s.phases) {
    ordered_json its = ordered_json::array();
    for (const auto& it : p.iterations)
      its.push_back({{"nodes", it.nodes}, {"classes", it.classes}, {"applied", it.applied}, {"seconds", it.seconds}});
    phases.push_back(
        {{"name", p.name}, {"rules", p.rules}, {"stop_reason", p.stop_reason.to_string()}, {"iterations", its}});
  }
  sat["phases"] = phases;
  j["saturation"] = sat;
  j["rules_fired"] = s.rules_fired;
  j["rules_used"] = r.extraction.rules_used;
  ordered_json expl = ordered_json::array();
  for (const auto& e : r.extraction.explanations) expl.push_back({{"value", e.value}, {"steps", e.steps}});
  j["explanations"] = expl;
  const ExtractionRecord& x = r.extraction;
  ordered_json reduction = ordered_json::array();
  for (const auto& step : x.reduction)
    reduction.push_back({{"step", step.name}, {"classes", step.classes}, {"candidates", step.candidates}});
  auto optional = [](const std::optional<double>& v) { return v ? number(*v) : ordered_json(nullptr); };
  j["extraction"] = {{"extractor", x.extractor},
                     {"status", x.status},
                     {"detail", x.detail},
                     {"objective", x.objective},
                     {"greedy_objective", x.greedy_objective},
                     {"bound", optional(x.bound)},
                     {"gap", optional(x.gap)},
                     {"seconds", x.seconds},
                     {"cpu_seconds", x.cpu_seconds},
                     {"reduction", reduction}};
  j["cost"] = {{"model", r.target},
               {"model_kind", r.cost_model},
               {"model_file", r.cost_model_file.empty() ? ordered_json(nullptr) : ordered_json(r.cost_model_file)},
               {"unit", r.neuromorphic ? "joules per time step" : "seconds"},
               {"before", r.cost_before},
               {"after", r.cost_after},
               {"speedup", r.cost_after > 0 ? number(r.cost_before / r.cost_after) : ordered_json(nullptr)},
               {"flops_before", r.flops_before},
               {"flops_after", r.flops_after},
               {"bytes_before", r.bytes_before},
               {"bytes_after", r.bytes_after},
               {"gain_flag", gain_from_model(r) ? ordered_json(kGainFromModel) : ordered_json(nullptr)}};
  ordered_json padded = ordered_json::array();
  for (const PaddedChannels& p : r.channels_padded)
    padded.push_back({{"from", p.from}, {"to", p.to}, {"values", p.values}});
  j["graph"] = {{"nodes_before", r.nodes_before},
                {"nodes_after", r.nodes_after},
                {"constants_folded", r.constants_folded},
                {"channels_padded", padded},
                {"ops_before", r.ops_before},
                {"ops_after", r.ops_after}};
  j["neuromorphic"] = r.neuromorphic ? neuromorphic_json(*r.neuromorphic) : ordered_json(nullptr);
  if (r.validation) {
    const verify::ValidationResult& v = *r.validation;
    ordered_json outputs = ordered_json::array(), spikes = ordered_json::array();
    for (const verify::OutputError& o : v.outputs)
      outputs.push_back({{"name", o.name},
                         {"max_abs_error", number(o.max_abs_error)},
                         {"max_rel_error", number(o.max_rel_error)},
                         {"within_tolerance", o.within_tolerance}});
    for (const verify::SpikeTrainAgreement& t : v.spike_trains)
      spikes.push_back({{"layer", t.layer},
                        {"op", t.op},
                        {"original_spikes", t.original_spikes},
                        {"refined_spikes", t.refined_spikes},
                        {"identical", t.identical}});
    j["validation"] = {{"passed", v.passed},
                       {"samples", v.samples},
                       {"seed", r.validation_options.seed},
                       {"atol", r.validation_options.atol},
                       {"rtol", r.validation_options.rtol},
                       {"max_abs_error", number(v.max_abs_error)},
                       {"max_rel_error", number(v.max_rel_error)},
                       {"worst_output", v.worst_output},
                       {"first_divergence", v.first_divergence},
                       {"outputs", outputs},
                       {"spike_trains", spikes},
                       {"rounding_check", r.validation_options.rounding_check},
                       {"verdict", v.verdict}};
    if (!v.widened_dims.empty()) j["validation"]["widened_dims"] = v.widened_dims;
    if (!v.widen_note.empty()) j["validation"]["widen_note"] = v.widen_note;
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

}  // namespace refinery::optimize
