#include "optimize/provenance.h"

#include <set>
#include <string>
#include <unordered_map>

namespace refinery::optimize {

namespace {

using egraph::Id;
using egraph::tensor::TensorNode;

// The rules on the path from term(a) to term(b), in order (a value's entry
// in `explanations`); the reasons that are no rule ("union": a merge
// without one) are left out. Congruence edges are not expanded: what
// happened inside a child is the child class's own explanation, so no
// explanation grows with the depth of the graph.
std::vector<std::pair<std::string, bool>> rule_steps(const egraph::tensor::TensorEGraph& g, Id a, Id b) {
  std::vector<std::pair<std::string, bool>> out;
  for (const egraph::LocalStep& s : g.explain_ids(a, b, /*congruence=*/false)) {
    const std::string& name = g.proof_forest()->reason_name(s.reason);
    if (name != "union") out.emplace_back(name, s.forward);
  }
  return out;
}

}  // namespace

void explain_extraction(const egraph::tensor::TensorEGraph& g, const egraph::tensor::Origin& origin,
                        const extract::EGraphProblem<egraph::tensor::TensorEGraph>& problem,
                        const extract::Solution& solution, ExtractionRecord& record) {
  if (!g.explanations_enabled()) return;
  // Anchors: the nodes of the original values in the class (the chosen node
  // now computes each of them), else the class's first id.
  std::unordered_map<Id, std::vector<Id>> anchors;
  for (Id v : origin.value_class)
    if (v != egraph::kInvalidId) anchors[g.find(v)].push_back(v);
  for (std::size_t i = 0; i < g.num_ids(); ++i) anchors.try_emplace(g.find(egraph::make_id(i)), 1, egraph::make_id(i));

  // Each chosen node owes the rules on the paths from its anchors and what
  // their matches needed (ProofForest::owed), each rule once.
  const auto& forest = *g.proof_forest();
  for (std::size_t c = 0; c < problem.problem.classes.size(); ++c) {
    if (solution.choice[c] == extract::kUnchosen) continue;
    auto owner = g.memo_owner(*problem.nodes[c][static_cast<std::size_t>(solution.choice[c])]);
    if (!owner) continue;
    std::set<std::string> rules;
    for (Id anchor : anchors.at(problem.class_of[c]))
      for (std::uint32_t reason : forest.owed(anchor, *owner))
        if (const std::string& name = forest.reason_name(reason); name != "union") rules.insert(name);
    for (const std::string& r : rules) ++record.rules_used[r];
  }

  // Per original value computed by another node than its own.
  const ir::Graph& graph = *origin.graph;
  for (std::size_t v = 0; v < origin.value_class.size(); ++v) {
    Id id = origin.value_class[v];
    if (id == egraph::kInvalidId || origin.value_node[v].is_leaf()) continue;
    auto it = problem.index_of.find(g.find(id));
    if (it == problem.index_of.end() || solution.choice[it->second] == extract::kUnchosen) continue;
    auto owner = g.memo_owner(*problem.nodes[it->second][static_cast<std::size_t>(solution.choice[it->second])]);
    TensorNode own = origin.value_node[v];
    for (Id& k : own.children()) k = g.find(k);
    if (!owner || g.memo_owner(own) == owner) continue;
    ValueExplanation e{graph.value(ir::ValueId{static_cast<std::uint32_t>(v)}).name, {}};
    for (auto& [name, forward] : rule_steps(g, id, *owner)) e.steps.push_back(forward ? name : name + " (backward)");
    if (!e.steps.empty()) record.explanations.push_back(std::move(e));
  }
}

}  // namespace refinery::optimize
