// refinery inspect MODEL: op histogram, parameters, FLOPs, input/output types.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <span>

#include "cli/commands.h"
#include "cli/model_files.h"
#include "ir/spiking.h"
#include "ir/stats.h"

namespace refinery::cli {
namespace {

std::string human(double v, const char* unit) {
  const char* prefixes[] = {"", " K", " M", " G", " T"};
  int i = 0;
  while (v >= 1000 && i < 4) {
    v /= 1000;
    ++i;
  }
  return i == 0 ? fmt::format("{:.0f}{}{}", v, *unit ? " " : "", unit)
                : fmt::format("{:.2f}{}{}", v, prefixes[i], unit);
}

// What the model is: its ONNX opsets, or for a graph from NIR (no opsets) the
// NIR version it was read with.
std::string origin(const ir::Graph& g) {
  std::string opsets;
  for (const auto& [domain, v] : g.info.opsets)
    opsets += fmt::format("{}{}={}", opsets.empty() ? "" : ", ", domain.empty() ? "ai.onnx" : domain, v);
  std::string nir_version;
  for (const auto& [key, value] : g.info.metadata)
    if (key == "nir_version") nir_version = value;
  bool nir = g.info.producer_name == "nir" || !nir_version.empty();
  std::string out = !opsets.empty() ? "opsets " + opsets
                    : nir           ? "NIR graph" + (nir_version.empty() ? "" : ", NIR version " + nir_version)
                    : ir::is_spiking_graph(g) ? std::string("spiking graph, no opsets")
                                              : std::string("no opsets");
  if (!g.info.producer_name.empty() && g.info.producer_name != "nir")
    out += fmt::format(", producer {}{}", g.info.producer_name,
                       g.info.producer_version.empty() ? "" : " " + g.info.producer_version);
  return out;
}

// NIR ops are listed by their NIR type names ("LIF", "Affine"), not the
// op table's "nir.LIF".
std::string op_label(const std::string& op) { return op.rfind("nir.", 0) == 0 ? op.substr(4) : op; }

// The same facts as the text, for a machine (--json).
std::string to_json(const std::string& file, const ir::Graph& g, const ir::GraphStats& s, bool spiking) {
  using nlohmann::json;
  auto values = [&](std::span<const ir::ValueId> ids) {
    json out = json::array();
    for (ir::ValueId v : ids) out.push_back({{"name", g.value(v).name}, {"type", g.value(v).type.str()}});
    return out;
  };
  json ops = json::object();
  for (const auto& [op, count] : s.op_histogram) ops[op_label(op)] = count;
  json j{{"model", file},
         {"graph", g.info.graph_name},
         {"origin", origin(g)},
         {"inputs", values(g.inputs())},
         {"outputs", values(g.outputs())},
         {"nodes", s.num_nodes},
         {"parameters", s.num_parameters},
         {"parameter_bytes", s.parameter_bytes},
         {"constants", g.constants().size()},
         {"flops", s.flops},
         {"flops_per_step", spiking},
         {"nodes_without_flops", s.nodes_without_flops},
         {"ops", ops}};
  if (spiking) {
    ir::SpikingStats sp = ir::spiking_stats(g);
    j["spiking"] = {{"layers", sp.layers},
                    {"neurons", sp.neurons},
                    {"synapses", sp.synapses},
                    {"parameters", sp.parameters},
                    {"recurrent_edges", sp.recurrent_edges}};
  }
  return j.dump(2) + "\n";
}

int inspect(const std::string& file, const std::string& json) {
  auto g = load_model(file);
  if (!g) return report(g.error());
  ir::GraphStats s = ir::compute_stats(*g);
  bool spiking = ir::is_spiking_graph(*g);
  if (!json.empty()) return write_json(json, to_json(file, *g, s, spiking));
  fmt::print("model: {}\n", file);
  fmt::print("  graph @{}, {}\n", g->info.graph_name, origin(*g));
  fmt::print("inputs:\n");
  for (ir::ValueId v : g->inputs()) fmt::print("  {}: {}\n", g->value(v).name, g->value(v).type.str());
  fmt::print("outputs:\n");
  for (ir::ValueId v : g->outputs()) fmt::print("  {}: {}\n", g->value(v).name, g->value(v).type.str());
  fmt::print("nodes: {}\n", s.num_nodes);
  fmt::print("parameters: {} ({}) in {} constants\n", s.num_parameters,
             human(static_cast<double>(s.parameter_bytes), "B"), g->constants().size());
  // A spiking graph runs once per time step: its figures are per step.
  fmt::print("FLOPs: {} ({}){}{}\n", s.flops, human(static_cast<double>(s.flops), ""), spiking ? " per step" : "",
             s.nodes_without_flops
                 ? fmt::format(", {} nodes not counted (dynamic shapes or opaque ops)", s.nodes_without_flops)
                 : "");
  if (spiking) {
    ir::SpikingStats sp = ir::spiking_stats(*g);
    fmt::print("spiking: {} layers, {} neurons, {} synapses, {} parameters, {} recurrent edges\n", sp.layers,
               sp.neurons, sp.synapses, sp.parameters, sp.recurrent_edges);
    fmt::print("synaptic operations: {}{} multiply-adds per step\n", sp.synapses,
               sp.synapses >= 1000 ? fmt::format(" ({})", human(static_cast<double>(sp.synapses), "")) : "");
  }
  fmt::print("ops:\n");
  std::vector<std::pair<std::string, int64_t>> ops;
  for (const auto& [op, count] : s.op_histogram) ops.emplace_back(op_label(op), count);
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [op, count] : ops) fmt::print("  {:<24} {}\n", op, count);
  return 0;
}

}  // namespace

Command add_inspect(CLI::App& app) {
  auto* sub = app.add_subcommand("inspect", "Summarise a model: op histogram, parameters, FLOPs, input/output types");
  auto file = std::make_shared<std::string>();
  auto json = std::make_shared<std::string>();
  sub->add_option("MODEL", *file, "model file (.onnx, .ir or .nir)")->required();
  sub->add_option("--json", *json, "Write the summary as JSON here instead (- for stdout)");
  sub->footer(
      "Examples:\n  refinery inspect examples/tiny_cnn.onnx\n  refinery inspect model.nir\n"
      "  refinery inspect examples/tiny_cnn.onnx --json -");
  return {sub, [file, json] { return inspect(*file, *json); }};
}

}  // namespace refinery::cli
