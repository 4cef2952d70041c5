// Ops newer than the model's opset, written in that opset's terms. The
// optimizer may make an op the model's opset lacks (a rule's right side:
// LayerNormalization, opset 17, from the decomposed form exporters write
// below 17); export keeps the model's opset and writes such an op as the
// older ops that compute it, in the form ONNX Runtime fuses back into one
// kernel (docs/onnx.md, "Export").
#include <fmt/format.h>

#include <numeric>

#include "frontends/onnx_internal.h"

namespace refinery::frontends::detail {
namespace {

int64_t default_opset(const ir::ModelInfo& info) {
  if (auto it = info.opsets.find(""); it != info.opsets.end()) return it->second;
  if (auto it = info.opsets.find("ai.onnx"); it != info.opsets.end()) return it->second;
  return 17;
}

ir::TensorRef scalar_like(ir::DType dtype, double v) {
  if (dtype == ir::DType::f64) return std::make_shared<const ir::Tensor>(ir::Tensor::from_values<double>(dtype, {}, {v}));
  return std::make_shared<const ir::Tensor>(ir::Tensor::from_values<float>(dtype, {}, {static_cast<float>(v)}));
}

}  // namespace

Expected<std::optional<ir::Graph>> lower_for_opset(const ir::Graph& g, const std::string& file) {
  const int64_t opset = default_opset(g.info);
  const auto uses = g.use_counts();
  bool any = false;
  for (size_t n = 0; n < g.num_nodes(); ++n) {
    const ir::Node& node = g.nodes()[n];
    if (node.op != ir::Op::LayerNormalization || opset >= 17) continue;
    any = true;
    const ir::TensorType& x = g.value(node.inputs[0]).type;
    auto where = fmt::format("node '{}'", g.node_label(ir::NodeId{static_cast<uint32_t>(n)}));
    auto limit = [&](std::string why) {
      return std::unexpected(Diag{file, where, fmt::format("LayerNormalization at opset {}: {}", opset, why), true});
    };
    if (x.dtype != ir::DType::f32 && x.dtype != ir::DType::f64)
      return limit("written as older ops only for float and double inputs");
    for (size_t i = 1; i < node.outputs.size(); ++i)
      if (uses[ir::index(node.outputs[i])] > 0) return limit("its mean and inverse deviation outputs are used");
    if (!x.shape.ranked()) return limit("its input's rank is unknown");
  }
  if (!any) return std::optional<ir::Graph>{};

  ir::Graph out;
  out.info = g.info;
  std::vector<ir::ValueId> map(g.num_values(), ir::kNoValue);
  for (ir::ValueId v : g.inputs()) map[ir::index(v)] = out.add_input(g.value(v).name, g.value(v).type);
  for (ir::ValueId v : g.constants()) map[ir::index(v)] = out.add_constant(g.value(v).name, g.value(v).constant);
  auto in = [&](ir::ValueId v) { return v == ir::kNoValue ? v : map[ir::index(v)]; };
  for (const ir::Node& node : g.nodes()) {
    if (node.op != ir::Op::LayerNormalization || opset >= 17) {
      ir::Node copy = node;
      copy.outputs.clear();
      for (auto& v : copy.inputs) v = in(v);
      std::vector<std::string> names;
      std::vector<ir::TensorType> types;
      for (ir::ValueId v : node.outputs) {
        names.push_back(g.value(v).name);
        types.push_back(g.value(v).type);
      }
      ir::NodeId id = out.add_node(std::move(copy), names, types);
      for (size_t i = 0; i < node.outputs.size(); ++i) map[ir::index(node.outputs[i])] = out.node(id).outputs[i];
      continue;
    }
    // Y = (X - mean) / sqrt(mean((X - mean)^2) + epsilon) * Scale + B over
    // the axes from `axis` on: torch's opset-13 export of nn.LayerNorm.
    const ir::Value& y = g.value(node.outputs[0]);
    const ir::TensorType& xt = g.value(node.inputs[0]).type;
    const int64_t rank = xt.shape.rank();
    ir::OpAttrs attrs(node.op, node.attrs, rank);
    const int64_t axis = ir::normalize_axis(attrs.get_int("axis"), rank).value_or(rank - 1);
    std::vector<int64_t> axes(static_cast<size_t>(rank - axis));
    std::iota(axes.begin(), axes.end(), axis);
    std::vector<ir::Dim> reduced_dims = xt.shape.dims();
    for (int64_t a : axes) reduced_dims[static_cast<size_t>(a)] = ir::Dim(1);
    const ir::TensorType reduced{xt.dtype, ir::Shape(reduced_dims)};
    const std::string base = y.name.empty() ? fmt::format("layer_norm{}", out.num_nodes()) : y.name;
    auto add = [&](ir::Op op, std::vector<ir::ValueId> inputs, const std::string& suffix, const ir::TensorType& t,
                   ir::Attributes a = {}) {
      ir::Node n;
      n.op = op;
      if (!node.name.empty()) n.name = node.name + "/" + suffix;
      n.inputs = std::move(inputs);
      n.attrs = std::move(a);
      return out.node(out.add_node(std::move(n), {base + "/" + suffix}, {t})).outputs[0];
    };
    ir::Attributes over;
    over.set("axes", axes);
    ir::ValueId X = in(node.inputs[0]);
    ir::ValueId mean = add(ir::Op::ReduceMean, {X}, "mean", reduced, over);
    ir::ValueId d = add(ir::Op::Sub, {X, mean}, "centered", xt);
    ir::ValueId two = out.add_constant(base + "/two", scalar_like(xt.dtype, 2.0));
    ir::ValueId sq = add(ir::Op::Pow, {d, two}, "squared", xt);
    ir::ValueId var = add(ir::Op::ReduceMean, {sq}, "variance", reduced, over);
    ir::ValueId eps = out.add_constant(base + "/epsilon", scalar_like(xt.dtype, attrs.get_float("epsilon")));
    ir::ValueId ve = add(ir::Op::Add, {var, eps}, "variance_eps", reduced);
    ir::ValueId sd = add(ir::Op::Sqrt, {ve}, "deviation", reduced);
    ir::ValueId normed = add(ir::Op::Div, {d, sd}, "normalized", xt);
    const bool has_bias = node.inputs.size() > 2 && node.inputs[2] != ir::kNoValue;
    ir::Node mul;
    mul.op = ir::Op::Mul;
    mul.name = node.name;
    mul.inputs = {normed, in(node.inputs[1])};
    ir::ValueId scaled = has_bias ? add(ir::Op::Mul, mul.inputs, "scaled", y.type)
                                  : out.node(out.add_node(std::move(mul), {y.name}, {y.type})).outputs[0];
    ir::ValueId result = scaled;
    if (has_bias) {
      ir::Node addb;
      addb.op = ir::Op::Add;
      addb.name = node.name;
      addb.inputs = {scaled, in(node.inputs[2])};
      result = out.node(out.add_node(std::move(addb), {y.name}, {y.type})).outputs[0];
    }
    map[ir::index(node.outputs[0])] = result;
  }
  std::vector<ir::ValueId> outputs;
  for (ir::ValueId v : g.outputs()) outputs.push_back(in(v));
  out.set_outputs(std::move(outputs));
  return std::optional<ir::Graph>{std::move(out)};
}

}  // namespace refinery::frontends::detail
