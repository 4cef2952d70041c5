#include "optimize/optimize.h"

#include <fmt/format.h>

#include <chrono>
#include <set>
#include <unordered_map>

#include "egraph/tensor/convert.h"
#include "extract/greedy.h"
#include "extract/ilp.h"
#include "ir/stats.h"
#include "optimize/fold.h"
#include "optimize/tensor_cost.h"

namespace refinery::optimize {

namespace {

using Clock = std::chrono::steady_clock;

class PhaseTimer {
 public:
  explicit PhaseTimer(verify::Report& r) : report_(r) {}
  void done(const std::string& phase) {
    auto now = Clock::now();
    report_.phase_seconds.emplace_back(phase, std::chrono::duration<double>(now - last_).count());
    last_ = now;
  }

 private:
  verify::Report& report_;
  Clock::time_point last_ = Clock::now();
};

std::map<std::string, std::int64_t> histogram(const ir::Graph& g) { return ir::compute_stats(g).op_histogram; }

}  // namespace

namespace {

// Rules that made a difference by a union alone (neg-neg: (neg (neg ?a))
// => ?a adds no node): where an original value is now computed by another
// original node, the unions on the path between the two ids in the union
// log are what made them equal; their rules are credited once per value.
void credit_unions(const TensorEGraph& g, const egraph::tensor::Origin& origin,
                   const extract::EGraphProblem<TensorEGraph>& problem, const extract::Solution& solution,
                   const SaturationResult& sat, std::map<std::string, std::size_t>& used) {
  std::unordered_map<std::uint32_t, std::vector<std::pair<std::uint32_t, std::int32_t>>> adj;
  for (const auto& u : sat.unions) {
    adj[egraph::index(u.a)].emplace_back(egraph::index(u.b), u.rule);
    adj[egraph::index(u.b)].emplace_back(egraph::index(u.a), u.rule);
  }
  for (std::size_t v = 0; v < origin.value_class.size(); ++v) {
    egraph::Id cv = origin.value_class[v];
    if (cv == egraph::kInvalidId || origin.value_node[v].is_leaf()) continue;
    auto it = problem.index_of.find(g.find(cv));
    if (it == problem.index_of.end() || solution.choice[it->second] == extract::kUnchosen) continue;
    auto owner = g.memo_owner(*problem.nodes[it->second][static_cast<std::size_t>(solution.choice[it->second])]);
    if (!owner || *owner == cv) continue;
    if (egraph::index(*owner) < sat.created_by.size() && sat.created_by[egraph::index(*owner)] >= 0) continue;
    // Breadth-first from cv to the chosen node's id over the union edges.
    std::unordered_map<std::uint32_t, std::pair<std::uint32_t, std::int32_t>> from;
    std::vector<std::uint32_t> queue{egraph::index(cv)};
    from[egraph::index(cv)] = {egraph::index(cv), -1};
    const std::uint32_t goal = egraph::index(*owner);
    for (std::size_t q = 0; q < queue.size() && !from.contains(goal); ++q)
      for (auto [next, rule] : adj[queue[q]])
        if (from.emplace(next, std::pair{queue[q], rule}).second) queue.push_back(next);
    if (!from.contains(goal)) continue;
    std::set<std::int32_t> rules;
    for (std::uint32_t x = goal; x != egraph::index(cv); x = from[x].first)
      if (from[x].second >= 0) rules.insert(from[x].second);
    for (std::int32_t r : rules) ++used[sat.rule_names[static_cast<std::size_t>(r)]];
  }
}

}  // namespace

Expected<OptimizeResult> optimize(const ir::Graph& original, std::span<const TensorRewrite> rules,
                                  std::span<const RuleInfo> rule_infos, std::span<const GraphRewriter> rewriters,
                                  const targets::Target& target, const OptimizeOptions& o) {
  auto start = Clock::now();
  OptimizeResult out;
  verify::Report& rep = out.report;
  rep.target = target.name;
  rep.extractor = o.extractor == ExtractorKind::Ilp ? "ilp" : "greedy";
  rep.strategy = o.saturation.strategy == Strategy::Flat ? "flat" : "phased";
  rep.validation_options = o.validation;
  rep.nodes_before = original.num_nodes();
  rep.ops_before = histogram(original);
  rep.cost_before = targets::graph_cost(*target.model, original);
  PhaseTimer timer(rep);

  auto seeded = egraph::tensor::seed(original);
  if (!seeded) return std::unexpected(seeded.error());
  timer.done("seed");

  SaturationResult sat;
  try {
    sat = saturate(seeded->egraph, rules, rule_infos, rewriters, o.saturation);
  } catch (const egraph::tensor::TypeMismatch& e) {
    return fail(fmt::format("saturation broke the type system (a rule is wrong): {}", e.what()));
  }
  auto& g = seeded->egraph;
  timer.done("saturate");
  rep.saturation = sat.phases;
  rep.stop_reason = sat.stop_reason;
  rep.egraph_nodes = g.num_nodes();
  rep.egraph_classes = g.num_classes();
  rep.rules_fired = sat.fired;

  std::vector<egraph::Id> roots;
  for (egraph::Id r : seeded->roots) roots.push_back(g.find(r));
  TensorCost cost(g, *target.model);
  // On a tie, the original's own node wins: a rewrite must pay for itself.
  auto biased = [&](egraph::Id c, const TensorNode& n) {
    auto id = g.memo_owner(n);
    bool added = id && egraph::index(*id) < sat.created_by.size() && sat.created_by[egraph::index(*id)] >= 0;
    return cost(c, n) + (added ? 1e-12 : 0.0);
  };
  auto problem = extract::make_problem(g, roots, biased);
  extract::Solution solution;
  if (o.extractor == ExtractorKind::Ilp) {
    auto r = extract::extract_ilp(problem.problem, {.time_limit_s = o.ilp_time_limit_s});
    solution = std::move(r.solution);
    rep.extraction_status = fmt::format("{} (cost {:.6g} s, greedy {:.6g} s, {:.2f} s)", r.status, r.cost, r.greedy_cost, r.seconds);
  } else {
    auto r = extract::extract_greedy_dag(problem.problem);
    solution = std::move(r.solution);
    rep.extraction_status = r.fell_back_to_tree ? "greedy (tree answer)" : "greedy (dag)";
  }
  if (auto bad = extract::check_solution(problem.problem, solution); !bad.empty())
    return fail("extraction returned an invalid choice: " + bad);
  // Rules whose e-nodes the result uses.
  for (std::size_t c = 0; c < problem.problem.classes.size(); ++c) {
    if (solution.choice[c] == extract::kUnchosen) continue;
    const TensorNode& n = *problem.nodes[c][static_cast<std::size_t>(solution.choice[c])];
    auto id = g.memo_owner(n);
    if (!id || egraph::index(*id) >= sat.created_by.size()) continue;
    std::int32_t rule = sat.created_by[egraph::index(*id)];
    if (rule >= 0) ++rep.rules_used[sat.rule_names[static_cast<std::size_t>(rule)]];
  }
  credit_unions(g, seeded->origin, problem, solution, sat, rep.rules_used);
  timer.done("extract");

  auto refined = egraph::tensor::to_graph(
      g, seeded->roots, [&](egraph::Id c) -> const TensorNode& { return problem.chosen(solution, g.find(c)); },
      seeded->origin);
  if (!refined) return std::unexpected(refined.error());
  auto folded = fold_constants(*refined);
  if (!folded) return std::unexpected(folded.error());
  rep.constants_folded = folded->folded;
  timer.done("rebuild");

  rep.cost_after = targets::graph_cost(*target.model, folded->graph);
  rep.nodes_after = folded->graph.num_nodes();
  rep.ops_after = histogram(folded->graph);
  bool cheaper = rep.cost_after < rep.cost_before * (1 - 1e-9);
  bool enough = rep.cost_after <= rep.cost_before * (1 - o.min_gain);
  if (!cheaper || !enough) {
    rep.result = "kept original";
    if (!cheaper)
      rep.reason = fmt::format("the extracted graph is not cheaper under the {} model ({:.6g} s vs {:.6g} s)",
                               target.name, rep.cost_after, rep.cost_before);
    else
      rep.reason = fmt::format(
          "the extracted graph is only {:.2f}% cheaper under the {} model ({:.6g} s vs {:.6g} s), below the "
          "minimum gain of {:g}% (--min-gain)",
          100 * (1 - rep.cost_after / rep.cost_before), target.name, rep.cost_after, rep.cost_before,
          100 * o.min_gain);
    rep.cost_after = rep.cost_before;
    rep.nodes_after = rep.nodes_before;
    rep.ops_after = rep.ops_before;
    rep.rules_used.clear();
    out.graph = original;
    out.changed = false;
  } else {
    out.graph = std::move(folded->graph);
    out.changed = true;
    rep.result = "optimized";
    if (o.validate) {
      auto v = verify::validate(original, out.graph, o.validation);
      if (!v) return std::unexpected(v.error());
      rep.validation = *v;
      if (!v->passed) {
        out.valid = false;
        rep.result = "validation failed";
        rep.reason = "first diverging value: " + v->first_divergence;
        if (v->rounding_checked) rep.reason += "; not f32 rounding: " + v->rounding_verdict;
      }
    }
    timer.done("validate");
  }
  rep.phase_seconds.emplace_back("total", std::chrono::duration<double>(Clock::now() - start).count());
  return out;
}

}  // namespace refinery::optimize
