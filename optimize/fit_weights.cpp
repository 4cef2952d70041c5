// Exact weight rescaling into a chip's format (optimize/fit_weights.h).
#include "optimize/fit_weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "ir/spiking.h"
#include "targets/neuromorphic.h"

namespace refinery::optimize {
namespace {

using ir::Op;

// The neuron's operand that multiplies its input current.
const char* gain_operand(Op op) {
  switch (op) {
    case Op::LIF:
    case Op::IF:
    case Op::LI:
    case Op::Integrator: return "r";
    case Op::CubaLIF:
    case Op::CubaLI: return "w_in";
    default: return nullptr;
  }
}

// `t` times `f` (or divided by it) as binary32 with the tensor's dims, when
// every result is exact in binary32 and finite; else nothing. A quotient is
// exact when multiplying it back gives the element (f is a small odd integer).
std::optional<ir::Tensor> rescaled_exactly(const ir::Tensor& t, double f, bool divide) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = t.as_double(i);
    const double r = divide ? v / f : v * f;
    const auto x = static_cast<float>(r);
    const bool exact = divide ? static_cast<double>(x) * f == v : static_cast<double>(x) == r;
    if (!std::isfinite(r) || !exact) return std::nullopt;
    out[static_cast<size_t>(i)] = x;
  }
  return ir::Tensor::from_values<float>(ir::DType::f32, t.dims(), out);
}

}  // namespace

std::vector<Rescaled> rescale_weights_to_fit(ir::Graph& g, int weight_bits) {
  std::vector<Rescaled> done;
  const std::vector<uint32_t> uses = g.use_counts();
  std::vector<bool> is_output(g.num_values(), false);
  for (ir::ValueId v : g.outputs()) is_output[ir::index(v)] = true;
  for (size_t i = 0; i < g.num_nodes(); ++i) {
    const ir::Node& neuron = g.nodes()[i];
    const char* gain_name = gain_operand(neuron.op);
    if (gain_name == nullptr || neuron.inputs.empty()) continue;
    const ir::ValueId current = neuron.inputs[0];
    const ir::Value& cv = g.value(current);
    if (cv.kind != ir::ValueKind::NodeResult || uses[ir::index(current)] != 1 || is_output[ir::index(current)])
      continue;
    const ir::NodeId syn_id = cv.producer;
    const ir::Node& syn = g.node(syn_id);
    if (syn.op != Op::Affine && syn.op != Op::Linear) continue;
    const ir::Tensor* w = g.constant_tensor(syn.inputs[1]);
    const bool has_bias = syn.op == Op::Affine && syn.inputs.size() > 2 && syn.inputs[2] != ir::kNoValue;
    const ir::Tensor* b = has_bias ? g.constant_tensor(syn.inputs[2]) : nullptr;
    const size_t gain_at = *ir::operand_index(neuron.op, gain_name);
    const ir::Tensor* gain = gain_at < neuron.inputs.size() ? g.constant_tensor(neuron.inputs[gain_at]) : nullptr;
    if (w == nullptr || gain == nullptr || (has_bias && b == nullptr)) continue;
    targets::WeightFit before = targets::weight_fit(*w, weight_bits);
    if (before.fits() || before.odd_factor <= 1) continue;
    // The factor must divide the bias too (b / g exact).
    uint64_t factor = before.odd_factor;
    if (b && targets::weight_fit(*b, 64).bits_needed > 0)
      factor = std::gcd(factor, targets::weight_fit(*b, 64).odd_factor);
    if (factor <= 1) continue;
    const double f = static_cast<double>(factor);
    auto w2 = rescaled_exactly(*w, f, true);
    if (!w2) continue;
    targets::WeightFit after = targets::weight_fit(*w2, weight_bits);
    if (!after.fits()) continue;
    std::optional<ir::Tensor> b2;
    if (b && !(b2 = rescaled_exactly(*b, f, true))) continue;
    auto gain2 = rescaled_exactly(*gain, f, false);
    if (!gain2) continue;
    const std::string syn_label = g.node_label(syn_id);
    const std::string neuron_label = g.node_label(ir::NodeId{static_cast<uint32_t>(i)});
    auto add = [&](const std::string& name, ir::Tensor t) {
      return g.add_constant(name, std::make_shared<const ir::Tensor>(std::move(t)));
    };
    const ir::ValueId nw = add(g.value(syn.inputs[1]).name + ".rescaled", std::move(*w2));
    std::optional<ir::ValueId> nb;
    if (b2) nb = add(g.value(syn.inputs[2]).name + ".rescaled", std::move(*b2));
    const ir::ValueId ngain = add(g.value(neuron.inputs[gain_at]).name + ".rescaled", std::move(*gain2));
    ir::Node& s = g.node(syn_id);
    s.inputs[1] = nw;
    if (nb) s.inputs[2] = *nb;
    g.node(ir::NodeId{static_cast<uint32_t>(i)}).inputs[gain_at] = ngain;
    done.push_back({syn_label, neuron_label, factor, before.bits_needed, after.bits_needed});
  }
  return done;
}

}  // namespace refinery::optimize
