// refinery optimize MODEL -o OUT: the whole pipeline (optimize/optimize.h)
// on one model: load, saturate with the rule library, extract for a target,
// validate, write the result (or keep the original when it is not cheaper)
// and the report. Flags and printing only; the work is in optimize/.
#include <fmt/format.h>

#include <filesystem>

#include "cli/commands.h"
#include "cli/model_files.h"
#include "ir/io.h"
#include "optimize/optimize.h"
#if REFINERY_HAVE_RULES
#include "rules/rules.h"
#endif

namespace refinery::cli {
namespace {

struct Args {
  std::string model, output, target = "cpu", extractor = "greedy", report, strategy = "phased";
  std::vector<std::string> rule_files, dims;
  double time_limit = 5;
  std::size_t node_limit = 20'000;
  int samples = 3;
  uint64_t seed = 0;
  double atol = 1e-4, rtol = 1e-3;
  double min_gain = 0.02;
  bool no_rules = false;
  bool strict = false;
};

struct LoadedRules {
  std::vector<optimize::TensorRewrite> rewrites;
  std::vector<optimize::RuleInfo> infos;
};

Expected<LoadedRules> load_rules(const Args& a) {
  LoadedRules out;
  if (a.no_rules) return out;
#if REFINERY_HAVE_RULES
  auto set = a.rule_files.empty() ? rules::load_library()
                                  : rules::load_rules({a.rule_files.begin(), a.rule_files.end()});
  if (!set) return std::unexpected(set.error());
  out.rewrites = set->rewrites();
  for (std::size_t i = 0; i < out.rewrites.size(); ++i) {
    const rules::Rule* r = set->find(out.rewrites[i].name());
    out.infos.push_back(r ? optimize::classify_rule_text(
                               r->text, r->multi, r->name.ends_with("-rev") && r->text.find("<=>") != std::string::npos)
                          : optimize::RuleInfo{out.rewrites[i].is_multi(), false});
  }
#else
  if (!a.rule_files.empty()) return fail("this build has no rule library (rules/ was not built)");
#endif
  return out;
}

std::string ms(double s) { return fmt::format("{:.4g} ms", s * 1e3); }

std::string changes(const verify::Report& r) {
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
  for (std::size_t i = 0; i < v.size() && i < limit; ++i) parts.push_back(fmt::format("{} ({})", v[i].second, v[i].first));
  if (v.size() > limit) parts.push_back(fmt::format("and {} more (all in --report)", v.size() - limit));
  return fmt::format("{}", fmt::join(parts, ", "));
}

int run(const Args& a) {
  auto graph = load_model(a.model);
  if (!graph) return report(graph.error());
  auto target = targets::load_target(a.target);
  if (!target) return report(target.error());
  auto rules = load_rules(a);
  if (!rules) return report(rules.error());
  optimize::OptimizeOptions o;
  o.extractor = a.extractor == "ilp" ? optimize::ExtractorKind::Ilp : optimize::ExtractorKind::Greedy;
  o.saturation.strategy = a.strategy == "flat" ? optimize::Strategy::Flat : optimize::Strategy::Phased;
  o.saturation.time_limit_s = a.time_limit;
  o.saturation.node_limit = a.node_limit;
  o.ilp_time_limit_s = a.time_limit;
  o.min_gain = a.min_gain;
  o.validation.samples = a.samples;
  o.validation.seed = a.seed;
  o.validation.atol = a.atol;
  o.validation.rtol = a.rtol;
  o.validation.rounding_check = !a.strict;
  auto dims = parse_dims(a.dims);
  if (!dims) return report(dims.error());
  o.validation.dims = std::move(*dims);
  auto result = optimize::optimize(*graph, rules->rewrites, rules->infos, {}, *target, o);
  if (!result) return report(Diag{a.model, result.error().where, result.error().message});
  verify::Report& r = result->report;
  r.model = a.model;
  r.output = a.output;

  std::size_t iterations = 0;
  for (const auto& p : r.saturation) iterations += p.iterations.size();
  double total = r.phase_seconds.empty() ? 0 : r.phase_seconds.back().second;
  fmt::print("refinery optimize: {} -> {} (target {}, extractor {}, {} rules)\n", a.model, a.output, r.target,
             r.extractor, rules->rewrites.size());
  fmt::print("  e-graph:    {} nodes, {} classes after {} iterations ({}, {} strategy)\n", r.egraph_nodes,
             r.egraph_classes, iterations, r.stop_reason, r.strategy);
  fmt::print("  rules fired: {} rules; {}\n", r.rules_fired.size(), counts(r.rules_fired, 8));
  fmt::print("  rules used:  {}\n", counts(r.rules_used, 12));
  fmt::print("  result:     {}{}\n", r.result, r.reason.empty() ? "" : " (" + r.reason + ")");
  fmt::print("  changed:    {} nodes -> {} nodes; {}; {} constant expressions folded\n", r.nodes_before, r.nodes_after,
             changes(r), r.constants_folded);
  fmt::print("  cost ({} model): {} -> {} ({:.3f}x)\n", r.target, ms(r.cost_before), ms(r.cost_after),
             r.cost_after > 0 ? r.cost_before / r.cost_after : 1.0);
  if (r.validation)
    fmt::print("  validation: {} samples, max abs error {:.3g}, max rel error {:.3g} (atol {:g}, rtol {:g}): {}\n",
               r.validation->samples, r.validation->max_abs_error, r.validation->max_rel_error, a.atol, a.rtol,
               r.validation->passed ? "pass" : "FAIL");
  if (r.validation && r.validation->within_rounding)
    fmt::print("              within f32 rounding ({})\n", r.validation->rounding_verdict);
  else if (!r.validation)
    fmt::print("  validation: not needed (the original is written unchanged)\n");
  fmt::print("  time:       {:.2f} s\n", total);

  if (!a.report.empty()) {
    std::string json = verify::to_json(r);
    if (auto ok = ir::write_files_atomic({{a.report, json}}); !ok) return report(ok.error());
  }
  if (!result->valid) {
    fmt::print(stderr, "refinery: error: {}: validation failed, nothing written: {}\n", a.model, r.reason);
    return 1;
  }
  if (auto ok = save_model(result->graph, a.output); !ok) return report(ok.error());
  fmt::print("  wrote {}\n", a.output);
  return 0;
}

}  // namespace

Command add_optimize(CLI::App& app) {
  auto args = std::make_shared<Args>();
  CLI::App* sub = app.add_subcommand("optimize", "Saturate, extract for a target, validate and write the refined model");
  sub->add_option("model", args->model, "Model file (.onnx or .ir)")->required();
  sub->add_option("-o,--output", args->output, "Output model (.onnx or .ir)")->required();
  sub->add_option("--target", args->target, "cpu, gpu (h100), tpu (tpu_v4), h200, tpu_v5e, or a spec .json")
      ->capture_default_str();
  sub->add_option("--extractor", args->extractor, "greedy (DAG cost) or ilp (CBC, optimal within the time limit)")
      ->check(CLI::IsMember({"greedy", "ilp"}))
      ->capture_default_str();
  sub->add_option("--time-limit", args->time_limit, "Seconds for saturation (and again for ILP extraction)")
      ->capture_default_str();
  sub->add_option("--node-limit", args->node_limit, "E-graph node limit")->capture_default_str();
  sub->add_option("--min-gain", args->min_gain,
                  "Keep the original unless the refined graph models at least this fraction cheaper")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  sub->add_option("--report", args->report, "Write the JSON report here (docs/report.md)");
  sub->add_option("--rules", args->rule_files, "Rule files (default: the library, rules/lib/*.rules)");
  sub->add_flag("--no-rules", args->no_rules, "Use no rules (extraction and folding only)");
  sub->add_option("--strategy", args->strategy, "Saturation strategy: phased or flat (docs/optimize.md)")
      ->check(CLI::IsMember({"phased", "flat"}))
      ->capture_default_str();
  sub->add_option("--samples", args->samples, "Validation samples")->capture_default_str();
  sub->add_option("--seed", args->seed, "Seed of the first validation sample")->capture_default_str();
  sub->add_option("--atol", args->atol, "Absolute tolerance")->capture_default_str();
  sub->add_option("--rtol", args->rtol, "Relative tolerance")->capture_default_str();
  sub->add_flag("--strict-f32", args->strict,
                "Fail on any f32 difference over the tolerance, without the f64 rounding check (docs/optimize.md)");
  sub->add_option("--dim", args->dims, "Value of a symbolic dim for validation, NAME=VALUE");
  sub->footer(
      "Example:\n  refinery optimize examples/tiny_cnn.onnx -o /tmp/tiny.opt.onnx --target cpu --report /tmp/r.json\n"
      "Exit: 0 written (refined, or the original when nothing is cheaper), 1 validation failed (nothing\n"
      "written), 2 bad input.");
  return {sub, [args] { return run(*args); }};
}

}  // namespace refinery::cli
