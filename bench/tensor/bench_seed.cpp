// Seeding each zoo model into the e-graph (and extracting it back with a size
// cost), plus a synthetic 1,000-node model. Prints one Google Benchmark row per
// model; the counters give the e-graph's size.
//
//   build/bench/tensor/bench_seed [--benchmark_filter=seed/resnet18]
#include <benchmark/benchmark.h>

#include <filesystem>

#include "egraph/tensor/convert.h"
#include "extract/tree_greedy.h"
#include "frontends/onnx.h"

namespace {

using namespace refinery;
namespace fs = std::filesystem;

void seed_graph(benchmark::State& state, const ir::Graph& g) {
  size_t classes = 0, nodes = 0;
  for (auto _ : state) {
    auto s = egraph::tensor::seed(g);
    if (!s) {
      state.SkipWithError(s.error().str().c_str());
      return;
    }
    classes = s->egraph.num_classes();
    nodes = s->egraph.num_nodes();
    benchmark::DoNotOptimize(s->roots.data());
  }
  state.counters["ir_nodes"] = static_cast<double>(g.num_nodes());
  state.counters["eclasses"] = static_cast<double>(classes);
  state.counters["enodes"] = static_cast<double>(nodes);
}

void round_trip(benchmark::State& state, const ir::Graph& g) {
  auto s = egraph::tensor::seed(g);
  if (!s) {
    state.SkipWithError(s.error().str().c_str());
    return;
  }
  for (auto _ : state) {
    extract::TreeExtractor ex(s->egraph, extract::SizeCost{});
    auto back = egraph::tensor::to_graph(
        s->egraph, s->roots, [&](egraph::Id c) -> const egraph::tensor::TensorNode& { return *ex.best(c); }, s->origin);
    benchmark::DoNotOptimize(back.has_value());
  }
}

// A chain of n elementwise ops with a residual every 4: 1,000 nodes.
ir::Graph synthetic(int n) {
  ir::Graph g;
  ir::TensorType t{ir::DType::f32, ir::Shape({ir::Dim::symbol("N"), ir::Dim(256)})};
  ir::ValueId x = g.add_input("x", t);
  ir::ValueId prev = x, skip = x;
  for (int i = 0; i < n; ++i) {
    ir::Node node;
    node.op = i % 4 == 3 ? ir::Op::Add : (i % 2 ? ir::Op::Relu : ir::Op::Tanh);
    node.inputs = node.op == ir::Op::Add ? std::vector<ir::ValueId>{prev, skip} : std::vector<ir::ValueId>{prev};
    ir::NodeId id = g.add_node(std::move(node), {"v" + std::to_string(i)}, {t});
    prev = g.node(id).outputs[0];
    if (i % 4 == 3) skip = prev;
  }
  g.set_outputs({prev});
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  static std::vector<std::pair<std::string, ir::Graph>> models;
  models.emplace_back("synthetic_1000", synthetic(1000));
  fs::path dir = fs::path(REFINERY_BINARY_DIR) / "zoo";
  if (fs::exists(dir)) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".onnx") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files)
      if (auto g = frontends::import_onnx(f)) models.emplace_back(f.stem().string(), std::move(*g));
  }
  for (const auto& [name, g] : models) {
    benchmark::RegisterBenchmark(("seed/" + name).c_str(), [&g = g](benchmark::State& s) {
      seed_graph(s, g);
    })->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("extract_size/" + name).c_str(), [&g = g](benchmark::State& s) {
      round_trip(s, g);
    })->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
