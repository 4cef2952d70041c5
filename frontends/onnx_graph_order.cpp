// Structural checks of an ONNX graph before anything else reads it: every
// value a node reads is defined, nothing is defined twice, and the nodes are
// put in topological order (ONNX requires it; files that break the rule but
// have no cycle are still read).
#include <fmt/format.h>

#include <queue>
#include <set>
#include <unordered_map>

#include "frontends/onnx_internal.h"

namespace refinery::frontends::detail {
namespace {

// Names a subgraph (If / Loop / Scan body) reads from the enclosing graphs.
// They are dependencies of the node that owns the subgraph, though not inputs.
void outer_refs(const onnx::GraphProto& g, std::set<std::string>& out) {
  std::set<std::string> local;
  for (const auto& v : g.input()) local.insert(v.name());
  for (const auto& t : g.initializer()) local.insert(t.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) local.insert(o);
  std::set<std::string> used;
  for (const auto& n : g.node()) {
    for (const auto& i : n.input()) used.insert(i);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) outer_refs(a.g(), used);
      for (const auto& sub : a.graphs()) outer_refs(sub, used);
    }
  }
  for (const auto& o : g.output()) used.insert(o.name());
  for (const auto& name : used)
    if (!name.empty() && !local.contains(name)) out.insert(name);
}

}  // namespace

std::string node_where(const onnx::NodeProto& node, int index) {
  if (!node.name().empty()) return fmt::format("node '{}'", node.name());
  return fmt::format("node '#{} {}'", index, node.op_type());
}

Expected<std::optional<Diag>> sort_nodes(onnx::GraphProto* graph, const std::string& file) {
  const int n = graph->node_size();
  constexpr int kOutside = -1;  // defined by a graph input or an initializer
  std::unordered_map<std::string, int> producer;
  for (const auto& t : graph->initializer()) producer.emplace(t.name(), kOutside);
  for (const auto& t : graph->sparse_initializer()) producer.emplace(t.values().name(), kOutside);
  for (const auto& v : graph->input()) {
    // An input may share its name with an initializer (an overridable default).
    producer.emplace(v.name(), kOutside);
  }
  for (int i = 0; i < n; ++i) {
    const auto& node = graph->node(i);
    for (const auto& out : node.output()) {
      if (out.empty()) continue;
      auto [it, fresh] = producer.emplace(out, i);
      if (!fresh) {
        std::string other =
            it->second == kOutside ? "a graph input or initializer" : node_where(graph->node(it->second), it->second);
        return fail(fmt::format("value '{}' is defined twice (also by {})", out, other), node_where(node, i), file);
      }
    }
  }

  // Dependencies: node i must come after the producer of each value it reads.
  std::vector<std::vector<std::pair<int, std::string>>> pred_edges(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const auto& node = graph->node(i);
    auto add_dep = [&](const std::string& name, bool required) -> Expected<void> {
      if (name.empty()) return {};
      auto it = producer.find(name);
      if (it == producer.end()) {
        if (!required) return {};  // the checker reports bad subgraph references
        return fail(fmt::format("input '{}' is not defined by any node, graph input or initializer", name),
                    node_where(node, i), file);
      }
      if (it->second != kOutside) pred_edges[static_cast<size_t>(i)].emplace_back(it->second, name);
      return {};
    };
    for (const auto& in : node.input())
      if (auto ok = add_dep(in, true); !ok) return std::unexpected(ok.error());
    std::set<std::string> implicit;
    for (const auto& a : node.attribute()) {
      if (a.has_g()) outer_refs(a.g(), implicit);
      for (const auto& sub : a.graphs()) outer_refs(sub, implicit);
    }
    for (const auto& name : implicit)
      if (auto ok = add_dep(name, false); !ok) return std::unexpected(ok.error());
  }
  for (const auto& out : graph->output())
    if (!producer.contains(out.name()))
      return fail(fmt::format("graph output '{}' is not defined by any node, graph input or initializer", out.name()),
                  {}, file);

  // Kahn's algorithm, always taking the earliest ready node, so a graph that
  // is already sorted keeps its order exactly.
  std::vector<int> missing(static_cast<size_t>(n), 0);
  std::vector<std::vector<int>> succs(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    for (const auto& [p, name] : pred_edges[static_cast<size_t>(i)]) {
      ++missing[static_cast<size_t>(i)];
      succs[static_cast<size_t>(p)].push_back(i);
    }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int i = 0; i < n; ++i)
    if (missing[static_cast<size_t>(i)] == 0) ready.push(i);
  std::vector<int> order;
  order.reserve(static_cast<size_t>(n));
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int s : succs[static_cast<size_t>(i)])
      if (--missing[static_cast<size_t>(s)] == 0) ready.push(s);
  }

  if (static_cast<int>(order.size()) < n) {
    // Walk unsorted predecessors from an unsorted node until one repeats: that
    // node lies on a cycle (the first unsorted node may only follow one).
    int at = 0;
    while (missing[static_cast<size_t>(at)] == 0) ++at;
    std::vector<int> seen_at(static_cast<size_t>(n), -1);
    std::string via;
    for (int step = 0; seen_at[static_cast<size_t>(at)] < 0; ++step) {
      seen_at[static_cast<size_t>(at)] = step;
      for (const auto& [p, name] : pred_edges[static_cast<size_t>(at)])
        if (missing[static_cast<size_t>(p)] > 0) {
          at = p;
          via = name;
          break;
        }
    }
    // `at` is on the cycle; report the value it reads from the cycle.
    for (const auto& [p, name] : pred_edges[static_cast<size_t>(at)])
      if (missing[static_cast<size_t>(p)] > 0) {
        via = name;
        break;
      }
    return fail(fmt::format("nodes form a cycle through value '{}'", via), node_where(graph->node(at), at), file);
  }

  bool sorted = true;
  for (int i = 0; i < n; ++i) sorted = sorted && order[static_cast<size_t>(i)] == i;
  if (sorted) return std::nullopt;
  // The first node that reads a value defined after it, for the note.
  std::optional<Diag> note;
  for (int i = 0; i < n && !note; ++i)
    for (const auto& [p, name] : pred_edges[static_cast<size_t>(i)])
      if (p > i) {
        note = Diag{file, node_where(graph->node(i), i),
                    fmt::format("nodes are not in topological order (this node reads '{}' before {} defines it); "
                                "sorted",
                                name, node_where(graph->node(p), p))};
        break;
      }
  std::vector<onnx::NodeProto> nodes(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) nodes[static_cast<size_t>(i)].Swap(graph->mutable_node(order[static_cast<size_t>(i)]));
  for (int i = 0; i < n; ++i) graph->mutable_node(i)->Swap(&nodes[static_cast<size_t>(i)]);
  return note;
}

}  // namespace refinery::frontends::detail
