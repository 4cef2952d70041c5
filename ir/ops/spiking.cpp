// The NIR primitives (docs/nir.md, docs/spiking.md). Tensors carry NIR's
// shapes, which have no batch dimension: an Affine maps [n] to [m], a
// convolution [C, L...] to [C', L'...]. Parameters are constant operands named
// in ir/spiking.h; a scalar parameter broadcasts to the population.
#include <algorithm>

#include "ir/ops/registry.h"
#include "ir/spiking.h"

namespace refinery::ir::ops {
namespace {

bool fits(const Dim& a, const Dim& b) { return !(a.is_static() && b.is_static() && a.size() != b.size()); }

// Every parameter (operands 1..) must broadcast to the input's shape; the
// result has the input's type.
Result population(InferContext& c) {
  const Shape& x = c.shape(0);
  for (size_t i = 1; i < c.inputs.size(); ++i) {
    if (!c.has_input(i)) continue;
    const Shape& p = c.shape(i);
    auto b = broadcast(x, p);
    if (!b || b->rank() != x.rank() || !std::equal(b->dims().begin(), b->dims().end(), x.dims().begin(), fits))
      return error(fmt::format("parameter {} of shape [{}] does not fit the population [{}]", i, p.str(), x.str()));
  }
  return same_as_first(c);
}

Result affine(InferContext& c) {
  const Shape& x = c.shape(0);
  const Shape& w = c.shape(1);
  if (w.rank() != 2) return error(fmt::format("weight must be 2-d, got [{}]", w.str()));
  if (x.rank() != 1 || !fits(x[0], w[1]))
    return error(fmt::format("weight [{}] does not fit the input [{}]: expects [{}]", w.str(), x.str(), w[1].str()));
  if (c.has_input(2) && (c.shape(2).rank() != 1 || !fits(c.shape(2)[0], w[0])))
    return error(fmt::format("bias [{}] does not fit the weight [{}]", c.shape(2).str(), w.str()));
  c.outputs[0] = TensorType{c.in(0).dtype, Shape({w[0]})};
  return {};
}

// NIR convolution: input [C, L1..], weight [C', C/group, K1..], bias [C'].
Result nir_conv(InferContext& c) {
  const Shape& x = c.shape(0);
  const Shape& w = c.shape(1);
  auto spatial = static_cast<size_t>(w.rank()) - 2;
  if (w.rank() < 3 || !w.is_static())
    return error(fmt::format("weight must be static C' x C x K..., got [{}]", w.str()));
  if (x.rank() != w.rank() - 1)
    return error(
        fmt::format("weight [{}] does not fit the input [{}]: expects rank {}", w.str(), x.str(), w.rank() - 1));
  OpAttrs a = c.op_attrs();
  auto strides = a.get_ints("strides"), pads = a.get_ints("pads"), dil = a.get_ints("dilations");
  int64_t group = a.get_int("group");
  if (strides.size() != spatial || dil.size() != spatial || pads.size() != 2 * spatial)
    return error("strides, dilations or pads do not match the number of spatial dimensions");
  if (group <= 0 || w[0].size() % group != 0)
    return error(fmt::format("group {} does not divide {} output channels", group, w[0].size()));
  if (x[0].is_static() && x[0].size() != w[1].size() * group)
    return error(fmt::format("weight [{}] with group {} does not fit the input [{}]: expects {} channels", w.str(),
                             group, x.str(), w[1].size() * group));
  if (c.has_input(2) && (c.shape(2).rank() != 1 || !fits(c.shape(2)[0], w[0])))
    return error(fmt::format("bias [{}] does not fit the weight [{}]", c.shape(2).str(), w.str()));
  std::vector<Dim> out{w[0]};
  for (size_t i = 0; i < spatial; ++i) {
    const Dim& in = x[static_cast<int64_t>(i) + 1];
    if (strides[i] <= 0 || dil[i] <= 0) return error("strides and dilations must be positive");
    if (!in.is_static()) {
      out.push_back(Dim::unknown());
      continue;
    }
    int64_t k = w[static_cast<int64_t>(i) + 2].size();
    int64_t span = in.size() + pads[i] + pads[i + spatial] - dil[i] * (k - 1) - 1;
    if (span < 0) return error(fmt::format("kernel [{}] is larger than the padded input [{}]", w.str(), x.str()));
    out.emplace_back(span / strides[i] + 1);
  }
  c.outputs[0] = TensorType{c.in(0).dtype, Shape(std::move(out))};
  return {};
}

Result pool2d(InferContext& c) {
  const Shape& x = c.shape(0);
  if (x.rank() != 3) return error(fmt::format("pool input must be C x H x W, got [{}]", x.str()));
  OpAttrs a = c.op_attrs();
  auto k = c.attrs->get_ints("kernel_shape");
  auto strides = a.maybe_ints("strides").value_or(std::vector<int64_t>{});  // absent: kernel_shape
  auto pads = a.get_ints("pads");
  if (k.size() != 2 || strides.size() != 2 || pads.size() != 4)
    return error("kernel_shape and strides must have 2 entries, pads 4");
  std::vector<Dim> out{x[0]};
  for (size_t i = 0; i < 2; ++i) {
    const Dim& in = x[static_cast<int64_t>(i) + 1];
    if (k[i] <= 0 || strides[i] <= 0) return error("kernel and strides must be positive");
    if (!in.is_static()) {
      out.push_back(Dim::unknown());
      continue;
    }
    int64_t span = in.size() + pads[i] + pads[i + 2] - k[i];
    if (span < 0) return error(fmt::format("kernel is larger than the padded input [{}]", x.str()));
    out.emplace_back(span / strides[i] + 1);
  }
  c.outputs[0] = TensorType{c.in(0).dtype, Shape(std::move(out))};
  return {};
}

Result nir_flatten(InferContext& c) {
  const Shape& x = c.shape(0);
  OpAttrs a = c.op_attrs();
  auto start = normalize_axis(a.get_int("start_dim"), x.rank());
  auto end = normalize_axis(a.get_int("end_dim"), x.rank());
  if (!start || !end || *start > *end)
    return error(fmt::format("start_dim and end_dim do not fit the input [{}]", x.str()));
  std::vector<Dim> out(x.dims().begin(), x.dims().begin() + *start);
  int64_t n = 1;
  for (int64_t i = *start; i <= *end; ++i) n = x[i].is_static() && n >= 0 ? n * x[i].size() : -1;
  out.push_back(n >= 0 ? Dim(n) : Dim::unknown());
  out.insert(out.end(), x.dims().begin() + *end + 1, x.dims().end());
  c.outputs[0] = TensorType{c.in(0).dtype, Shape(std::move(out))};
  return {};
}

using Names = std::vector<std::string_view>;

struct Entry {
  Op op;
  Names operands;  // "input" first, then the parameters
  InferFn infer;
  bool stateful;
  int optional_params = 0;  // trailing parameters that may be absent (bias)
};

const std::vector<Entry>& entries() {
  static const std::vector<Entry> kEntries{
      {Op::Affine, {"input", "weight", "bias"}, affine, false},
      {Op::Linear, {"input", "weight"}, affine, false},
      {Op::Scale, {"input", "scale"}, population, false},
      {Op::NirConv1d, {"input", "weight", "bias"}, nir_conv, false, 1},
      {Op::NirConv2d, {"input", "weight", "bias"}, nir_conv, false, 1},
      {Op::SumPool2d, {"input"}, pool2d, false},
      {Op::AvgPool2d, {"input"}, pool2d, false},
      {Op::NirFlatten, {"input"}, nir_flatten, false},
      {Op::Delay, {"input", "delay"}, population, true},
      {Op::Threshold, {"input", "threshold"}, population, false},
      {Op::Integrator, {"input", "r"}, population, true},
      {Op::IF, {"input", "r", "v_threshold", "v_reset"}, population, true},
      {Op::LI, {"input", "tau", "r", "v_leak"}, population, true},
      {Op::LIF, {"input", "tau", "r", "v_leak", "v_threshold", "v_reset"}, population, true},
      {Op::CubaLI, {"input", "tau_syn", "tau_mem", "r", "v_leak", "w_in"}, population, true},
      {Op::CubaLIF, {"input", "tau_syn", "tau_mem", "r", "v_leak", "v_threshold", "v_reset", "w_in"}, population, true},
  };
  return kEntries;
}

const Entry* entry(Op op) {
  for (const Entry& e : entries())
    if (e.op == op) return &e;
  return nullptr;
}

}  // namespace

void register_spiking(Table& t) {
  // NIR tensors have no batch axis: one axis (C) before the spatial ones.
  const std::vector<AttrSpec> conv_attrs{ints_per_axis("dilations", 1, 1), int_attr("group", 1),
                                         ints_per_axis_ends("pads", 0, 1), ints_per_axis("strides", 1, 1)};
  const std::vector<AttrSpec> pool_attrs{
      {"kernel_shape", AttrKind::Ints, AttrUse::Required},
      ints_per_axis_ends("pads", 0, 1),
      {"strides", AttrKind::Ints, AttrUse::Optional, {.rule = AttrDefault::Rule::SameAs, .other = "kernel_shape"}}};
  for (const Entry& e : entries()) {
    int n = static_cast<int>(e.operands.size());
    OpInfo info{.op = e.op,
                .min_inputs = n - e.optional_params,
                .max_inputs = n,
                .shape_rule = e.infer,
                .stateful = e.stateful};
    if (e.op == Op::NirConv1d || e.op == Op::NirConv2d) info.attrs = conv_attrs;
    if (e.op == Op::SumPool2d || e.op == Op::AvgPool2d) info.attrs = pool_attrs;
    if (e.op == Op::NirFlatten) info.attrs = {int_attr("end_dim", -1), int_attr("start_dim", 0)};
    define(t, std::move(info));
  }
}

}  // namespace refinery::ir::ops

namespace refinery::ir {

bool is_nir_op(Op op) { return ops::entry(op) != nullptr; }

std::span<const std::string_view> operand_names(Op op) {
  const ops::Entry* e = ops::entry(op);
  if (e == nullptr) return {};
  return e->operands;
}

std::optional<size_t> operand_index(Op op, std::string_view name) {
  auto names = operand_names(op);
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return i;
  return std::nullopt;
}

}  // namespace refinery::ir
