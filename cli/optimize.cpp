// refinery optimize MODEL -o OUT: the whole pipeline (optimize/optimize.h)
// on one model: load, saturate with the rule library, extract for a target,
// validate, write the result (or keep the original when it is not cheaper)
// and the report. Flags bind straight to optimize::OptimizeOptions, so each
// default is the library's; this file parses and prints.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "cli/commands.h"
#include "cli/model_files.h"
#include "ir/io.h"
#include "optimize/optimize.h"
#include "report/model_page.h"
#include "rules/rules.h"

namespace refinery::cli {
namespace {

struct OptimizeArgs {
  std::string model, output, target = "cpu", report, html, rules_report, egraph, cost_model;
  std::vector<std::string> rule_files, dims;
  bool no_rules = false;
  optimize::OptimizeOptions options;
  ProgressFlags progress;
};

Expected<rules::RuleSet> load_rules(const OptimizeArgs& a) {
  if (a.no_rules) return rules::RuleSet{};
  if (a.rule_files.empty()) return rules::load_library();
  return rules::load_rules({a.rule_files.begin(), a.rule_files.end()});
}

std::string ms(double s) { return fmt::format("{:.4g} ms", s * 1e3); }

std::string changes(const optimize::Report& r) {
  std::vector<std::string> parts;
  std::map<std::string, std::int64_t> delta;
  for (const auto& [op, n] : r.ops_before) delta[op] -= n;
  for (const auto& [op, n] : r.ops_after) delta[op] += n;
  for (const auto& [op, d] : delta)
    if (d) parts.push_back(fmt::format("{} {:+d}", op, d));
  return parts.empty() ? "no op count changed" : fmt::format("{}", fmt::join(parts, ", "));
}

// "a (12), b (3), ... and N more (R.json has them all)": the most frequent
// `limit` entries; the report keeps the whole map.
std::string counts(const std::map<std::string, std::size_t>& m, std::size_t limit) {
  if (m.empty()) return "none";
  std::vector<std::pair<std::size_t, std::string>> v;
  for (const auto& [k, n] : m) v.emplace_back(n, k);
  std::sort(v.rbegin(), v.rend());
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < v.size() && i < limit; ++i)
    parts.push_back(fmt::format("{} ({})", v[i].second, v[i].first));
  if (v.size() > limit) parts.push_back(fmt::format("and {} more (all in --report)", v.size() - limit));
  return fmt::format("{}", fmt::join(parts, ", "));
}

// The extractor's answer on the DAG-cost scale; for ilp its status, bound,
// gap and the problem reduction.
void print_extraction(const optimize::ExtractionRecord& x, bool joules) {
  if (!x.bound) {
    fmt::print("  extraction: {}, DAG cost {}\n", x.status,
               joules ? fmt::format("{:.4g} nJ/step", x.objective * 1e9) : ms(x.objective));
    return;
  }
  fmt::print("  extraction: ilp {}{}: DAG cost {} (greedy {}), bound {}, gap {:.3g}%, {:.2f} s CPU\n", x.status,
             x.detail.empty() ? "" : " (" + x.detail + ")", ms(x.objective), ms(x.greedy_objective), ms(*x.bound),
             100 * x.gap.value_or(0), x.cpu_seconds);
  if (x.reduction.size() > 1)
    fmt::print("              reduced from {} classes, {} candidates to {} classes, {} candidates\n",
               x.reduction.front().classes, x.reduction.front().candidates, x.reduction.back().classes,
               x.reduction.back().candidates);
}

// The chip mapping before and after, and the weights that do not fit the
// chip's format (docs/targets.md, "Neuromorphic targets").
void print_neuromorphic(const optimize::Report& r) {
  const optimize::NeuromorphicRecord& n = *r.neuromorphic;
  fmt::print("  chip ({}): {} -> {} cores, {} -> {} neurons, {} -> {} synapses\n", r.target, n.before.cores,
             n.after.cores, n.before.neurons, n.after.neurons, n.before.synapses, n.after.synapses);
  fmt::print("  per step:   {:.4g} -> {:.4g} synaptic events, {:.4g} -> {:.4g} neuron updates (spike rates measured: "
             "{} samples x {} steps, input rate {:g})\n",
             n.before.synaptic_events_per_step, n.after.synaptic_events_per_step, n.before.neuron_updates_per_step,
             n.after.neuron_updates_per_step, n.samples, n.steps, n.input_rate);
  fmt::print("  energy:     {:.4g} nJ -> {:.4g} nJ per inference of {} steps ({:.3f}x)\n",
             n.energy_per_inference_before() * 1e9, n.energy_per_inference_after() * 1e9, n.steps,
             r.cost_after > 0 ? r.cost_before / r.cost_after : 1.0);
  std::size_t fit = 0;
  const targets::WeightFit* worst = nullptr;
  for (const targets::WeightFit& w : n.after.weights) {
    if (w.fits()) ++fit;
    else if (!worst || w.bits_needed > worst->bits_needed) worst = &w;
  }
  if (!n.after.weights.empty())
    fmt::print("  weights:    {} of {} synapse layers are exactly {}-bit integers times a power of two{}\n", fit,
               n.after.weights.size(), n.after.weights.front().weight_bits,
               worst ? fmt::format("; '{}' needs {} bits (over by {})", worst->layer, worst->bits_needed,
                                   worst->bits_needed - worst->weight_bits)
                     : "");
  for (const optimize::Rescaled& x : n.rescaled)
    fmt::print("  rescaled:   '{}' weights / {} and '{}' input gain x {} ({} -> {} bits)\n", x.layer, x.factor,
               x.neuron, x.factor, x.bits_before, x.bits_after);
}

// After "N samples": the steps of a spiking run, or the symbolic dims the
// last sample was widened to.
std::string samples_note(const verify::ValidationResult& v, const verify::ValidationOptions& vo) {
  if (!v.spike_trains.empty()) return fmt::format(" x {} steps", vo.sim.steps);
  if (v.widened_dims.empty()) return "";
  return fmt::format(" (the last at {})", verify::dims_text(v.widened_dims));
}

void print(const OptimizeArgs& a, const optimize::Report& r, std::size_t num_rules) {
  const optimize::SaturationRecord& s = r.saturation;
  // Kept before saturation (a recurrent graph): no e-graph, no extraction;
  // the result line says why.
  const bool saturated = !s.strategy.empty();
  fmt::print("refinery optimize: {} -> {} (target {}, {} cost model{}, extractor {}, {} rules)\n", a.model, a.output,
             r.target, r.cost_model, r.cost_model_file.empty() ? "" : " " + r.cost_model_file,
             to_string(a.options.extractor), num_rules);
  if (saturated) {
    fmt::print("  e-graph:    {} nodes, {} classes after {} iterations ({}, {} strategy)\n", s.egraph_nodes,
               s.egraph_classes, s.iterations(), s.stop_reason, s.strategy);
    if (const auto& f = s.proof_forest; f.ids > 0)
      fmt::print("  explanations: {} ids, {} edges, {} match premises ({:.1f} MiB)\n", f.ids, f.edges, f.premises,
                 static_cast<double>(f.bytes) / (1 << 20));
    fmt::print("  rules fired: {} rules; {}\n", s.rules_fired.size(), counts(s.rules_fired, 8));
    fmt::print("  rules used:  {}\n", counts(r.extraction.rules_used, 12));
    print_extraction(r.extraction, r.neuromorphic.has_value());
  } else {
    fmt::print("  e-graph:    not built (see the result line)\n");
  }
  fmt::print("  result:     {}{}\n", to_string(r.outcome), r.reason.empty() ? "" : " (" + r.reason + ")");
  fmt::print("  changed:    {} nodes -> {} nodes; {}; {} constant expressions folded\n", r.nodes_before, r.nodes_after,
             changes(r), r.constants_folded);
  for (const optimize::PaddedChannels& p : r.channels_padded)
    fmt::print("  blocks:     {} channels -> {} (the runtime's channel block) in {} value{}: {}\n", p.from, p.to,
               p.values.size(), p.values.size() == 1 ? "" : "s", fmt::join(p.values, ", "));
  if (r.neuromorphic)
    print_neuromorphic(r);
  else
    fmt::print("  cost ({} model): {} -> {} ({:.3f}x)\n", r.target, ms(r.cost_before), ms(r.cost_after),
               r.cost_after > 0 ? r.cost_before / r.cost_after : 1.0);
  fmt::print("  work:       {:.4g} -> {:.4g} GFLOP, {:.4g} -> {:.4g} MB moved\n", r.flops_before / 1e9,
             r.flops_after / 1e9, r.bytes_before / 1e6, r.bytes_after / 1e6);
  if (optimize::gain_from_model(r))
    fmt::print("  flagged:    {} (over {:g}x with FLOPs and bytes moved within {:g}%)\n", optimize::kGainFromModel,
               optimize::kFlaggedSpeedup, 100 * optimize::kSameWork);
  const verify::ValidationOptions& vo = r.validation_options;
  if (r.validation) {
    const auto& trains = r.validation->spike_trains;
    const auto identical = std::count_if(trains.begin(), trains.end(), [](const auto& t) { return t.identical; });
    fmt::print(
        "  validation: {} samples{}, max abs error {:.3g}, max rel error {:.3g} (atol {:g}, rtol {:g}){}: {} ({})\n",
        r.validation->samples, samples_note(*r.validation, vo),
        r.validation->max_abs_error, r.validation->max_rel_error, vo.atol, vo.rtol,
        trains.empty() ? "" : fmt::format(", spike trains identical in {} of {} layers", identical, trains.size()),
        r.validation->passed ? "pass" : "FAIL", r.validation->verdict);
  }
  if (r.validation && !r.validation->widen_note.empty())
    fmt::print("              symbolic dims {}\n", r.validation->widen_note);
  if (r.validation && r.validation->within_rounding)
    fmt::print("              within f32 rounding ({})\n", r.validation->rounding_verdict);
  else if (!r.validation)
    fmt::print("  validation: not needed (the original is written unchanged)\n");
  fmt::print("  time:       {:.2f} s\n", r.total_seconds());
}

int run(OptimizeArgs& a) {
  auto graph = load_model(a.model);
  if (!graph) return report(graph.error());
  auto target = targets::load_target(a.target, a.cost_model);
  if (!target) return report(target.error());
  auto rules = load_rules(a);
  if (!rules) return report(rules.error());
  auto dims = parse_dims(a.dims);
  if (!dims) return report(dims.error());
  std::optional<report::RuleVerdicts> verdicts;
  if (!a.rules_report.empty()) {
    auto v = report::load_rule_verdicts(a.rules_report);
    if (!v) return report(v.error());
    verdicts = std::move(*v);
  }
  a.options.validation.dims = std::move(*dims);
  a.options.egraph_json = !a.egraph.empty();
  ProgressDisplay display("optimize", a.progress.effective());
  a.options.progress = display.callback();
  auto result = optimize::optimize(*graph, *rules, *target, a.options);
  display.finish();
  if (!result) return report(result.error(), a.model);
  optimize::Report& r = result->report;
  r.model = a.model;
  r.output = a.output;
  r.command = command_line();
  // With the report on stdout (--report -), stdout is the report alone.
  const bool human = a.report != "-";
  if (human) print(a, r, rules->rules().size());

  std::string json = optimize::to_json(r);
  if (!a.report.empty())
    if (int code = write_json(a.report, json)) return code;
  if (!a.html.empty()) {  // the page is drawn from the JSON, as `report html` draws it
    auto parsed = report::parse_report(json, a.report);
    if (!parsed) return report(parsed.error());
    auto page = report::model_page(&*parsed, {.verdicts = verdicts ? &*verdicts : nullptr});
    if (!page) return report(page.error());
    if (auto ok = ir::write_files_atomic({{a.html, *page}}); !ok) return report(ok.error());
  }
  if (!a.egraph.empty() && !result->egraph_json.empty())
    if (auto ok = ir::write_files_atomic({{a.egraph, result->egraph_json}}); !ok) return report(ok.error());
  if (!result->valid()) {
    fmt::print(stderr, "refinery: error: {}: validation failed, nothing written: {}\n", a.model, r.reason);
    return 1;
  }
  if (auto ok = save_model(result->graph, a.output); !ok) return report(ok.error());
  if (human) fmt::print("  wrote {}\n", a.output);
  return 0;
}

}  // namespace

std::map<std::string, optimize::ExtractorKind> extractor_kinds() {
  std::map<std::string, optimize::ExtractorKind> kinds;
  for (auto kind : {optimize::ExtractorKind::Greedy, optimize::ExtractorKind::Ilp})
    kinds.emplace(std::string(to_string(kind)), kind);
  return kinds;
}

Command add_optimize(CLI::App& app) {
  auto args = std::make_shared<OptimizeArgs>();
  optimize::OptimizeOptions& o = args->options;
  CLI::App* sub =
      app.add_subcommand("optimize", "Saturate, extract for a target, validate and write the refined model");
  sub->add_option("model", args->model, "Model file (.onnx, .ir or .nir)")->required();
  sub->add_option("-o,--output", args->output, "Output model (.onnx, .ir or .nir)")->required();
  sub->add_option("--target", args->target, kTargetHelp)->capture_default_str();
  sub->add_option("--cost-model", args->cost_model, kCostModelHelp);
  sub->add_option_no_stream("--extractor", o.extractor, "greedy (DAG cost) or ilp (CBC, optimal within the time limit)")
      ->transform(CLI::CheckedTransformer(extractor_kinds()))
      ->default_str(std::string(to_string(o.extractor)));
  sub->add_option("--time-limit", o.saturation.time_limit_s, "Seconds for saturation (and again for ILP extraction)")
      ->capture_default_str();
  sub->add_option("--node-limit", o.saturation.node_limit, "E-graph node limit")->capture_default_str();
  sub->add_option("--threads", o.saturation.threads,
                  "Threads searching the rules in each saturation iteration (the result does not depend on it)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  sub->add_option("--min-gain", o.min_gain,
                  "Keep the original unless the refined graph models at least this fraction cheaper")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  sub->add_flag("--portable", o.portable,
                "Emit standard ONNX ops only, even where the target's runtime has fused contrib ops (docs/targets.md)");
  sub->add_option("--report,--json", args->report,
                  "Write the JSON report here (docs/report.md); - for stdout, instead of the summary");
  sub->add_option("--html", args->html, "Write the report as an HTML page here (docs/report.md)");
  sub->add_option("--rules-report", args->rules_report,
                  "The page's proof verdicts: a `refinery rules verify --json` file (default: none shown)");
  sub->add_option("--egraph", args->egraph,
                  "Write the saturated e-graph here, extraction-gym JSON priced by the target (bench/extract)");
  sub->add_option("--rules", args->rule_files, "Rule files (default: the library, rules/lib/*.rules)");
  sub->add_flag("--no-rules", args->no_rules, "Use no rules (extraction and folding only)");
  sub->add_option_no_stream("--strategy", o.saturation.strategy,
                            "Saturation strategy: phased or flat (docs/optimize.md)")
      ->transform(CLI::CheckedTransformer(std::map<std::string, optimize::Strategy>{
          {"phased", optimize::Strategy::Phased}, {"flat", optimize::Strategy::Flat}}))
      ->default_str(std::string(to_string(o.saturation.strategy)));
  sub->add_option("--samples", o.validation.samples, "Validation samples")->capture_default_str();
  sub->add_option("--seed", o.validation.seed, "Seed of the first validation sample")->capture_default_str();
  sub->add_option("--atol", o.validation.atol, "Absolute tolerance")->capture_default_str();
  sub->add_option("--rtol", o.validation.rtol, "Relative tolerance")->capture_default_str();
  sub->add_flag("--strict-f32{false}", o.validation.rounding_check,
                "Fail on any f32 difference over the tolerance, without the f64 rounding check (docs/optimize.md)");
  sub->add_option("--dim", args->dims, "Value of a symbolic dim for validation, NAME=VALUE");
  add_progress_flags(sub, args->progress);
  sub->footer(
      "Example:\n  refinery optimize examples/tiny_cnn.onnx -o /tmp/tiny.opt.onnx --target cpu --report /tmp/r.json\n"
      "Exit: 0 written (refined, or the original when nothing is cheaper), 1 validation failed (nothing\n"
      "written), 2 bad input, 3 a valid model Refinery cannot handle (the message names the node).");
  return {sub, [args] { return run(*args); }};
}

}  // namespace refinery::cli
