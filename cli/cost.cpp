// refinery cost / measure / calibrate: the cost models from the user's side.
// `cost` prints a target's predicted cost of a model, per node; `measure`
// times ONNX Runtime kernels as micro-models (targets/kernels.h) through
// tools/ort/measure.mjs; `calibrate` measures and trains the learned CPU
// model (targets/learned.h) where `--target cpu` finds it. docs/targets.md.
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/commands.h"
#include "cli/model_files.h"
#include "frontends/onnx.h"
#include "ir/io.h"
#include "targets/cost_model.h"
#include "targets/kernels.h"
#include "targets/learned.h"

namespace refinery::cli {
namespace {

namespace fs = std::filesystem;

#ifdef REFINERY_SOURCE_DIR
const char* const kDefaultScript = REFINERY_SOURCE_DIR "/tools/ort/measure.mjs";
#else
const char* const kDefaultScript = "tools/ort/measure.mjs";
#endif

struct MeasureArgs {
  std::vector<std::string> models;
  std::string out_dir, script = kDefaultScript;
  std::string target = "cpu";  // whose analytic model is the features' baseline
  std::string variants = "1x1,2x1,1x0.5";
  std::vector<int64_t> model_dims{8, 32};  // whole models' symbolic dims bound to each
  int runs = 9, warmup = 2;
  double min_ms = 20;
  bool no_time = false;
  bool gemm_sweep = true;  // also the MatMuls of gemm_sweep_graph (targets::kSweepModel)
};

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

Expected<std::vector<targets::Variation>> parse_variants(const std::string& spec) {
  std::vector<targets::Variation> out;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    auto x = item.find('x');
    try {
      if (x == std::string::npos) throw std::invalid_argument(item);
      targets::Variation v{std::stoll(item.substr(0, x)), std::stod(item.substr(x + 1))};
      if (v.batch < 1 || !(v.spatial > 0)) throw std::invalid_argument(item);
      out.push_back(v);
    } catch (const std::exception&) {
      return fail(fmt::format("--variants expects BATCHxSPATIAL,... (as 2x0.5), got '{}'", item));
    }
  }
  if (out.empty()) return fail("--variants is empty");
  return out;
}

std::string hex_id(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return fmt::format("{:016x}", h);
}

nlohmann::json features_json(const targets::Features& f) {
  nlohmann::json row = nlohmann::json::array();
  for (float v : f) row.push_back(v);
  return row;
}

// A "context" record's features: its node's, as one row.
nlohmann::json context_features(const targets::OpDesc& node, const targets::CostModel& baseline) {
  return nlohmann::json::array({features_json(targets::kernel_features(node, baseline))});
}

// A micro-model's features, one row per node that runs (constant
// expressions in it are folded when ONNX Runtime loads it), and its ops.
std::pair<nlohmann::json, nlohmann::json> micro_model_features(const ir::Graph& micro,
                                                               const targets::CostModel& baseline) {
  nlohmann::json feats = nlohmann::json::array(), ops = nlohmann::json::array();
  std::vector<targets::OpDesc> descs = targets::node_descs(micro);
  for (std::size_t i = 0; i < micro.num_nodes(); ++i) {
    const targets::OpDesc& d = descs[i];
    if (d.op == ir::Op::Constant || (d.op != ir::Op::Opaque && d.all_inputs_constant())) continue;
    feats.push_back(features_json(targets::kernel_features(d, baseline, /*timed_alone=*/true)));
    ops.push_back(std::string(ir::op_name(micro.nodes()[i].op)));
  }
  return {feats, ops};
}

// One node of `op` appended to g: its result, named `name`, of type `type`.
ir::ValueId append(ir::Graph& g, ir::Op op, std::vector<ir::ValueId> inputs, const std::string& name,
                   const ir::TensorType& type) {
  ir::Node n;
  n.op = op;
  n.inputs = std::move(inputs);
  return g.node(g.add_node(std::move(n), {name}, {type})).outputs[0];
}

// MatMuls of a transformer's shapes beyond the zoo's: [1, M, K] x [K, N] for M in {16, 64, 256}, K and N in
// {64, 256, 1024}, weights constant. Held out, a family's GEMMs larger than any other family's were
// priced from the trees' edge: bert_encoder's 64x256x1024 at -18 points of its -20% (session 27). One
// input and one chain per M, through every (K, N) once (an Euler circuit of the widths), so that its run is
// its kernels, not 27 inputs' feeds (those were shared among the kernels in context, +20 us each).
ir::Graph gemm_sweep_graph() {
  ir::Graph g;
  std::vector<ir::ValueId> outs;
  const std::vector<int64_t> widths{64, 64, 256, 256, 1024, 1024, 64, 1024, 256, 64};
  for (int64_t m : {16, 64, 256}) {
    ir::ValueId x = g.add_input(fmt::format("x{}", m), {ir::DType::f32, ir::Shape({1, m, widths[0]})});
    for (std::size_t i = 0; i + 1 < widths.size(); ++i) {
      const int64_t k = widths[i], n = widths[i + 1];
      const std::string at = fmt::format("{}x{}x{}", m, k, n);
      auto w = std::make_shared<const ir::Tensor>(
          ir::Tensor::from_values<float>(ir::DType::f32, {k, n}, std::vector<float>(k * n, 0.01f)));
      x = append(g, ir::Op::MatMul, {x, g.add_constant("w" + at, w)}, "y" + at, {ir::DType::f32, ir::Shape({1, m, n})});
    }
    outs.push_back(x);
  }
  g.set_outputs(outs);
  return g;
}

// Writes DIR/kernels/*.onnx, DIR/overhead.onnx and DIR/manifest.jsonl.
Expected<std::size_t> write_manifest(const MeasureArgs& a) {
  auto variants = parse_variants(a.variants);
  if (!variants) return std::unexpected(variants.error());
  auto spec = targets::find_spec(a.target);
  if (!spec) return std::unexpected(spec.error());
  auto baseline = targets::learned_baseline(*spec);
  fs::path dir(a.out_dir);
  std::error_code ec;
  fs::create_directories(dir / "kernels", ec);
  if (ec) return fail(fmt::format("cannot create the folder: {}", ec.message()), {}, (dir / "kernels").string());
  struct Entry {
    nlohmann::json json;
    std::set<std::string> models;
  };
  std::map<std::string, Entry> entries;  // by id: one micro-model per distinct kernel instance
  std::vector<std::string> order;
  auto add = [&](const ir::Graph& micro, const std::string& model, const std::string& head) -> Expected<std::string> {
    auto [feats, ops] = micro_model_features(micro, *baseline);
    std::string id = hex_id(feats.dump() + ops.dump());
    auto it = entries.find(id);
    if (it == entries.end()) {
      fs::path file = dir / "kernels" / (id + ".onnx");
      if (!fs::exists(file, ec))
        if (auto ok = frontends::export_onnx(micro, file); !ok) return std::unexpected(ok.error());
      nlohmann::json j{{"id", id}, {"kind", "kernel"}, {"file", fs::absolute(file).string()}, {"ops", ops},
                       {"features", feats}};
      if (!head.empty()) j["head"] = head;
      it = entries.emplace(id, Entry{j, {}}).first;
      order.push_back(id);
    }
    it->second.models.insert(model);
    return id;
  };
  std::size_t skipped = 0;
  // Every kernel ORT would run of g, in each shape variant (and a fused
  // kernel's head alone), as a micro-model of `name`.
  auto add_kernels = [&](const ir::Graph& g, const std::string& name) -> Expected<void> {
    for (const targets::Kernel& k : targets::ort_cpu_kernels(g))
      for (const targets::Variation& v : *variants) {
        auto micro = targets::kernel_graph(g, k, v);
        if (!micro) {
          ++skipped;
          continue;
        }
        std::string head;
        if (k.nodes.size() > 1) {
          auto alone = targets::kernel_graph(g, targets::Kernel{{k.nodes[0]}}, v);
          if (!alone) {
            ++skipped;
            continue;
          }
          auto id = add(*alone, name, "");
          if (!id) return std::unexpected(id.error());
          head = *id;
        }
        if (auto id = add(*micro, name, head); !id) return std::unexpected(id.error());
      }
    return {};
  };
  // Whole models: the given ones as they are, and the graphs written to DIR/models/STEM.onnx (kept when there).
  std::vector<nlohmann::json> whole;
  auto add_whole = [&](const std::string& id, const fs::path& file, const std::string& name) {
    whole.push_back(
        {{"id", "model:" + id}, {"kind", "model"}, {"file", fs::absolute(file).string()}, {"models", {name}}});
  };
  auto write_model = [&](const ir::Graph& graph, const std::string& stem) -> Expected<fs::path> {
    fs::path file = dir / "models" / (stem + ".onnx");
    fs::create_directories(file.parent_path(), ec);
    if (!fs::exists(file, ec))
      if (auto ok = frontends::export_onnx(graph, file); !ok) return std::unexpected(ok.error());
    return file;
  };
  for (const std::string& m : a.models) {
    auto g = load_model(m);
    if (!g) return std::unexpected(g.error());
    std::string name = fs::path(m).stem().string();
    if (auto ok = add_kernels(*g, name); !ok) return std::unexpected(ok.error());
    add_whole(name, m, name);
    // Shape-varied copies: the symbolic dims of its inputs bound to each of
    // --model-dims, where every type is then static (an opaque op's may not be).
    for (int64_t size : a.model_dims) {
      ir::Graph copy = *g;
      bool symbolic = false;
      for (ir::ValueId v : copy.inputs())
        if (copy.value(v).type.shape.ranked())
          for (ir::Dim& d : copy.value(v).type.shape.dims())
            if (!d.is_static()) d = ir::Dim(size), symbolic = true;
      if (!symbolic || !copy.infer_shapes()) break;
      bool all_static = true;
      for (uint32_t v = 0; v < copy.num_values(); ++v) all_static &= copy.value(ir::ValueId(v)).type.shape.is_static();
      if (!all_static) break;
      const std::string stem = fmt::format("{}@{}", name, size);
      auto file = write_model(copy, stem);
      if (!file) return std::unexpected(file.error());
      add_whole(stem, *file, name);
    }
  }
  if (a.gemm_sweep) {  // its kernels alone and as a whole model, in context
    const std::string name(targets::kSweepModel);
    const ir::Graph sweep = gemm_sweep_graph();
    if (auto ok = add_kernels(sweep, name); !ok) return std::unexpected(ok.error());
    auto file = write_model(sweep, name);
    if (!file) return std::unexpected(file.error());
    add_whole(name, *file, name);
  }
  // The run overhead: one session run of a one-element Add; and the
  // dispatch of a kernel inside a run: a chain of kDispatchChain such Adds
  // (read_dataset takes the overhead off and divides by the Adds past one).
  std::string text;
  for (int adds : {1, targets::kDispatchChain}) {
    ir::Graph tiny;
    ir::TensorType one{ir::DType::f32, ir::Shape({ir::Dim(1)})};
    ir::ValueId v = tiny.add_input("x", one), y = tiny.add_input("y", one);
    for (int i = 0; i < adds; ++i) v = append(tiny, ir::Op::Add, {v, y}, fmt::format("z{}", i), one);
    tiny.set_outputs({v});
    const std::string kind = adds == 1 ? "overhead" : "dispatch";
    const fs::path file = dir / (kind + ".onnx");
    if (auto ok = frontends::export_onnx(tiny, file); !ok) return std::unexpected(ok.error());
    text += nlohmann::json{{"id", kind}, {"kind", kind}, {"file", fs::absolute(file).string()}}.dump() + "\n";
  }
  for (const std::string& id : order) {
    nlohmann::json j = entries[id].json;
    j["models"] = std::vector<std::string>(entries[id].models.begin(), entries[id].models.end());
    text += j.dump() + "\n";
  }
  for (const auto& j : whole) text += j.dump() + "\n";
  if (auto ok = ir::write_files_atomic({{(dir / "manifest.jsonl").string(), text}}); !ok)
    return std::unexpected(ok.error());
  fmt::print(stderr, "measure: {} micro-models and {} whole models listed in {} ({} kernel variants do not fit)\n",
             order.size(), whole.size(), (dir / "manifest.jsonl").string(), skipped);
  return order.size();
}

// Each profiled whole model of the dataset (measure.mjs profiles them) as
// its nodes' shares of its run (targets::in_context_times), appended to the
// dataset as "context" records once per model: training data as ONNX
// Runtime runs the model, its fusions and NCHWc reorders included.
Expected<std::size_t> add_context_records(const fs::path& dataset, const std::string& target) {
  auto spec = targets::find_spec(target);
  if (!spec) return std::unexpected(spec.error());
  auto baseline = targets::learned_baseline(*spec);
  std::ifstream in(dataset);
  if (!in) return fail("cannot open the dataset", {}, dataset.string());
  std::vector<nlohmann::json> models;
  std::set<std::string> done;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;  // read_dataset reports where
    std::string kind = j.value("kind", "");
    if (kind == "context") done.insert(j.value("of", ""));
    if (kind == "model" && j.contains("profile") && !j.contains("error")) models.push_back(std::move(j));
  }
  std::string text;
  std::size_t added = 0;
  for (const auto& m : models) {
    std::string name = m.at("id").get<std::string>().substr(6);  // "model:NAME[@SIZE]"
    if (done.contains(m.at("id"))) continue;
    auto g = load_model(m.at("file").get<std::string>());
    if (!g) return std::unexpected(g.error());
    // Only its node and value names are read: not checked, not typed.
    auto opt =
        frontends::import_onnx(m.at("optimized").get<std::string>(), {.infer_shapes = false, .run_checker = false});
    if (!opt) return std::unexpected(opt.error());
    // The profiler's kernel times are wall time; the run is CPU time. Where
    // other processes held the core, wall time counts their share too, in
    // proportion to a kernel's length: scaled by the profiled runs' CPU
    // time over their wall time (a dataset from before that was recorded:
    // the timed run's), so that only the profiler's own cost per kernel is
    // left for in_context_times's dispatch to take off. Unscaled, at load
    // 7 the profile summed to twice the run, and the dispatch that
    // reconciled them (-1.3 ms per kernel on inception_v3) left 73 of its
    // 94 Convs at the 0.1 us floor. Not all of it: profile_cpu_factor.
    const double runs_cpu_per_wall =
        m.contains("profile_cpu_per_wall")
            ? m.at("profile_cpu_per_wall").get<double>()
            : std::min(1.0, m.at("median_ms").get<double>() / std::max(1e-9, m.value("wall_ms", 0.0)));
    const double run_ms = m.at("median_ms").get<double>() - m.at("overhead_ms").get<double>();
    std::vector<targets::ProfiledKernel> kernels;
    double profiled_ms = 0;
    for (const auto& k : m.at("profile")) {
      kernels.push_back({k.at(0).get<std::string>(), k.at(1).get<double>()});
      profiled_ms += kernels.back().us * 1e-3;
    }
    const double cpu_per_wall = targets::profile_cpu_factor(profiled_ms, run_ms, runs_cpu_per_wall);
    for (targets::ProfiledKernel& k : kernels) k.us *= cpu_per_wall;
    auto times = targets::in_context_times(*g, *opt, kernels, run_ms, *baseline);
    if (!times) {
      fmt::print(stderr, "measure: {}: left out of the in-context data: {}\n", name, times.error().str());
      continue;
    }
    // A group ONNX Runtime fuses is described as its fused op (its time is the kernel's).
    const std::vector<targets::RuntimeFusion> fused = targets::fused_by_runtime(*g);
    std::vector<targets::OpDesc> descs = targets::runtime_descs(*g, fused);
    for (std::size_t i = 0; i < descs.size(); ++i) {
      if (times->ms[i] < 0) continue;
      nlohmann::json j{{"id", fmt::format("context:{}:{}", name, i)},
                       {"kind", "context"},
                       {"file", m.at("file")},
                       {"models", m.at("models")},
                       {"of", m.at("id")},
                       {"op", std::string(ir::op_name(descs[i].op))},
                       {"features", context_features(descs[i], *baseline)},
                       {"ms", times->ms[i]}};
      text += j.dump() + "\n";
      ++added;
    }
    fmt::print(stderr,
               "measure: {}: {} profiled kernels ({} matching no node), times x {:.3f} (CPU per wall) x {:.3f}, "
               "{:+.4f} ms per kernel to sum to the run's {:.4f} ms\n",
               name, times->kernels, times->unmatched, cpu_per_wall, times->scale, times->dispatch_ms, run_ms);
  }
  std::ofstream out(dataset, std::ios::app);
  out << text;
  if (!out) return fail("cannot append to the dataset", {}, dataset.string());
  return added;
}

int run_measure(const MeasureArgs& a) {
  auto n = write_manifest(a);
  if (!n) return report(n.error());
  if (a.no_time) return 0;
  std::error_code ec;
  if (!fs::exists(a.script, ec)) {
    fmt::print(stderr, "refinery: error: {}: the ONNX Runtime measuring script is not there (--ort-script)\n",
               a.script);
    return kExitLimitation;
  }
  fs::path dir(a.out_dir);
  std::string cmd = fmt::format("node {} {} {} --runs {} --warmup {} --min-ms {}", shell_quote(a.script),
                                shell_quote((dir / "manifest.jsonl").string()),
                                shell_quote((dir / "dataset.jsonl").string()), a.runs, a.warmup, a.min_ms);
  int rc = std::system(cmd.c_str());
  if (rc != 0) {
    fmt::print(stderr, "refinery: error: measuring failed: {} (exit {})\n", cmd, rc);
    return kExitLimitation;
  }
  if (auto ok = add_context_records(dir / "dataset.jsonl", a.target); !ok) return report(ok.error());
  return 0;
}

void add_measure_flags(CLI::App* sub, MeasureArgs& a) {
  sub->add_option("--variants", a.variants,
                  "Shape variations per kernel, BATCHxSPATIAL,...: the batch dim and the spatial (or sequence) dims "
                  "scaled")
      ->capture_default_str();
  sub->add_option("--runs", a.runs, "Timed runs per micro-model, at least")->capture_default_str();
  sub->add_option("--warmup", a.warmup, "Untimed runs first")->capture_default_str();
  sub->add_option("--min-ms", a.min_ms, "Time each micro-model at least this long")->capture_default_str();
  sub->add_option("--model-dims", a.model_dims,
                  "Whole models are also timed with their symbolic input dims bound to each of these")
      ->capture_default_str();
  sub->add_option("--ort-script", a.script, "tools/ort/measure.mjs")->capture_default_str();
  sub->add_flag("!--no-gemm-sweep", a.gemm_sweep, "Leave out the MatMul shape sweep (docs/targets.md)");
}

struct CalibrateArgs {
  MeasureArgs measure;
  std::string target = "cpu", from, output, refeaturize;
};

// `dataset` with its kernel and context records' features computed again
// by this refinery (kernel_features, as `measure` computes them) from the
// files they were timed from: a kernel's micro-model, a context record's
// model and node (its id "context:NAME:INDEX"); the timings kept. Written
// to `out` whole or not at all. For a dataset measured before the feature
// form changed (kFeatureForm), without timing it again.
Expected<std::size_t> refeaturize(const fs::path& dataset, const fs::path& out, const std::string& target) {
  auto spec = targets::find_spec(target);
  if (!spec) return std::unexpected(spec.error());
  auto baseline = targets::learned_baseline(*spec);
  std::ifstream in(dataset);
  if (!in) return fail("cannot open the dataset", {}, dataset.string());
  std::map<std::string, std::vector<targets::OpDesc>> models;  // context records' models, by file
  std::map<std::string, ir::Graph> graphs;                     // their graphs (the descs point into them)
  std::string text, line;
  std::size_t number = 0, done = 0;
  while (std::getline(in, line)) {
    ++number;
    auto where = [&](const std::string& m) { return fail(m, {}, fmt::format("{}:{}", dataset.string(), number)); };
    auto j = nlohmann::json::parse(line, nullptr, false);
    const std::string kind = j.is_discarded() ? "" : j.value("kind", "");
    if ((kind != "kernel" && kind != "context") || j.contains("error")) {
      text += line + "\n";
      continue;
    }
    const std::string file = j.value("file", "");
    if (kind == "kernel") {
      auto g = load_model(file);
      if (!g)
        return where(fmt::format("the micro-model of '{}' does not load: {}", j.value("id", ""), g.error().str()));
      auto [feats, ops] = micro_model_features(*g, *baseline);
      if (feats.size() != j.at("features").size())
        return where(
            fmt::format("{} has {} nodes that run, the record {}", file, feats.size(), j.at("features").size()));
      j["features"] = feats;
    } else {
      auto it = models.find(file);
      if (it == models.end()) {
        auto g = load_model(file);
        if (!g) return where(fmt::format("the model does not load: {}", g.error().str()));
        ir::Graph& kept = graphs.emplace(file, std::move(*g)).first->second;
        it = models.emplace(file, targets::node_descs(kept)).first;
      }
      const std::string id = j.value("id", "");
      std::size_t node = 0;
      try {
        node = std::stoul(id.substr(id.rfind(':') + 1));
      } catch (const std::exception&) {
        return where(fmt::format("a context record's id '{}' does not end in its node's index", id));
      }
      if (node >= it->second.size()) return where(fmt::format("{} has no node {}", file, node));
      j["features"] = context_features(it->second[node], *baseline);
    }
    text += j.dump() + "\n";
    ++done;
  }
  if (auto ok = ir::write_files_atomic({{out.string(), text}}); !ok) return std::unexpected(ok.error());
  return done;
}

int run_calibrate(CalibrateArgs& a) {
  auto spec = targets::find_spec(a.target);
  if (!spec) return report(spec.error());
  if (spec->kind != targets::TargetKind::Cpu || spec->learned_model.empty())
    return report(Diag{.message = fmt::format("target '{}' has no learned cost model to calibrate", spec->name)});
  if (!a.refeaturize.empty() && a.from.empty()) return report(Diag{.message = "--refeaturize needs --from DATASET"});
  std::string dataset = a.from;
  if (dataset.empty()) {
    if (a.measure.models.empty())
      return report(Diag{.message = "calibrate needs MODELS to measure (or --from DATASET to retrain)"});
    a.measure.target = a.target;
    if (a.measure.out_dir.empty()) a.measure.out_dir = (targets::user_cost_models_dir() / "measurements").string();
    if (int rc = run_measure(a.measure)) return rc;
    dataset = (fs::path(a.measure.out_dir) / "dataset.jsonl").string();
  }
  if (!a.refeaturize.empty()) {
    auto n = refeaturize(dataset, a.refeaturize, a.target);
    if (!n) return report(n.error());
    fmt::print("calibrate: features of {} records computed again ('{}') from their files: wrote {}\n", *n,
               targets::kFeatureForm, a.refeaturize);
    dataset = a.refeaturize;
  }
  auto data = targets::read_dataset(dataset);
  if (!data) return report(data.error());
  auto samples = targets::training_samples(*data, [](const targets::Record&) { return true; });
  fs::path out = a.output.empty() ? targets::user_cost_models_dir() / spec->learned_model : fs::path(a.output);
  if (auto ok = targets::train_cost_model(samples, data->run_overhead_ms, data->kernel_dispatch_ms, out); !ok)
    return report(ok.error());
  fmt::print(
      "calibrate: trained on {} samples from {} ({} failed to time); run overhead {:.4f} ms, kernel dispatch {:.5f} "
      "ms; wrote {}{}\n",
      samples.size(), dataset, data->errors, data->run_overhead_ms, data->kernel_dispatch_ms, out.string(),
      a.output.empty() ? fmt::format(" (--target {} prices with it from now on)", spec->name) : "");
  return 0;
}

struct CostArgs {
  std::string model, target = "cpu", cost_model, json;
};

int run_cost(const CostArgs& a) {
  auto g = load_model(a.model);
  if (!g) return report(g.error());
  auto target = targets::load_target(a.target, a.cost_model);
  if (!target) return report(target.error());
  std::vector<double> costs = targets::node_costs(*target->model, *g);
  double overhead = target->model->run_overhead();
  double total = overhead;
  for (double c : costs) total += c;
  nlohmann::json nodes = nlohmann::json::array();
  for (std::size_t i = 0; i < costs.size(); ++i)
    nodes.push_back({{"name", g->node_label(ir::NodeId(static_cast<uint32_t>(i)))},
                     {"op", std::string(ir::op_name(g->nodes()[i].op))},
                     {"ms", costs[i] * 1e3}});
  // The last node of a group the runtime fuses carries the fused op's price.
  for (const targets::RuntimeFusion& f : targets::fused_by_runtime(*g))
    nodes[f.nodes.back()]["fused_as"] = std::string(ir::op_name(f.op));
  if (!a.json.empty()) {
    const std::string file = target->learned_model_file.string();
    nlohmann::json j{{"model", a.model},
                     {"target", target->name},
                     {"cost_model", target->model_kind()},
                     {"cost_model_file", file.empty() ? nlohmann::json(nullptr) : nlohmann::json(file)},
                     {"total_ms", total * 1e3},
                     {"run_overhead_ms", overhead * 1e3},
                     {"nodes", nodes}};
    return write_json(a.json, j.dump(2));
  }
  fmt::print("{}: predicted {:.4f} ms on {} ({} cost model{}; {} nodes; run overhead {:.4f} ms)\n", a.model,
             total * 1e3, target->name, target->model_kind(),
             target->learned_model_file.empty() ? "" : " " + target->learned_model_file.string(), costs.size(),
             overhead * 1e3);
  for (const auto& n : nodes)
    fmt::print("  {:>10.4f} ms  {:<20} {}\n", n["ms"].get<double>(),
               n["op"].get<std::string>() + (n.contains("fused_as") ? " -> " + n["fused_as"].get<std::string>() : ""),
               n["name"].get<std::string>());
  return 0;
}

}  // namespace

Command add_measure(CLI::App& app) {
  auto a = std::make_shared<MeasureArgs>();
  CLI::App* sub = app.add_subcommand(
      "measure", "Time ONNX Runtime's kernels of models as micro-models: a dataset for the learned CPU cost model");
  sub->add_option("models", a->models, "Models (.onnx) whose kernels are timed")->required();
  sub->add_option("-o,--output", a->out_dir, "Folder: manifest.jsonl, kernels/, dataset.jsonl (resumed)")->required();
  add_measure_flags(sub, *a);
  sub->add_option("--target", a->target, "The cpu target whose analytic model is a feature (the baseline)")
      ->capture_default_str();
  sub->add_flag("--no-time", a->no_time, "Write the micro-models and the manifest only");
  sub->footer(
      "Example:\n  refinery measure build/zoo/*.onnx -o /tmp/costdata\nExit: 0 done, 2 bad input, 3 measuring failed.");
  return {sub, [a] { return run_measure(*a); }};
}

Command add_calibrate(CLI::App& app) {
  auto a = std::make_shared<CalibrateArgs>();
  CLI::App* sub = app.add_subcommand(
      "calibrate", "Measure ONNX Runtime on this machine and retrain the learned CPU cost model (--target cpu)");
  sub->add_option("models", a->measure.models, "Models (.onnx) whose kernels are measured");
  sub->add_option("--target", a->target, "A target with a learned model")->capture_default_str();
  sub->add_option("--data", a->measure.out_dir, "Measurement folder (default: beside the stored model)");
  sub->add_option("--from", a->from, "Retrain from this dataset.jsonl without measuring");
  sub->add_option("--refeaturize", a->refeaturize,
                  "With --from: compute the records' features again from their micro-models and models (a dataset "
                  "of an older feature form), write that dataset here and train on it");
  sub->add_option("-o,--output", a->output,
                  "The model file (default: where --target finds it first, the user's cost_models folder)");
  add_measure_flags(sub, a->measure);
  sub->footer(
      "Example:\n  refinery calibrate --target cpu build/zoo/*.onnx\n"
      "Exit: 0 written, 2 bad input, 3 measuring failed.");
  return {sub, [a] { return run_calibrate(*a); }};
}

Command add_cost(CLI::App& app) {
  auto a = std::make_shared<CostArgs>();
  CLI::App* sub = app.add_subcommand("cost", "A target's predicted cost of a model, per node");
  sub->add_option("model", a->model, "Model file (.onnx, .ir, .nir)")->required();
  sub->add_option("--target", a->target, kTargetHelp)->capture_default_str();
  sub->add_option("--cost-model", a->cost_model, kCostModelHelp);
  sub->add_option("--json", a->json,
                  "Write {total_ms, run_overhead_ms, nodes: [{name, op, ms, fused_as}]} here; - for stdout");
  sub->footer(
      "Example:\n  refinery cost build/zoo/resnet18.onnx --target cpu --json -\n"
      "Exit: 0, 2 bad input.");
  return {sub, [a] { return run_cost(*a); }};
}

}  // namespace refinery::cli
