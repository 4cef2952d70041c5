#include "optimize/optimize.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <span>
#include <vector>

#include "egraph/dump.h"
#include "egraph/tensor/convert.h"
#include "extract/greedy.h"
#include "extract/ilp.h"
#include "ir/spiking.h"
#include "ir/stats.h"
#include "optimize/activity.h"
#include "optimize/channel_blocks.h"
#include "optimize/fit_weights.h"
#include "optimize/fold.h"
#include "optimize/provenance.h"
#include "optimize/tensor_cost.h"
#include "targets/neuromorphic.h"

namespace refinery::optimize {

namespace {

using Clock = std::chrono::steady_clock;
using egraph::tensor::Seeded;
using Problem = extract::EGraphProblem<TensorEGraph>;

// Records each stage's seconds in the report, in order, and says which
// stage starts next to the progress callback.
class StageClock {
 public:
  StageClock(Report& r, const ProgressFn& progress) : report_(r), progress_(progress) {}
  void starts(std::string stage) const {
    if (progress_) progress_({.phase = std::move(stage)});
  }
  void done(const char* stage) {
    auto now = Clock::now();
    report_.stage_seconds.emplace_back(stage, std::chrono::duration<double>(now - last_).count());
    last_ = now;
  }
  void total() {
    report_.stage_seconds.emplace_back("total", std::chrono::duration<double>(Clock::now() - start_).count());
  }

 private:
  Report& report_;
  const ProgressFn& progress_;
  Clock::time_point start_ = Clock::now(), last_ = start_;
};

std::map<std::string, std::int64_t> histogram(const ir::Graph& g) { return ir::compute_stats(g).op_histogram; }

struct Extracted {
  Problem problem;
  extract::Solution solution;
};

// The rules the target may use: those whose right side makes only ops in
// its export vocabulary (all standard ONNX ops under `portable`). A target
// without ONNX Runtime never sees a contrib op, not even inside the e-graph.
rules::RuleSet within_vocabulary(const rules::RuleSet& rules, const targets::Target& target, bool portable) {
  const targets::HardwareSpec& spec = target.model->spec();
  auto allowed = [&](ir::Op op) { return portable ? ir::op_info(op).onnx_domain.empty() : spec.may_emit(op); };
  rules::RuleSet out;
  for (const rules::Rule& r : rules.rules()) {
    std::vector<ir::Op> made = rules::ops_made(r);
    if (std::all_of(made.begin(), made.end(), allowed)) out.add(r);
  }
  return out;
}

// The saturation stage: the rule set's rewrites under the schedule.
Expected<SaturationRecord> saturate_with(TensorRunner& runner, const rules::RuleSet& all_rules,
                                         const targets::Target& target, const OptimizeOptions& o) {
  rules::RuleSet rules = within_vocabulary(all_rules, target, o.portable);
  std::vector<TensorRewrite> rewrites = rules.rewrites();
  std::vector<rules::RuleKind> kinds;
  for (const rules::Rule& r : rules.rules()) kinds.push_back(r.kind);
  try {
    return saturate(runner, rewrites, kinds, o.saturation, o.progress);
  } catch (const egraph::tensor::TypeMismatch& e) {
    return fail(fmt::format("saturation broke the type system (a rule is wrong): {}", e.what()));
  }
}

// On a tie the original's own node wins (a rewrite must pay for itself): a
// node that saturation added (its id is past the seeded ones) costs 1e-12 s
// more.
double new_node_bias(const TensorEGraph& g, const TensorNode& n, std::size_t seeded_ids) {
  auto id = g.memo_owner(n);
  return id && egraph::index(*id) >= seeded_ids ? 1e-12 : 0.0;
}

// The classes of the graph's outputs, canonical.
std::vector<egraph::Id> root_classes(const TensorEGraph& g, const Seeded& seeded) {
  std::vector<egraph::Id> roots;
  for (egraph::Id r : seeded.roots) roots.push_back(g.find(r));
  return roots;
}

// The flat problem for the target: one class per needed e-class, each node
// priced by the target's model plus new_node_bias.
Problem problem_for(const TensorEGraph& g, const Seeded& seeded, std::size_t seeded_ids,
                    const targets::Target& target, const std::vector<double>& activity) {
  std::vector<egraph::Id> roots = root_classes(g, seeded);
  TensorCost cost(g, *target.model, roots, class_activity(g, seeded.origin, activity));
  // A class export folds is not in the written graph: its nodes carry no bias.
  auto biased = [&](egraph::Id c, const TensorNode& n) {
    return cost(c, n) + (cost.is_constant(c) ? 0.0 : new_node_bias(g, n, seeded_ids));
  };
  return extract::make_problem(g, roots, biased);
}

// Chooses one node per needed class, the cheapest DAG under the target's
// model (problem_for).
Expected<Extracted> extract_for(const TensorEGraph& g, const Seeded& seeded, std::size_t seeded_ids,
                                const targets::Target& target, const std::vector<double>& activity,
                                const OptimizeOptions& o, ExtractionRecord& rec) {
  Extracted out{problem_for(g, seeded, seeded_ids, target, activity), {}};
  rec.extractor = std::string(to_string(o.extractor));
  if (o.extractor == ExtractorKind::Ilp) {
    auto r = extract::extract_ilp(out.problem.problem,
                                  {.time_limit_s = o.ilp_time_limit_s.value_or(o.saturation.time_limit_s)});
    out.solution = std::move(r.solution);
    rec.status = std::string(to_string(r.status));
    rec.detail = r.detail;
    rec.objective = r.cost;
    rec.greedy_objective = r.greedy_cost;
    rec.bound = r.bound;
    rec.gap = r.gap();
    rec.seconds = r.seconds;
    rec.cpu_seconds = r.cpu_seconds;
    rec.reduction = r.reduction;
  } else {
    auto r = extract::extract_greedy_dag(out.problem.problem, extract::kGreedyWithMoves);
    out.solution = std::move(r.solution);
    rec.status = r.fell_back_to_tree ? "greedy (tree answer)" : "greedy (dag)";
    rec.objective = rec.greedy_objective = extract::dag_cost(out.problem.problem, out.solution);
  }
  if (auto bad = extract::check_solution(out.problem.problem, out.solution); !bad.empty())
    return fail("extraction returned an invalid choice: " + bad);
  explain_extraction(g, seeded.origin, out.problem, out.solution, rec);
  return out;
}

// The graph of the chosen nodes, its constant expressions folded, and as
// it was before (`exact`: the same computation, its constants not yet
// rounded to f32 nor its channels widened to blocks, which adds zeros; the
// validation's rounding check runs it in f64).
struct Rebuilt {
  Folded folded;
  ir::Graph exact;
};

Expected<Rebuilt> rebuild(const TensorEGraph& g, const Seeded& seeded, const Extracted& x) {
  auto refined = egraph::tensor::to_graph(
      g, seeded.roots, [&](egraph::Id c) -> const TensorNode& { return x.problem.chosen(x.solution, g.find(c)); },
      seeded.origin);
  if (!refined) return std::unexpected(refined.error());
  auto folded = fold_constants(*refined);
  if (!folded) return std::unexpected(folded.error());
  return Rebuilt{std::move(*folded), std::move(*refined)};
}

// Never worse: the refined graph stands only when the target's model prices
// it cheaper by at least min_gain. Returns why it does not, or "".
std::string not_cheaper_enough(const Report& r, const OptimizeOptions& o) {
  const char* unit = r.neuromorphic ? " J/step" : " s";
  if (!(r.cost_after < r.cost_before * (1 - 1e-9)))
    return fmt::format("the extracted graph is not cheaper under the {} model ({:.6g}{} vs {:.6g}{})", r.target,
                       r.cost_after, unit, r.cost_before, unit);
  if (r.cost_after > r.cost_before * (1 - o.min_gain))
    return fmt::format(
        "the extracted graph is only {:.2f}% cheaper under the {} model ({:.6g}{} vs {:.6g}{}), below the minimum "
        "gain of {:g}% (--min-gain)",
        100 * (1 - r.cost_after / r.cost_before), r.target, r.cost_after, unit, r.cost_before, unit, 100 * o.min_gain);
  return "";
}

// The work beside the cost (Report::flops_before ...).
void set_work(const ir::Graph& g, double& flops, double& bytes) {
  ir::Work w = targets::graph_work(g);
  flops = w.flops;
  bytes = w.bytes_read + w.bytes_written;
}

// Never worse, never lost: the original is the result, and `reason` says why.
void keep_original(OptimizeResult& out, const ir::Graph& original, std::string reason) {
  Report& rep = out.report;
  rep.outcome = Outcome::KeptOriginal;
  rep.reason = std::move(reason);
  rep.cost_after = rep.cost_before;
  rep.flops_after = rep.flops_before;
  rep.bytes_after = rep.bytes_before;
  rep.nodes_after = rep.nodes_before;
  rep.ops_after = rep.ops_before;
  rep.extraction.rules_used.clear();
  rep.extraction.explanations.clear();
  rep.channels_padded.clear();
  if (rep.neuromorphic) {
    rep.neuromorphic->after = rep.neuromorphic->before;
    rep.neuromorphic->rescaled.clear();
  }
  out.graph = original;
}

// A neuromorphic target: `graph` mapped onto the chip with its activity
// measured on the validation's input spike trains (optimize/activity.h).
// Fails with Diag::limitation when it does not fit.
Expected<targets::CoreMap> map_measured(const ir::Graph& graph, const targets::Target& target,
                                        const OptimizeOptions& o, std::vector<double>* activity = nullptr) {
  auto measured = measure_activity(graph, o.validation);
  if (!measured) return std::unexpected(measured.error());
  auto map = targets::map_to_cores(graph, target.model->spec(), *measured);
  if (activity) *activity = std::move(*measured);
  return map;
}

// The whole e-graph in the extraction-gym format, each e-node at the price
// extraction gives it (problem_for's: the target's model plus
// new_node_bias), classes no root needs included as the format has them.
std::string gym_json(const TensorEGraph& g, const Seeded& seeded, std::size_t seeded_ids,
                     const targets::Target& target, const std::vector<double>& activity) {
  std::vector<egraph::Id> roots = root_classes(g, seeded);
  TensorCost cost(g, *target.model, roots, class_activity(g, seeded.origin, activity));
  std::function<double(const TensorNode&)> price = [&](const TensorNode& n) {
    return cost(g.find(*g.lookup(n)), n) + new_node_bias(g, n, seeded_ids);
  };
  return egraph::to_extraction_gym_json(g, std::span<const egraph::Id>(roots), price);
}

}  // namespace

std::string_view to_string(ExtractorKind kind) { return kind == ExtractorKind::Ilp ? "ilp" : "greedy"; }

Expected<OptimizeResult> optimize(const ir::Graph& original, const rules::RuleSet& rules, const targets::Target& target,
                                  const OptimizeOptions& o) {
  OptimizeResult out;
  Report& rep = out.report;
  rep.target = target.name;
  rep.cost_model = target.model_kind();
  rep.cost_model_file = target.learned_model_file.string();
  rep.extraction.extractor = std::string(to_string(o.extractor));  // the one asked for, even if none runs
  rep.validation_options = o.validation;
  rep.nodes_before = original.num_nodes();
  rep.ops_before = histogram(original);
  rep.cost_before = targets::graph_cost(*target.model, original);
  set_work(original, rep.flops_before, rep.bytes_before);
  StageClock clock(rep, o.progress);

  // A neuromorphic target prices a time step by the chip's mapping, with
  // spike rates measured on the validation's inputs; a graph that does not
  // fit the chip is refused (Diag::limitation names the limit).
  const bool neuromorphic = target.model->spec().kind == targets::TargetKind::Neuromorphic;
  std::vector<double> activity;
  if (neuromorphic) {
    clock.starts("map to cores");
    auto map = map_measured(original, target, o, &activity);
    if (!map) return std::unexpected(map.error());
    rep.neuromorphic = NeuromorphicRecord{.steps = o.validation.sim.steps,
                                          .samples = o.validation.samples,
                                          .input_rate = o.validation.spike_rate,
                                          .before = *map,
                                          .after = *map,
                                          .secondary = target.model->spec().neuromorphic.secondary};
    rep.cost_before = map->energy_per_step;
    clock.done("map to cores");
  }

  // Our limitation, not the model's fault: a recurrent edge (a spiking
  // layer reading the previous step's value) is a cycle of values, which
  // the e-graph's seeding does not take yet. Never worse: the original is
  // written, and the report says why.
  if (auto recurrent = ir::spiking_stats(original).recurrent_edges; recurrent > 0) {
    keep_original(out, original,
                  fmt::format("the graph has {} recurrent edge{} (reads of the previous time step); the e-graph does "
                              "not hold cycles yet, so nothing was rewritten",
                              recurrent, recurrent == 1 ? "" : "s"));
    clock.total();
    return out;
  }

  clock.starts("seed");
  auto seeded = egraph::tensor::seed(original, {.explanations = true});
  if (!seeded) return std::unexpected(seeded.error());
  const std::size_t seeded_ids = seeded->egraph.num_ids();
  TensorRunner runner({}, std::move(seeded->egraph));
  clock.done("seed");

  auto sat = saturate_with(runner, rules, target, o);
  if (!sat) return std::unexpected(sat.error());
  rep.saturation = std::move(*sat);
  const TensorEGraph& g = runner.egraph;
  clock.done("saturate");
  if (o.egraph_json) out.egraph_json = gym_json(g, *seeded, seeded_ids, target, activity);

  clock.starts(fmt::format("extract ({})", to_string(o.extractor)));
  auto extracted = extract_for(g, *seeded, seeded_ids, target, activity, o, rep.extraction);
  if (!extracted) return std::unexpected(extracted.error());
  clock.done("extract");

  clock.starts("rebuild");
  auto rebuilt = rebuild(g, *seeded, *extracted);
  if (!rebuilt) return std::unexpected(rebuilt.error());
  Folded& folded = rebuilt->folded;
  rep.constants_folded = folded.folded;
  // Channel counts widened to the runtime's blocks (channel_blocks.h): a
  // layout fact the per-kernel cost model does not see, so after
  // extraction; the cost after is the written graph's.
  rep.channels_padded = pad_channels_to_block(folded.graph, target.model->spec().channel_block);
  rep.cost_after = targets::graph_cost(*target.model, folded.graph);
  set_work(folded.graph, rep.flops_after, rep.bytes_after);
  clock.done("rebuild");
  if (neuromorphic)
    // Weights into the chip's format where an exact rescaling does it
    // (optimize/fit_weights.h): a graph transform after extraction, since
    // extraction prices e-nodes from their types and "fits" is a property
    // of the weights' values (docs/spiking.md).
    rep.neuromorphic->rescaled =
        rescale_weights_to_fit(folded.graph, target.model->spec().neuromorphic.weight_bits);
  // Every original value computed by its own node, nothing folded or
  // rescaled: the extracted graph is the original, whose mapping is known
  // (its spike rates are not simulated again).
  const bool same_graph = rep.extraction.explanations.empty() && folded.folded == 0 &&
                          folded.graph.num_nodes() == original.num_nodes() &&
                          (!neuromorphic || rep.neuromorphic->rescaled.empty());
  if (neuromorphic && same_graph) {
    rep.cost_after = rep.cost_before;
  } else if (neuromorphic) {
    clock.starts("map to cores");
    auto map = map_measured(folded.graph, target, o);
    clock.done("map to cores (refined)");
    if (!map) {
      keep_original(out, original, "the refined graph does not fit the chip: " + map.error().message);
      clock.total();
      return out;
    }
    rep.neuromorphic->after = *map;
    rep.cost_after = map->energy_per_step;
  }

  // A graph whose only gain is layers that now fit the chip's weight format,
  // at no more energy, is the better graph.
  const bool fits_better = neuromorphic && !rep.neuromorphic->rescaled.empty() &&
                           rep.cost_after <= rep.cost_before * (1 + 1e-9);
  if (std::string why = not_cheaper_enough(rep, o); !why.empty() && !fits_better) {
    keep_original(out, original, std::move(why));
    clock.total();
    return out;
  }
  out.graph = std::move(folded.graph);
  rep.outcome = Outcome::Optimized;
  rep.nodes_after = out.graph.num_nodes();
  rep.ops_after = histogram(out.graph);
  if (o.validate) {
    clock.starts(fmt::format("validate ({} samples)", o.validation.samples));
    // A spiking graph's weights may have been rescaled (above): its own
    // graph is its meaning.
    auto v = verify::validate(original, out.graph, o.validation, neuromorphic ? nullptr : &rebuilt->exact);
    if (!v) return std::unexpected(v.error());
    rep.validation = *v;
    if (!v->passed) {
      rep.outcome = Outcome::ValidationFailed;
      rep.reason = "first diverging value: " + v->first_divergence;
      if (v->rounding_checked) rep.reason += "; not f32 rounding: " + v->rounding_verdict;
    }
    clock.done("validate");
  }
  clock.total();
  return out;
}

}  // namespace refinery::optimize
