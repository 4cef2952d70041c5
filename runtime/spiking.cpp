// The spiking simulator (docs/spiking.md). Every value has one buffer that
// keeps its latest contents; nodes run in graph order, so an operand defined
// later in the graph (a recurrent edge) still holds the previous step's value
// when it is read, and all buffers start at zero. Sums are accumulated in a
// fixed order, in double precision, without fused multiply-adds.
#include "runtime/spiking.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "ir/spiking.h"

namespace refinery::runtime {
namespace {

using ir::Op;
using Vec = std::vector<double>;

Vec to_doubles(const ir::Tensor& t) {
  Vec v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = t.as_double(i);
  return v;
}

// A parameter read per element: a scalar broadcasts.
struct Param {
  Vec v;
  double operator[](size_t i) const { return v.size() == 1 ? v[0] : v[i]; }
};

struct NodeState {
  Vec v, i;                     // membrane potential, synaptic current
  Vec k_mem, k_syn;             // per-step factors: dt/tau (euler) or exp(-dt/tau) (exact)
  std::vector<Vec> delay_line;  // ring of past inputs (Delay)
  std::vector<int64_t> delay_steps;
  std::vector<Param> params;  // by operand index (0 unused)
};

bool spiking_op(Op op) { return op == Op::LIF || op == Op::IF || op == Op::CubaLIF || op == Op::Threshold; }

struct Sim {
  const ir::Graph& g;
  SimOptions o;
  std::vector<Vec> buf;  // per value
  std::vector<NodeState> state;

  Expected<void> prepare() {
    buf.assign(g.num_values(), {});
    for (size_t v = 0; v < g.num_values(); ++v) {
      const ir::Value& val = g.values()[v];
      if (val.kind == ir::ValueKind::Constant) {
        buf[v] = to_doubles(*val.constant);
        continue;
      }
      auto n = val.type.shape.num_elements();
      if (!n) return fail(fmt::format("'{}' has no static shape {}", val.name, val.type.str()));
      buf[v].assign(static_cast<size_t>(*n), 0.0);
    }
    state.resize(g.num_nodes());
    for (size_t n = 0; n < g.num_nodes(); ++n) {
      const ir::Node& node = g.nodes()[n];
      std::string where = fmt::format("node '{}'", g.node_label(ir::NodeId{static_cast<uint32_t>(n)}));
      if (node.op != Op::Sum && node.op != Op::Identity && !ir::is_nir_op(node.op))
        return fail(fmt::format("op '{}' cannot be stepped through time",
                                node.op == Op::Opaque ? node.op_type : std::string(ir::op_name(node.op))),
                    where);
      if (!ir::is_nir_op(node.op)) continue;
      NodeState& s = state[n];
      size_t size = buf[ir::index(node.outputs[0])].size();
      s.params.resize(node.inputs.size());
      auto names = ir::operand_names(node.op);
      for (size_t i = 1; i < node.inputs.size(); ++i) {
        if (node.inputs[i] == ir::kNoValue) continue;
        s.params[i].v = buf[ir::index(node.inputs[i])];
        bool elementwise =
            node.op != Op::Affine && node.op != Op::Linear && node.op != Op::NirConv1d && node.op != Op::NirConv2d;
        if (elementwise && s.params[i].v.size() != 1 && s.params[i].v.size() != size)
          return fail(fmt::format("parameter '{}' has {} elements for a population of {}", names[i],
                                  s.params[i].v.size(), size),
                      where);
      }
      auto param = [&](std::string_view name) -> const Param& { return s.params[*ir::operand_index(node.op, name)]; };
      auto factors = [&](std::string_view tau) {
        Vec k(size);
        for (size_t e = 0; e < size; ++e)
          k[e] = o.discretisation == Discretisation::Euler ? o.dt / param(tau)[e] : std::exp(-o.dt / param(tau)[e]);
        return k;
      };
      if (node.op == Op::LI || node.op == Op::LIF) s.k_mem = factors("tau");
      if (node.op == Op::CubaLI || node.op == Op::CubaLIF) {
        s.k_mem = factors("tau_mem");
        s.k_syn = factors("tau_syn");
      }
      if (ir::op_info(node.op).stateful) {
        s.v.assign(size, 0.0);
        s.i.assign(size, 0.0);
      }
      if (node.op == Op::Delay) {
        int64_t longest = 0;
        for (size_t e = 0; e < size; ++e) {
          s.delay_steps.push_back(std::llround(param("delay")[e] / o.dt));
          if (s.delay_steps.back() < 0) return fail("a delay is negative", where);
          longest = std::max(longest, s.delay_steps.back());
        }
        s.delay_line.assign(static_cast<size_t>(longest + 1), Vec(size, 0.0));
      }
    }
    return {};
  }

  // One step of node n, into `out`.
  void step(size_t n, int64_t t, Vec& out) {
    const ir::Node& node = g.nodes()[n];
    NodeState& s = state[n];
    const Vec& x = buf[ir::index(node.inputs[0])];
    const ir::Shape& in_shape = g.value(node.inputs[0]).type.shape;
    size_t size = out.size();
    switch (node.op) {
      case Op::Identity:
      case Op::NirFlatten: out = x; return;
      case Op::Sum:
        out = x;
        for (size_t k = 1; k < node.inputs.size(); ++k) {
          const Vec& y = buf[ir::index(node.inputs[k])];
          for (size_t e = 0; e < size; ++e) out[e] = out[e] + y[e];
        }
        return;
      case Op::Affine:
      case Op::Linear: {
        const Vec& w = s.params[1].v;
        size_t cols = x.size();
        for (size_t r = 0; r < size; ++r) {
          double acc = node.op == Op::Affine ? s.params[2][r] : 0.0;
          for (size_t c = 0; c < cols; ++c) acc = acc + w[r * cols + c] * x[c];
          out[r] = acc;
        }
        return;
      }
      case Op::Scale:
        for (size_t e = 0; e < size; ++e) out[e] = s.params[1][e] * x[e];
        return;
      case Op::NirConv1d:
      case Op::NirConv2d: conv(node, s, x, in_shape, out); return;
      case Op::SumPool2d:
      case Op::AvgPool2d: pool(node, x, in_shape, out); return;
      case Op::Delay: {
        size_t len = s.delay_line.size();
        s.delay_line[static_cast<size_t>(t) % len] = x;
        for (size_t e = 0; e < size; ++e) {
          int64_t from = t - s.delay_steps[e];
          out[e] = from < 0 ? 0.0 : s.delay_line[static_cast<size_t>(from) % len][e];
        }
        return;
      }
      case Op::Threshold:
        for (size_t e = 0; e < size; ++e) out[e] = x[e] > s.params[1][e] ? 1.0 : 0.0;
        return;
      default: neuron(node, s, x, out); return;
    }
  }

  void neuron(const ir::Node& node, NodeState& s, const Vec& x, Vec& out) {
    auto p = [&](std::string_view name) -> const Param& { return s.params[*ir::operand_index(node.op, name)]; };
    bool euler = o.discretisation == Discretisation::Euler;
    bool fires = node.op == Op::IF || node.op == Op::LIF || node.op == Op::CubaLIF;
    for (size_t e = 0; e < out.size(); ++e) {
      double& v = s.v[e];
      switch (node.op) {
        case Op::Integrator:
        case Op::IF: v = v + o.dt * (p("r")[e] * x[e]); break;
        case Op::LI:
        case Op::LIF: {
          double drive = p("r")[e] * x[e];
          v = euler ? v + s.k_mem[e] * ((p("v_leak")[e] - v) + drive)
                    : s.k_mem[e] * v + (1.0 - s.k_mem[e]) * (p("v_leak")[e] + drive);
          break;
        }
        default: {  // CubaLI, CubaLIF: the current first, then the membrane with the new current
          double& i = s.i[e];
          double in = p("w_in")[e] * x[e];
          i = euler ? i + s.k_syn[e] * (in - i) : s.k_syn[e] * i + (1.0 - s.k_syn[e]) * in;
          double drive = p("r")[e] * i;
          v = euler ? v + s.k_mem[e] * ((p("v_leak")[e] - v) + drive)
                    : s.k_mem[e] * v + (1.0 - s.k_mem[e]) * (p("v_leak")[e] + drive);
        }
      }
      if (!fires) {
        out[e] = v;
        continue;
      }
      bool spike = v > p("v_threshold")[e];
      out[e] = spike ? 1.0 : 0.0;
      if (spike) v = o.reset == Reset::ToValue ? p("v_reset")[e] : v - p("v_threshold")[e];
    }
  }

  void conv(const ir::Node& node, const NodeState& s, const Vec& x, const ir::Shape& in_shape, Vec& out) {
    const ir::Shape& w_shape = g.value(node.inputs[1]).type.shape;
    const ir::Shape& o_shape = g.value(node.outputs[0]).type.shape;
    bool two = node.op == Op::NirConv2d;
    int64_t cout = w_shape[0].size(), cin_g = w_shape[1].size(), kh = two ? w_shape[2].size() : 1,
            kw = w_shape[two ? 3 : 2].size();
    int64_t ih = two ? in_shape[1].size() : 1, iw = in_shape[two ? 2 : 1].size();
    int64_t oh = two ? o_shape[1].size() : 1, ow = o_shape[two ? 2 : 1].size();
    ir::OpAttrs attrs(node.op, node.attrs, in_shape.rank());
    auto strides = attrs.get_ints("strides"), dil = attrs.get_ints("dilations"), pads = attrs.get_ints("pads");
    int64_t sh = two ? strides[0] : 1, sw = strides[two ? 1 : 0], dh = two ? dil[0] : 1, dw = dil[two ? 1 : 0];
    int64_t ph = two ? pads[0] : 0, pw = pads[two ? 1 : 0];
    int64_t groups = attrs.get_int("group"), cout_g = cout / groups;
    const Vec& w = s.params[1].v;
    bool bias = node.inputs.size() > 2 && node.inputs[2] != ir::kNoValue;
    for (int64_t co = 0; co < cout; ++co) {
      int64_t first_in = (co / cout_g) * cin_g;
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t z = 0; z < ow; ++z) {
          double acc = bias ? s.params[2][static_cast<size_t>(co)] : 0.0;
          for (int64_t ci = 0; ci < cin_g; ++ci)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                int64_t iy = y * sh - ph + ky * dh, ix = z * sw - pw + kx * dw;
                if (iy < 0 || iy >= ih || ix < 0 || ix >= iw) continue;
                acc = acc + w[static_cast<size_t>(((co * cin_g + ci) * kh + ky) * kw + kx)] *
                                x[static_cast<size_t>(((first_in + ci) * ih + iy) * iw + ix)];
              }
          out[static_cast<size_t>((co * oh + y) * ow + z)] = acc;
        }
    }
  }

  void pool(const ir::Node& node, const Vec& x, const ir::Shape& in_shape, Vec& out) {
    const ir::Shape& o_shape = g.value(node.outputs[0]).type.shape;
    ir::OpAttrs attrs(node.op, node.attrs, in_shape.rank());
    auto k = attrs.get_ints("kernel_shape"), st = attrs.get_ints("strides"), pads = attrs.get_ints("pads");
    int64_t c = in_shape[0].size(), ih = in_shape[1].size(), iw = in_shape[2].size();
    int64_t oh = o_shape[1].size(), ow = o_shape[2].size();
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t z = 0; z < ow; ++z) {
          double acc = 0.0;
          for (int64_t ky = 0; ky < k[0]; ++ky)
            for (int64_t kx = 0; kx < k[1]; ++kx) {
              int64_t iy = y * st[0] - pads[0] + ky, ix = z * st[1] - pads[1] + kx;
              if (iy < 0 || iy >= ih || ix < 0 || ix >= iw) continue;
              acc = acc + x[static_cast<size_t>((ch * ih + iy) * iw + ix)];
            }
          if (node.op == Op::AvgPool2d) acc = acc / static_cast<double>(k[0] * k[1]);
          out[static_cast<size_t>((ch * oh + y) * ow + z)] = acc;
        }
  }
};

}  // namespace

std::string_view discretisation_name(Discretisation d) { return d == Discretisation::Euler ? "euler" : "exact"; }
std::string_view reset_name(Reset r) { return r == Reset::ToValue ? "zero" : "subtract"; }

std::string describe(const SimOptions& o) {
  return fmt::format("steps={} dt={} discretisation={} reset={}", o.steps, o.dt, discretisation_name(o.discretisation),
                     reset_name(o.reset));
}

Expected<SimResult> simulate(const ir::Graph& graph, const std::vector<ir::Tensor>& inputs, const SimOptions& options) {
  if (options.steps < 0 || !(options.dt > 0)) return fail(fmt::format("bad run parameters: {}", describe(options)));
  if (inputs.size() != graph.inputs().size())
    return fail(fmt::format("the graph has {} inputs, {} given", graph.inputs().size(), inputs.size()));
  Sim sim{graph, options, {}, {}};
  if (auto ok = sim.prepare(); !ok) return std::unexpected(ok.error());
  std::vector<Vec> in(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    size_t per_step = sim.buf[ir::index(graph.inputs()[k])].size();
    in[k] = to_doubles(inputs[k]);
    if (in[k].size() != per_step * static_cast<size_t>(options.steps))
      return fail(fmt::format("input '{}' has {} elements, expected {} steps x {}", graph.value(graph.inputs()[k]).name,
                              in[k].size(), options.steps, per_step));
  }
  SimResult r;
  r.options = options;
  std::vector<size_t> layer_node;
  for (size_t n = 0; n < graph.num_nodes(); ++n) {
    const ir::Node& node = graph.nodes()[n];
    if (!ir::is_nir_op(node.op)) continue;
    LayerTrace l{graph.node_label(ir::NodeId{static_cast<uint32_t>(n)}),
                 std::string(ir::op_name(node.op)),
                 static_cast<int64_t>(sim.buf[ir::index(node.outputs[0])].size()),
                 spiking_op(node.op),
                 0,
                 {}};
    if (l.spiking) l.spikes.reserve(static_cast<size_t>(l.size * options.steps));
    r.layers.push_back(std::move(l));
    layer_node.push_back(n);
  }
  std::vector<Vec> out(graph.outputs().size());
  Vec next;
  for (int64_t t = 0; t < options.steps; ++t) {
    for (size_t k = 0; k < inputs.size(); ++k) {
      Vec& b = sim.buf[ir::index(graph.inputs()[k])];
      std::copy_n(in[k].begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(t) * b.size()), b.size(), b.begin());
    }
    for (size_t n = 0; n < graph.num_nodes(); ++n) {
      Vec& b = sim.buf[ir::index(graph.nodes()[n].outputs[0])];
      next.assign(b.size(), 0.0);
      sim.step(n, t, next);  // into a fresh buffer: a node may read its own previous output
      b.swap(next);
    }
    for (size_t l = 0; l < r.layers.size(); ++l) {
      const Vec& b = sim.buf[ir::index(graph.nodes()[layer_node[l]].outputs[0])];
      for (double z : b) r.layers[l].nonzero += z != 0.0;
      if (!r.layers[l].spiking) continue;
      for (double z : b) {
        r.layers[l].spikes.push_back(z != 0.0);
        r.layers[l].spike_count += z != 0.0;
      }
    }
    for (size_t k = 0; k < out.size(); ++k) {
      const Vec& b = sim.buf[ir::index(graph.outputs()[k])];
      out[k].insert(out[k].end(), b.begin(), b.end());
    }
  }
  for (size_t k = 0; k < out.size(); ++k) {
    std::vector<int64_t> dims{options.steps};
    for (int64_t d : graph.value(graph.outputs()[k]).type.shape.sizes()) dims.push_back(d);
    r.outputs.push_back(ir::Tensor::from_values<double>(ir::DType::f64, dims, out[k]));
  }
  return r;
}

std::vector<ir::Tensor> random_spike_inputs(const ir::Graph& graph, int64_t steps, double rate, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<ir::Tensor> out;
  for (ir::ValueId v : graph.inputs()) {
    int64_t n = graph.value(v).type.shape.num_elements().value_or(1);
    std::vector<double> data(static_cast<size_t>(n * steps));
    // a draw in [0, 1) from the top 53 bits, so that tools/nir_sim.py can draw the same
    for (double& x : data) x = static_cast<double>(rng() >> 11) * 0x1.0p-53 < rate ? 1.0 : 0.0;
    std::vector<int64_t> dims{steps};
    for (int64_t d : graph.value(v).type.shape.sizes()) dims.push_back(d);
    out.push_back(ir::Tensor::from_values<double>(ir::DType::f64, dims, data));
  }
  return out;
}

}  // namespace refinery::runtime
