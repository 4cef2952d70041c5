// refinery inspect MODEL: op histogram, parameters, FLOPs, input/output types.
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/model_files.h"
#include "ir/spiking.h"
#include "ir/stats.h"

namespace refinery::cli {
namespace {

std::string human(double v, const char* unit) {
  const char* prefixes[] = {"", " K", " M", " G", " T"};
  int i = 0;
  while (v >= 1000 && i < 4) { v /= 1000; ++i; }
  return i == 0 ? fmt::format("{:.0f}{}{}", v, *unit ? " " : "", unit) : fmt::format("{:.2f}{}{}", v, prefixes[i], unit);
}

int inspect(const std::string& file) {
  auto g = load_model(file);
  if (!g) return report(g.error());
  ir::GraphStats s = ir::compute_stats(*g);
  std::string opsets;
  for (const auto& [domain, v] : g->info.opsets)
    opsets += fmt::format("{}{}={}", opsets.empty() ? "" : ", ", domain.empty() ? "ai.onnx" : domain, v);
  fmt::print("model: {}\n", file);
  fmt::print("  graph @{}, opsets {}{}\n", g->info.graph_name, opsets,
             g->info.producer_name.empty() ? "" : fmt::format(", producer {} {}", g->info.producer_name, g->info.producer_version));
  fmt::print("inputs:\n");
  for (ir::ValueId v : g->inputs()) fmt::print("  {}: {}\n", g->value(v).name, g->value(v).type.str());
  fmt::print("outputs:\n");
  for (ir::ValueId v : g->outputs()) fmt::print("  {}: {}\n", g->value(v).name, g->value(v).type.str());
  fmt::print("nodes: {}\n", s.num_nodes);
  fmt::print("parameters: {} ({}) in {} constants\n", s.num_parameters, human(static_cast<double>(s.parameter_bytes), "B"),
             g->constants().size());
  fmt::print("FLOPs: {} ({}){}\n", s.flops, human(static_cast<double>(s.flops), ""),
             s.nodes_without_flops ? fmt::format(", {} nodes not counted (dynamic shapes or opaque ops)", s.nodes_without_flops) : "");
  if (ir::is_spiking_graph(*g)) {
    ir::SpikingStats sp = ir::spiking_stats(*g);
    fmt::print("spiking: {} layers, {} neurons, {} synapses, {} parameters, {} recurrent edges\n", sp.layers, sp.neurons,
               sp.synapses, sp.parameters, sp.recurrent_edges);
  }
  fmt::print("ops:\n");
  std::vector<std::pair<std::string, int64_t>> ops(s.op_histogram.begin(), s.op_histogram.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [op, count] : ops) fmt::print("  {:<24} {}\n", op, count);
  return 0;
}

}  // namespace

Command add_inspect(CLI::App& app) {
  auto* sub = app.add_subcommand("inspect", "Summarise a model: op histogram, parameters, FLOPs, input/output types");
  auto file = std::make_shared<std::string>();
  sub->add_option("MODEL", *file, "model file (.onnx, .ir or .nir)")->required();
  sub->footer("Examples:\n  refinery inspect examples/tiny_cnn.onnx\n  refinery inspect model.nir");
  return {sub, [file] { return inspect(*file); }};
}

}  // namespace refinery::cli
