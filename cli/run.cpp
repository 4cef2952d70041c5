// refinery run MODEL: the reference interpreter on seeded random inputs (or
// given ones), printing a summary of each output.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "cli/commands.h"
#include "cli/model_files.h"
#include "frontends/npz.h"
#include "frontends/onnx.h"
#include "ir/spiking.h"
#include "runtime/interpreter.h"
#include "runtime/spiking.h"

namespace refinery::cli {
namespace {

struct RunArgs {
  std::string model;
  uint64_t seed = 0;
  std::vector<std::string> inputs;  // TensorProto .pb files, one per graph input
  std::vector<std::string> dims;    // name=value
  int64_t int_high = runtime::kIntHigh;
  runtime::SimOptions sim;  // spiking graphs (docs/spiking.md)
  double rate = 0.2;        // input spike probability per step
  bool steps_given = false;  // --steps was given (else an --input .npz sets T)
  std::string save_traces;  // .npz of every spiking layer's spike train
};

std::string summary(const ir::Tensor& t);

// The per-step inputs of a spiking graph: seeded random spikes, or the one
// .npz file given, an array [T, shape...] per Input node by name.
Expected<std::vector<ir::Tensor>> spiking_inputs(const ir::Graph& g, const RunArgs& a, int64_t& steps) {
  if (a.inputs.empty()) return runtime::random_spike_inputs(g, steps, a.rate, a.seed);
  if (a.inputs.size() != 1) return fail("a spiking graph takes one --input, an .npz file with an array per Input node");
  const std::string& file = a.inputs[0];
  auto arrays = frontends::read_npz(file);
  if (!arrays) return std::unexpected(arrays.error());
  std::vector<ir::Tensor> out;
  std::vector<std::string> names;
  for (ir::ValueId in : g.inputs()) names.push_back(g.value(in).name);
  for (const auto& [key, t] : *arrays)
    if (std::find(names.begin(), names.end(), key) == names.end())
      return fail(fmt::format("array '{}' names no Input node (the graph's inputs: {})", key, fmt::join(names, ", ")),
                  {}, file);
  for (ir::ValueId in : g.inputs()) {
    const ir::Value& v = g.value(in);
    auto it = std::find_if(arrays->begin(), arrays->end(), [&](const auto& e) { return e.first == v.name; });
    if (it == arrays->end())
      return fail(fmt::format("has no array '{}' for Input node '{}' [T, {}]", v.name, v.name, v.type.shape.str()), {},
                  file);
    const ir::Tensor& t = it->second;
    std::vector<int64_t> want = v.type.shape.sizes();
    bool fits = t.dims().size() == want.size() + 1 && std::equal(want.begin(), want.end(), t.dims().begin() + 1);
    if (fits && a.steps_given && t.dims()[0] != steps)
      return fail(fmt::format("array '{}' has {} steps, --steps says {}", v.name, t.dims()[0], steps), {}, file);
    if (!fits)
      return fail(fmt::format("array '{}' is [{}], expected [T, {}]", v.name, fmt::join(t.dims(), ", "),
                              fmt::join(want, ", ")),
                  {}, file);
    if (!out.empty() && t.dims()[0] != out[0].dims()[0])
      return fail(fmt::format("array '{}' has {} steps, '{}' {}", v.name, t.dims()[0], g.value(g.inputs()[0]).name,
                              out[0].dims()[0]),
                  {}, file);
    out.push_back(t);
  }
  if (!out.empty()) steps = out[0].dims()[0];
  return out;
}

// The spike train of every spiking layer as [T, shape...] (u8 0/1) under its
// node name, and every output's values as [T, shape...] (f64) under
// "output:NAME".
frontends::NamedTensors traces(const ir::Graph& g, const runtime::SimResult& r) {
  frontends::NamedTensors out;
  int64_t steps = r.options.steps;
  for (const auto& l : r.layers) {
    if (!l.spiking) continue;
    std::vector<int64_t> dims{steps};
    for (size_t i = 0; i < g.num_nodes(); ++i)
      if (g.nodes()[i].name == l.name) {
        auto s = g.value(g.nodes()[i].outputs[0]).type.shape.sizes();
        dims.insert(dims.end(), s.begin(), s.end());
      }
    out.emplace_back(l.name, ir::Tensor::from_values<uint8_t>(ir::DType::u8, dims, l.spikes));
  }
  for (size_t i = 0; i < r.outputs.size(); ++i)
    out.emplace_back("output:" + g.value(g.outputs()[i]).name, r.outputs[i]);
  return out;
}

// A spiking graph runs through time on the given or seeded random input
// spikes and reports the run's parameters and each layer's spike count.
int run_spiking(const ir::Graph& g, const RunArgs& a) {
  runtime::SimOptions o = a.sim;
  auto inputs = spiking_inputs(g, a, o.steps);
  if (!inputs) return report(inputs.error());
  auto r = runtime::simulate(g, *inputs, o);
  if (!r) return report(r.error(), a.model);
  if (a.inputs.empty())
    fmt::print("run: {} input-rate={} seed={}\n", runtime::describe(o), a.rate, a.seed);
  else
    fmt::print("run: {} input={}\n", runtime::describe(o), a.inputs[0]);
  fmt::print("spike counts per layer:\n");
  for (const auto& l : r->layers)
    if (l.spiking) fmt::print("  {:<28} {:<10} {:>7} neurons {:>10} spikes\n", l.name, l.op, l.size, l.spike_count);
  for (size_t i = 0; i < r->outputs.size(); ++i)
    fmt::print("{}: {}\n", g.value(g.outputs()[i]).name, summary(r->outputs[i]));
  if (!a.save_traces.empty()) {
    if (auto ok = frontends::write_npz(a.save_traces, traces(g, *r)); !ok) return report(ok.error());
    fmt::print("traces: {}\n", a.save_traces);
  }
  return 0;
}

std::string summary(const ir::Tensor& t) {
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  int64_t nans = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = t.as_double(i);
    if (std::isnan(v)) {
      ++nans;
      continue;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  std::string dims;
  for (size_t i = 0; i < t.dims().size(); ++i) dims += fmt::format("{}{}", i ? "x" : "", t.dims()[i]);
  int64_t n = t.numel() - nans;
  return fmt::format("{}{}{}  min {:.6g}  max {:.6g}  mean {:.6g}{}  hash {:016x}", dims, dims.empty() ? "" : "x",
                     ir::dtype_name(t.dtype()), n ? lo : 0.0, n ? hi : 0.0, n ? sum / static_cast<double>(n) : 0.0,
                     nans ? fmt::format("  nan {}", nans) : "", t.hash());
}

int run(const RunArgs& a) {
  auto g = load_model(a.model);
  if (!g) return report(g.error());
  if (ir::is_spiking_graph(*g)) return run_spiking(*g, a);
  auto parsed = parse_dims(a.dims);
  if (!parsed) return report(parsed.error());
  std::map<std::string, int64_t> dims = std::move(*parsed);
  std::vector<ir::Tensor> inputs;
  if (a.inputs.empty()) {
    inputs = runtime::random_inputs(*g, a.seed, dims, a.int_high);
  } else {
    if (a.inputs.size() != g->inputs().size())
      return report(
          Diag{a.model, {}, fmt::format("the model has {} inputs, {} given", g->inputs().size(), a.inputs.size())});
    for (const auto& f : a.inputs) {
      auto t = frontends::read_tensor_proto(f);
      if (!t) return report(t.error());
      inputs.push_back(std::move(*t));
    }
  }
  auto out = runtime::run(*g, inputs);
  if (!out) return report(out.error(), a.model);
  for (size_t i = 0; i < out->size(); ++i) fmt::print("{}: {}\n", g->value(g->outputs()[i]).name, summary((*out)[i]));
  return 0;
}

}  // namespace

Command add_run(CLI::App& app) {
  auto* sub = app.add_subcommand("run", "Run a model in the reference interpreter and summarise its outputs");
  auto a = std::make_shared<RunArgs>();
  sub->add_option("MODEL", a->model, "model file (.onnx, .ir or .nir)")->required();
  sub->add_option("--seed", a->seed, "seed of the random inputs")->capture_default_str();
  sub->add_option("--input", a->inputs,
                  "an input as a TensorProto file (.pb), once per graph input, in order; a spiking graph takes one "
                  ".npz with an array [T, shape...] per Input node");
  sub->add_option("--dim", a->dims, "value of a symbolic dimension, NAME=VALUE (default 1)");
  sub->add_option("--int-high", a->int_high, "random integer inputs are drawn from [0, N)")->capture_default_str();
  sub->add_option("--steps", a->sim.steps, "spiking graphs: time steps to run (with --input: the arrays' T)")
      ->capture_default_str()
      ->each([a](const std::string&) { a->steps_given = true; });
  sub->add_option("--dt", a->sim.dt, "spiking graphs: seconds per step")->capture_default_str();
  sub->add_option_no_stream("--discretisation", a->sim.discretisation, "spiking graphs: euler or exact")
      ->transform(CLI::CheckedTransformer(std::map<std::string, runtime::Discretisation>{
          {"euler", runtime::Discretisation::Euler}, {"exact", runtime::Discretisation::Exact}}))
      ->default_str(std::string(runtime::discretisation_name(a->sim.discretisation)));
  sub->add_option_no_stream("--reset", a->sim.reset, "spiking graphs: zero (to v_reset) or subtract (v - v_threshold)")
      ->transform(CLI::CheckedTransformer(std::map<std::string, runtime::Reset>{
          {"zero", runtime::Reset::ToValue}, {"subtract", runtime::Reset::Subtract}}))
      ->default_str(std::string(runtime::reset_name(a->sim.reset)));
  sub->add_option("--rate", a->rate, "spiking graphs: input spike probability per step")->capture_default_str();
  sub->add_option("--save-traces", a->save_traces,
                  "spiking graphs: write every spiking layer's spike train [T, shape...] and every output "
                  "(\"output:NAME\") to this .npz");
  sub->footer(
      "Example:\n  refinery run examples/tiny_cnn.onnx --seed 7\n"
      "  refinery run bert_encoder.onnx --dim batch=2 --int-high 1000\n"
      "  refinery run model.nir --steps 200 --dt 1e-4 --discretisation exact --reset subtract\n"
      "  refinery run model.nir --input spikes.npz --save-traces traces.npz");
  return {sub, [a] { return run(*a); }};
}

}  // namespace refinery::cli
