// Dumps of a clean e-graph: Graphviz dot (one dotted cluster per e-class,
// for small graphs) and the JSON format of the extraction-gym benchmark
// (egraph-serialize): {"nodes": {"<class>.<i>": {"op", "children", "eclass",
// "cost"}}, "root_eclasses": [...]}, children naming node "<class>.0".
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "egraph/egraph.h"

namespace refinery::egraph {

// Escapes text for a JSON string literal (also fine inside dot "...").
inline std::string json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out += c;
        }
    }
  }
  return out;
}

template <ENode N, class A>
std::string to_dot(const EGraph<N, A>& g) {
  std::string out = "digraph egraph {\n  compound=true\n  clusterrank=local\n";
  for (Id c : g.class_ids()) {
    out += fmt::format("  subgraph cluster_{} {{\n    style=dotted\n    label=\"e{}\"\n", index(c), index(c));
    const auto& nodes = g[c].nodes;
    for (std::size_t i = 0; i < nodes.size(); ++i)
      out += fmt::format("    \"{}.{}\" [label=\"{}\"]\n", index(c), i, json_escape(nodes[i].op_string()));
    out += "  }\n";
  }
  for (Id c : g.class_ids()) {
    const auto& nodes = g[c].nodes;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      auto kids = nodes[i].children();
      for (std::size_t k = 0; k < kids.size(); ++k) {
        Id child = g.find(kids[k]);
        out += fmt::format("  \"{}.{}\" -> \"{}.0\" [lhead=cluster_{}, label=\"{}\"]\n", index(c), i, index(child),
                           index(child), k);
      }
    }
  }
  out += "}\n";
  return out;
}

// `cost(node)` prices each e-node (default 1).
template <ENode N, class A>
std::string to_extraction_gym_json(const EGraph<N, A>& g, std::span<const Id> roots,
                                   const std::function<double(const N&)>& cost = {}) {
  std::string out = "{\n  \"nodes\": {";
  bool first = true;
  for (Id c : g.class_ids()) {
    const auto& nodes = g[c].nodes;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      out += first ? "\n" : ",\n";
      first = false;
      out += fmt::format("    \"{}.{}\": {{\"op\": \"{}\", \"children\": [", index(c), i,
                         json_escape(nodes[i].op_string()));
      auto kids = nodes[i].children();
      for (std::size_t k = 0; k < kids.size(); ++k)
        out += fmt::format("{}\"{}.0\"", k ? ", " : "", index(g.find(kids[k])));
      double price = cost ? cost(nodes[i]) : 1.0;
      out += fmt::format("], \"eclass\": \"{}\", \"cost\": {}}}", index(c), price);
    }
  }
  out += "\n  },\n  \"root_eclasses\": [";
  for (std::size_t r = 0; r < roots.size(); ++r) out += fmt::format("{}\"{}\"", r ? ", " : "", index(g.find(roots[r])));
  out += "]\n}\n";
  return out;
}

}  // namespace refinery::egraph
