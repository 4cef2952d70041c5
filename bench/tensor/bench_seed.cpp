// Seeding each zoo model into the e-graph (and extracting it back with a size
// cost), plus a synthetic 1,000-node model; and saturating each with the rule
// library under optimize's schedule (phased, explanations on, the default
// node and iteration limits, a 60 s clock so that limits, not the clock, end
// it). Prints one Google Benchmark row per model; the counters give the
// e-graph's size, and for saturate/ the e-nodes saturation added per CPU
// second of the process (`enodes_per_s`: all search threads' time, so on a
// loaded machine it still measures the work; the Time column is wall time)
// with the search threads (`threads`).
//
//   build/bench/tensor/bench_seed [--benchmark_filter=seed/resnet18] [--threads=N]
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "egraph/tensor/convert.h"
#include "extract/tree_greedy.h"
#include "frontends/onnx.h"
#include "optimize/saturate.h"
#include "rules/rules.h"

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

struct Library {
  std::vector<rules::TensorRewrite> rewrites;
  std::vector<rules::RuleKind> kinds;
};

void saturate_graph(benchmark::State& state, const ir::Graph& g, const Library& lib, std::size_t threads) {
  optimize::SaturationOptions options;
  options.time_limit_s = 60;
  options.threads = threads;
  double added = 0, nodes = 0, classes = 0, iterations = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto s = egraph::tensor::seed(g, {.explanations = true});
    if (!s) {
      state.SkipWithError(s.error().str().c_str());
      return;
    }
    const double seeded = static_cast<double>(s->egraph.num_nodes());
    optimize::TensorRunner runner({}, std::move(s->egraph));
    state.ResumeTiming();
    optimize::SaturationRecord rec = optimize::saturate(runner, lib.rewrites, lib.kinds, options);
    added += static_cast<double>(rec.egraph_nodes) - seeded;
    nodes = static_cast<double>(rec.egraph_nodes);
    classes = static_cast<double>(rec.egraph_classes);
    iterations = static_cast<double>(rec.iterations());
  }
  state.counters["ir_nodes"] = static_cast<double>(g.num_nodes());
  state.counters["enodes"] = nodes;
  state.counters["eclasses"] = classes;
  state.counters["iterations"] = iterations;
  state.counters["threads"] = static_cast<double>(threads);
  state.counters["enodes_per_s"] = benchmark::Counter(added, benchmark::Counter::kIsRate);
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
  std::size_t threads = 1;
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0)
      threads = static_cast<std::size_t>(std::max(1, std::atoi(argv[i] + 10)));
    else
      rest.push_back(argv[i]);
  }
  static Library lib;
  if (auto loaded = rules::load_library()) {
    lib.rewrites = loaded->rewrites();
    for (const rules::Rule& r : loaded->rules()) lib.kinds.push_back(r.kind);
  } else {
    std::fprintf(stderr, "bench_seed: %s\n", loaded.error().str().c_str());
    return 2;
  }
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
    benchmark::RegisterBenchmark(("saturate/" + name).c_str(), [&g = g, threads](benchmark::State& s) {
      saturate_graph(s, g, lib, threads);
    })->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
  }
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
