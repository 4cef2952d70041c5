#include "targets/neuromorphic.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

#include "ir/op.h"
#include "targets/workload.h"

namespace refinery::targets {

namespace {

using ir::Op;

// What a node is on the chip.
enum class Role {
  Neuron,    // a population of compartments, updated every step
  Synapse,   // weights stored at the destination core; one event per nonzero weight per active source
  Junction,  // wiring: dendritic sums, copies, reshapes, synaptic delays
  Unmapped,  // no core runs it
};

Role role(Op op) {
  switch (op) {
    case Op::LIF:
    case Op::IF:
    case Op::CubaLIF:
    case Op::LI:
    case Op::CubaLI:
    case Op::Integrator:
    case Op::Threshold: return Role::Neuron;
    case Op::Affine:
    case Op::Linear:
    case Op::NirConv1d:
    case Op::NirConv2d:
    case Op::SumPool2d:
    case Op::AvgPool2d:
    case Op::Scale: return Role::Synapse;
    case Op::Sum:
    case Op::Identity:
    case Op::NirFlatten:
    case Op::Delay: return Role::Junction;
    default: return Role::Unmapped;
  }
}

// The inputs of a junction that carry data (a delay's length does not).
std::span<const ir::ValueId> data_inputs(const ir::Node& n) {
  if (n.op == Op::Sum) return n.inputs;
  return std::span<const ir::ValueId>(n.inputs).first(1);
}

int64_t elements(const ir::Graph& g, ir::ValueId v) { return g.value(v).type.shape.num_elements().value_or(1); }

// What a chunk of c consecutive output neurons (channel-major, as the
// partition cuts) of a window layer reads: output channels are planes of
// rows, and a run of output rows reads the input rows under the kernel.
struct Window {
  int64_t channels = 1;           // input channels in all
  int64_t channels_per_out = 1;   // input channels one output channel reads (all of them for group 1)
  bool own_channel = false;       // output channel k reads input channel k only (pools)
  int64_t out_channels = 1, out_plane = 1, out_width = 1;
  int64_t in_rows = 1, in_width = 1, kernel_rows = 1, stride_rows = 1;
  bool elementwise = false;  // a scale, or a neuron read one to one: c neurons read c sources

  int64_t axons(int64_t c, int64_t n_in) const {
    if (elementwise) return std::min(c, n_in);
    const int64_t planes = std::min(out_channels, (c + out_plane - 1) / out_plane + 1);
    const int64_t out_rows = c >= out_plane ? out_plane / out_width : std::min(out_plane / out_width, (c + out_width - 1) / out_width + 1);
    const int64_t rows = std::min(in_rows, (out_rows - 1) * stride_rows + kernel_rows);
    const int64_t read = own_channel ? std::min(channels, planes)
                         : channels_per_out == channels ? channels
                                                        : std::min(channels, channels_per_out * planes);
    return std::min(n_in, read * rows * in_width);
  }
};

// A synapse layer's connections: from its weights when they are constants
// (nonzero weights only, so a pruned layer stores and fires less), else
// dense from its types.
struct Connectivity {
  int64_t synapses = 0;     // nonzero weights
  int64_t fan_in = 0;       // the most into one neuron
  int64_t input_axons = 0;  // distinct sources read by the whole layer
  std::optional<Window> window;  // conv, pool, scale: a chunk reads only part of the input
};

// The window of a layer from its input's and output's shapes [C, rows...].
Window window_of(const ir::Graph& g, const ir::Node& n, int64_t kernel_rows, int64_t stride_rows) {
  const ir::Shape& x = g.value(n.inputs[0]).type.shape;
  const ir::Shape& y = g.value(n.outputs[0]).type.shape;
  Window w;
  auto dim = [](const ir::Shape& s, int64_t i) { return i < s.rank() && s[i].is_static() ? s[i].size() : 1; };
  w.channels = dim(x, 0);
  w.out_channels = dim(y, 0);
  w.in_rows = dim(x, 1);
  w.in_width = x.rank() > 2 ? dim(x, 2) : 1;
  w.out_width = y.rank() > 2 ? dim(y, 2) : 1;
  w.out_plane = dim(y, 1) * w.out_width;
  w.kernel_rows = kernel_rows;
  w.stride_rows = stride_rows;
  return w;
}

Connectivity connectivity(const ir::Graph& g, const ir::Node& n) {
  Connectivity c;
  const int64_t in = elements(g, n.inputs[0]), out = elements(g, n.outputs[0]);
  switch (n.op) {
    case Op::Affine:
    case Op::Linear: {  // weight [out, in]
      const ir::Tensor* w = g.constant_tensor(n.inputs[1]);
      if (!w || w->dims().size() != 2) return {out * in, in, in, std::nullopt};
      const int64_t rows = w->dims()[0], cols = w->dims()[1];
      std::vector<bool> read(static_cast<std::size_t>(cols), false);
      for (int64_t r = 0; r < rows; ++r) {
        int64_t row = 0;
        for (int64_t k = 0; k < cols; ++k)
          if (w->as_double(r * cols + k) != 0) {
            ++row;
            read[static_cast<std::size_t>(k)] = true;
          }
        c.synapses += row;
        c.fan_in = std::max(c.fan_in, row);
      }
      c.input_axons = std::count(read.begin(), read.end(), true);
      return c;
    }
    case Op::NirConv1d:
    case Op::NirConv2d: {  // weight [C_out, C_in / group, kernel...]; taps past the border counted too
      const ir::Shape& ws = g.value(n.inputs[1]).type.shape;
      const int64_t cout = std::max<int64_t>(1, ws[0].size()), per = ws.num_elements().value_or(1) / cout;
      const int64_t positions = out / cout;
      const ir::Tensor* w = g.constant_tensor(n.inputs[1]);
      for (int64_t co = 0; co < cout; ++co) {
        int64_t nz = per;
        if (w) {
          nz = 0;
          for (int64_t k = 0; k < per; ++k) nz += w->as_double(co * per + k) != 0;
        }
        c.synapses += nz * positions;
        c.fan_in = std::max(c.fan_in, nz);
      }
      c.input_axons = in;
      ir::OpAttrs a(n.op, n.attrs, g.value(n.inputs[0]).type.shape.rank());
      Window win = window_of(g, n, ws.rank() > 2 ? ws[2].size() : 1, a.get_ints("strides").at(0));
      win.channels_per_out = ws.rank() > 1 ? ws[1].size() : 1;
      c.window = win;
      return c;
    }
    case Op::SumPool2d:
    case Op::AvgPool2d: {
      ir::OpAttrs a(n.op, n.attrs, g.value(n.inputs[0]).type.shape.rank());
      std::vector<int64_t> k = a.get_ints("kernel_shape");
      std::vector<int64_t> strides = a.maybe_ints("strides").value_or(k);
      int64_t window = 1;
      for (int64_t e : k) window *= e;
      Window win = window_of(g, n, k.at(0), strides.at(0));
      win.own_channel = true;
      return {out * window, window, in, win};
    }
    default: {  // scale: one weight per element
      const ir::Tensor* s = g.constant_tensor(n.inputs[1]);
      bool zero = s && s->numel() > 0;
      for (int64_t i = 0; zero && i < s->numel(); ++i) zero = s->as_double(i) == 0;
      return {zero ? 0 : out, zero ? 0 : 1, in, Window{.elementwise = true}};
    }
  }
}

}  // namespace

// Whether the weights are exactly 2^e x integers, and of how many bits: each
// nonzero |w| is m 2^e with m odd; the shared exponent is min(e), and gcd(m)
// is the odd factor the integers have in common.
WeightFit weight_fit(const ir::Tensor& w, int weight_bits) {
  WeightFit f;
  f.weight_bits = weight_bits;
  std::vector<std::pair<uint64_t, int>> parts;
  uint64_t gcd = 0;
  int low = std::numeric_limits<int>::max();
  for (int64_t i = 0; i < w.numel(); ++i) {
    double x = std::abs(w.as_double(i));
    if (x == 0) continue;
    if (!std::isfinite(x)) {
      f.bits_needed = std::numeric_limits<int>::max();
      return f;
    }
    int e = 0;
    double frac = std::frexp(x, &e);
    auto m = static_cast<uint64_t>(std::ldexp(frac, 53));
    e -= 53;
    int zeros = std::countr_zero(m);
    m >>= zeros;
    e += zeros;
    gcd = std::gcd(gcd, m);
    low = std::min(low, e);
    parts.emplace_back(m, e);
  }
  f.scale = 1;
  if (parts.empty()) return f;
  int magnitude = 0;
  for (const auto& [m, e] : parts) magnitude = std::max(magnitude, static_cast<int>(std::bit_width(m)) + e - low);
  f.bits_needed = magnitude + 1;
  f.scale = std::ldexp(1.0, low);
  f.odd_factor = gcd;
  return f;
}

namespace {

struct Builder {
  const ir::Graph& g;
  const HardwareSpec& spec;
  std::span<const double> activity;
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> uses;  // by value: (node, operand)
  std::vector<bool> is_output;                                        // by value
  std::vector<int> population_of;                                     // by node: index or -1

  double active(ir::ValueId v) const {
    std::size_t i = ir::index(v);
    return i < activity.size() && std::isfinite(activity[i]) ? activity[i] : 1.0;
  }

  // Whether every use of `v`, through junctions, is a neuron's input.
  bool only_neurons_read(ir::ValueId v, int depth = 0) const {
    if (is_output[ir::index(v)] || depth > 64) return false;
    for (auto [node, operand] : uses[ir::index(v)]) {
      const ir::Node& n = g.nodes()[node];
      Role r = role(n.op);
      if (r == Role::Neuron && operand == 0) continue;
      if (r == Role::Junction && !only_neurons_read(n.outputs[0], depth + 1)) return false;
      if (r != Role::Junction) return false;
    }
    return true;
  }

  // What reaches `v` through junctions: synapse layers folded into the
  // reader (their node) and sources read one to one (a value).
  void incoming(ir::ValueId v, std::vector<std::size_t>& synapses, std::vector<ir::ValueId>& direct,
                int depth = 0) const {
    const ir::Value& val = g.value(v);
    if (val.kind == ir::ValueKind::Constant) return;
    if (val.kind != ir::ValueKind::NodeResult || depth > 64) {
      direct.push_back(v);
      return;
    }
    std::size_t p = ir::index(val.producer);
    const ir::Node& n = g.nodes()[p];
    if (role(n.op) == Role::Junction) {
      for (ir::ValueId in : data_inputs(n)) incoming(in, synapses, direct, depth + 1);
    } else if (role(n.op) == Role::Synapse && population_of[p] < 0) {
      synapses.push_back(p);
    } else {
      direct.push_back(v);
    }
  }

  // The populations whose output reaches `v` through junctions.
  void sources(ir::ValueId v, std::vector<int>& out, int depth = 0) const {
    const ir::Value& val = g.value(v);
    if (val.kind != ir::ValueKind::NodeResult || depth > 64) return;
    std::size_t p = ir::index(val.producer);
    if (population_of[p] >= 0) {
      out.push_back(population_of[p]);
      return;
    }
    const ir::Node& n = g.nodes()[p];
    if (role(n.op) == Role::Junction)
      for (ir::ValueId in : data_inputs(n)) sources(in, out, depth + 1);
  }
};

}  // namespace

Expected<CoreMap> map_to_cores(const ir::Graph& g, const HardwareSpec& spec, std::span<const double> activity) {
  auto limit = [](std::string message) {
    Diag d{{}, {}, std::move(message)};
    d.limitation = true;
    return std::unexpected(std::move(d));
  };
  const NeuromorphicSpec& chip = spec.neuromorphic;
  if (spec.kind != TargetKind::Neuromorphic) return fail(fmt::format("target '{}' is not neuromorphic", spec.name));
  Builder b{g, spec, activity, {}, {}, {}};
  b.uses = g.readers();
  b.is_output.assign(g.num_values(), false);
  b.population_of.assign(g.num_nodes(), -1);
  for (ir::ValueId v : g.outputs()) b.is_output[ir::index(v)] = true;

  CoreMap map;
  std::vector<std::size_t> population_node;
  for (std::size_t i = 0; i < g.num_nodes(); ++i) {
    const ir::Node& n = g.nodes()[i];
    const std::string label = g.node_label(ir::NodeId{static_cast<uint32_t>(i)});
    Role r = role(n.op);
    if (r == Role::Unmapped)
      return limit(fmt::format("node '{}' ({}) has no neuromorphic mapping: a {} core runs NIR neurons, synapses and "
                               "their wiring (docs/targets.md)",
                               label, ir::op_name(n.op), spec.name));
    if (r == Role::Neuron || (r == Role::Synapse && !b.only_neurons_read(n.outputs[0]))) {
      b.population_of[i] = static_cast<int>(population_node.size());
      population_node.push_back(i);
      map.populations.push_back({.layer = label, .op = std::string(ir::op_name(n.op)), .neurons = elements(g, n.outputs[0])});
    }
    if (r == Role::Synapse && n.inputs.size() > 1)
      if (const ir::Tensor* w = g.constant_tensor(n.inputs[1])) {
        WeightFit f = weight_fit(*w, chip.weight_bits);
        f.layer = label;
        f.op = std::string(ir::op_name(n.op));
        map.weights.push_back(std::move(f));
      }
  }

  // Per population: its synapses, the per-core limits they set, its sources.
  struct Needs {
    int64_t dense_axons = 0;                              // every source a dense layer reads
    std::vector<std::pair<Window, int64_t>> windows;      // window layers and their inputs' sizes
    int64_t window_fan_in = 0;                            // what one neuron reads through them
    std::vector<int> sources;
    int64_t limit_per_core = 0;  // neurons per core the core's own limits allow
    int64_t axons(int64_t c) const {
      int64_t a = dense_axons;
      for (const auto& [w, n_in] : windows) a += w.axons(c, n_in);
      return a;
    }
  };
  std::vector<Needs> needs(map.populations.size());
  for (std::size_t p = 0; p < map.populations.size(); ++p) {
    PopulationMap& pop = map.populations[p];
    Needs& need = needs[p];
    const std::size_t node = population_node[p];
    const ir::Node& n = g.nodes()[node];
    std::vector<std::size_t> synapses;
    std::vector<ir::ValueId> direct;
    if (role(n.op) == Role::Synapse)
      synapses.push_back(node);
    else
      b.incoming(n.inputs[0], synapses, direct);
    for (std::size_t s : synapses) {
      const ir::Node& syn = g.nodes()[s];
      Connectivity c = connectivity(g, syn);
      pop.synapses += c.synapses;
      pop.fan_in += c.fan_in;
      pop.input_axons += c.input_axons;
      if (c.window) {
        need.windows.emplace_back(*c.window, elements(g, syn.inputs[0]));
        need.window_fan_in += c.fan_in;
      } else
        need.dense_axons += c.input_axons;
      pop.synaptic_events_per_step += b.active(syn.inputs[0]) * static_cast<double>(c.synapses);
      b.sources(syn.inputs[0], need.sources);
    }
    for (ir::ValueId v : direct) {  // read one to one
      pop.synapses += pop.neurons;
      pop.fan_in += 1;
      pop.input_axons += elements(g, v);
      need.windows.emplace_back(Window{.elementwise = true}, elements(g, v));
      need.window_fan_in += 1;
      pop.synaptic_events_per_step += b.active(v) * static_cast<double>(pop.neurons);
      b.sources(v, need.sources);
    }

    int64_t per_core = std::min(chip.neurons_per_core, std::max<int64_t>(1, pop.neurons));
    const double neuron_bits = static_cast<double>(pop.fan_in) * chip.weight_bits;
    if (neuron_bits > chip.synaptic_memory_bits_per_core)
      return limit(fmt::format(
          "layer '{}' ({}) does not fit a {} core: one neuron has {} synapses of {} bits = {:.0f} bits, a core holds "
          "{:.0f} bits of synaptic memory (over by {:.0f} bits)",
          pop.layer, pop.op, spec.name, pop.fan_in, chip.weight_bits, neuron_bits, chip.synaptic_memory_bits_per_core,
          neuron_bits - chip.synaptic_memory_bits_per_core));
    if (neuron_bits > 0)
      per_core = std::min<int64_t>(per_core, static_cast<int64_t>(chip.synaptic_memory_bits_per_core / neuron_bits));
    if (const int64_t one = need.dense_axons + need.window_fan_in; one > chip.fan_in_per_core)
      return limit(fmt::format(
          "layer '{}' ({}) does not fit a {} core: one neuron reads {} distinct inputs, a core takes {} input axons "
          "(over by {})",
          pop.layer, pop.op, spec.name, one, chip.fan_in_per_core, one - chip.fan_in_per_core));
    // the largest chunk whose sources fit the core's input axons (they grow
    // with the chunk; a window's rows are an upper bound, one neuron always fits)
    if (need.axons(per_core) > chip.fan_in_per_core) {
      int64_t lo = 1, hi = per_core;
      while (lo + 1 < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        (need.axons(mid) <= chip.fan_in_per_core ? lo : hi) = mid;
      }
      per_core = lo;
    }
    need.limit_per_core = std::max<int64_t>(1, per_core);
    pop.neurons_per_core = need.limit_per_core;
  }

  // Fan-out: a neuron sends one axon to each core of each population that
  // reads it, so a core of p sends neurons_per_core x (the readers' cores).
  auto cores_of = [&](const PopulationMap& pop) { return (pop.neurons + pop.neurons_per_core - 1) / pop.neurons_per_core; };
  for (int pass = 0; pass < 16; ++pass) {
    std::vector<int64_t> destinations(map.populations.size(), 0);
    for (std::size_t q = 0; q < map.populations.size(); ++q) {
      std::vector<int> from = needs[q].sources;
      std::sort(from.begin(), from.end());
      from.erase(std::unique(from.begin(), from.end()), from.end());
      for (int p : from) destinations[static_cast<std::size_t>(p)] += cores_of(map.populations[q]);
    }
    bool changed = false;
    for (std::size_t p = 0; p < map.populations.size(); ++p) {
      PopulationMap& pop = map.populations[p];
      const int64_t d = destinations[p];
      if (d > chip.fan_out_per_core)
        return limit(fmt::format(
            "layer '{}' ({}) does not fit a {} core: one neuron sends to {} cores, a core has {} output axons (over "
            "by {})",
            pop.layer, pop.op, spec.name, d, chip.fan_out_per_core, d - chip.fan_out_per_core));
      int64_t per_core = d > 0 ? std::min(needs[p].limit_per_core, chip.fan_out_per_core / d) : needs[p].limit_per_core;
      per_core = std::min(std::max<int64_t>(1, per_core), std::max<int64_t>(1, pop.neurons));
      if (per_core != pop.neurons_per_core) {
        pop.neurons_per_core = per_core;
        changed = true;
      }
    }
    if (!changed) break;
  }

  const PopulationMap* largest = nullptr;
  for (PopulationMap& pop : map.populations) {
    pop.cores = cores_of(pop);
    map.cores += pop.cores;
    map.neurons += pop.neurons;
    map.synapses += pop.synapses;
    map.synaptic_events_per_step += pop.synaptic_events_per_step;
    if (!largest || pop.cores > largest->cores) largest = &pop;
  }
  if (map.cores > chip.cores)
    return limit(fmt::format("the graph needs {} cores, a {} chip has {} (over by {}); the largest layer, '{}', takes {}",
                             map.cores, spec.name, chip.cores, map.cores - chip.cores, largest->layer, largest->cores));
  map.neuron_updates_per_step = static_cast<double>(map.neurons);
  map.energy_per_step = map.synaptic_events_per_step * chip.energy_per_synaptic_op +
                        map.neuron_updates_per_step * chip.energy_per_neuron_update;
  return map;
}

namespace {

// Joules per time step of one node, from its types: neurons update every
// step; a synapse layer fires its (dense) weights for each active input.
class NeuromorphicModel final : public CostModel {
 public:
  using CostModel::CostModel;

 protected:
  double op_cost(const OpDesc& op) const override {
    const NeuromorphicSpec& chip = spec_.neuromorphic;
    const double out = op.output ? numel(*op.output) : 0;
    const double active = op.input_activity.empty() ? 1.0 : op.input_activity[0];
    switch (role(op.op)) {
      case Role::Neuron: return out * chip.energy_per_neuron_update;
      case Role::Junction: return 0;
      case Role::Synapse: {
        // ir::op_work: 2 per weight of a matrix op, one per window element of a pool or a scale
        const bool matrix = op.op == Op::Affine || op.op == Op::Linear || op.op == Op::NirConv1d || op.op == Op::NirConv2d;
        const double synapses = matrix ? flops(op) / 2 : flops(op);
        return active * synapses * chip.energy_per_synaptic_op;
      }
      case Role::Unmapped: break;
    }
    // Not a NIR op: no core runs it (map_to_cores refuses it). Priced as
    // dense synaptic ops by its work, so that the cost laws hold here too.
    if (classify(op.op) == OpClass::Free) return 0;
    // A constant added to a matrix product is its bias, as NIR's Affine
    // (W x + b) and a Gemm's C are: free, so that MatMul + Add costs its Gemm.
    if (op.op == Op::Add && op.inputs.size() == 2 && op.input_constant.size() == 2)
      for (std::size_t i : {0, 1})
        if (classify(op.producer(i)) == OpClass::Matrix && op.input_constant[1 - i]) return 0;
    return std::max(flops(op) / 2, out) * std::max(chip.energy_per_synaptic_op, 1e-12);
  }
};

}  // namespace

std::unique_ptr<CostModel> make_neuromorphic_model(HardwareSpec spec) {
  return std::make_unique<NeuromorphicModel>(std::move(spec));
}

}  // namespace refinery::targets
