// Ops written in the form ONNX Runtime should see. Ops newer than the
// model's opset, in that opset's terms: the optimizer may make an op the
// model's opset lacks (a rule's right side: LayerNormalization, opset 17,
// from the decomposed form exporters write below 17; Gelu, opset 20, from
// torch's erf form); export keeps the model's opset and writes such an op as
// the older ops that compute it, in the form ONNX Runtime fuses back into
// one kernel. And the contrib Attention, whose output ONNX Runtime would
// type more precisely than the exporter's graph it replaces, and a Sub of a
// constant, which its fusions match only as an Add (docs/onnx.md, "Export").
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <numeric>

#include <onnx/defs/schema.h>

#include "frontends/onnx.h"
#include "frontends/onnx_internal.h"

namespace refinery::frontends::detail {
namespace {

int64_t default_opset(const ir::ModelInfo& info) {
  if (auto it = info.opsets.find(""); it != info.opsets.end()) return it->second;
  if (auto it = info.opsets.find("ai.onnx"); it != info.opsets.end()) return it->second;
  return 17;
}

// Builds the older ops into `out`, reading the original node's inputs
// through `in`; the node computing the original's output 0 gets its name.
struct Writer {
  const ir::Graph& g;
  const ir::Node& node;
  ir::Graph& out;
  std::vector<ir::ValueId>& map;

  ir::ValueId in(size_t i) const {
    ir::ValueId v = node.inputs[i];
    return v == ir::kNoValue ? v : map[ir::index(v)];
  }
  const ir::TensorType& type(size_t i) const { return g.value(node.inputs[i]).type; }
  const ir::Value& result() const { return g.value(node.outputs[0]); }
  std::string base() const {
    return result().name.empty() ? fmt::format("_lowered{}", out.num_nodes()) : result().name;
  }

  // A part: named after the result, `<y>/<suffix>`; the last part (`last`)
  // is the result itself.
  ir::ValueId op(ir::Op o, std::vector<ir::ValueId> inputs, const std::string& suffix, const ir::TensorType& t,
                 ir::Attributes a = {}, bool last = false) {
    ir::Node n;
    n.op = o;
    if (!node.name.empty()) n.name = last ? node.name : node.name + "/" + suffix;
    n.inputs = std::move(inputs);
    n.attrs = std::move(a);
    std::string name = last ? result().name : base() + "/" + suffix;
    return out.node(out.add_node(std::move(n), {name}, {t})).outputs[0];
  }
  ir::ValueId scalar(const std::string& suffix, double v) {
    ir::DType dt = type(0).dtype;
    ir::TensorRef t =
        dt == ir::DType::f64
            ? std::make_shared<const ir::Tensor>(ir::Tensor::from_values<double>(dt, {}, {v}))
            : std::make_shared<const ir::Tensor>(ir::Tensor::from_values<float>(dt, {}, {static_cast<float>(v)}));
    return out.add_constant(base() + "/" + suffix, t);
  }
};

// Why the node cannot be written in older ops (a limitation), or nothing.
using Check = std::optional<std::string> (*)(const ir::Graph& g, const ir::Node& node,
                                             const std::vector<uint32_t>& uses);
using Lower = ir::ValueId (*)(Writer& w);

// Any node of the op can be written so.
std::optional<std::string> no_limitation(const ir::Graph&, const ir::Node&, const std::vector<uint32_t>&) {
  return std::nullopt;
}

std::optional<std::string> float_or_double(const ir::Graph& g, const ir::Node& node) {
  ir::DType dt = g.value(node.inputs[0]).type.dtype;
  if (dt != ir::DType::f32 && dt != ir::DType::f64) return "written as older ops only for float and double inputs";
  return std::nullopt;
}

// Y = (X - mean) / sqrt(mean((X - mean)^2) + epsilon) * Scale + B over the
// axes from `axis` on: torch's opset-13 export of nn.LayerNorm, which ONNX
// Runtime's LayerNormFusion matches.
std::optional<std::string> layer_norm_check(const ir::Graph& g, const ir::Node& node,
                                            const std::vector<uint32_t>& uses) {
  if (auto bad = float_or_double(g, node)) return bad;
  for (size_t i = 1; i < node.outputs.size(); ++i)
    if (uses[ir::index(node.outputs[i])] > 0) return "its mean and inverse deviation outputs are used";
  if (!g.value(node.inputs[0]).type.shape.ranked()) return "its input's rank is unknown";
  return std::nullopt;
}

ir::ValueId layer_norm_lower(Writer& w) {
  const ir::TensorType& xt = w.type(0);
  const int64_t rank = xt.shape.rank();
  ir::OpAttrs attrs(w.node.op, w.node.attrs, rank);
  const int64_t axis = ir::normalize_axis(attrs.get_int("axis"), rank).value_or(rank - 1);
  // Counted from the end (-k .. -1), as torch writes them: ONNX Runtime's
  // fusion needs no rank to see they are the last axes.
  std::vector<int64_t> axes(static_cast<size_t>(rank - axis));
  std::iota(axes.begin(), axes.end(), axis - rank);
  std::vector<ir::Dim> reduced_dims = xt.shape.dims();
  for (int64_t a : axes) reduced_dims[static_cast<size_t>(a + rank)] = ir::Dim(1);
  const ir::TensorType reduced{xt.dtype, ir::Shape(reduced_dims)};
  ir::Attributes over;
  over.set("axes", axes);
  ir::ValueId mean = w.op(ir::Op::ReduceMean, {w.in(0)}, "mean", reduced, over);
  ir::ValueId d = w.op(ir::Op::Sub, {w.in(0), mean}, "centered", xt);
  ir::ValueId sq = w.op(ir::Op::Pow, {d, w.scalar("two", 2.0)}, "squared", xt);
  ir::ValueId var = w.op(ir::Op::ReduceMean, {sq}, "variance", reduced, over);
  ir::ValueId ve = w.op(ir::Op::Add, {var, w.scalar("epsilon", attrs.get_float("epsilon"))}, "variance_eps", reduced);
  ir::ValueId sd = w.op(ir::Op::Sqrt, {ve}, "deviation", reduced);
  ir::ValueId normed = w.op(ir::Op::Div, {d, sd}, "normalized", xt);
  const bool has_bias = w.node.inputs.size() > 2 && w.node.inputs[2] != ir::kNoValue;
  ir::ValueId scaled = w.op(ir::Op::Mul, {normed, w.in(1)}, "scaled", w.result().type, {}, !has_bias);
  if (!has_bias) return scaled;
  return w.op(ir::Op::Add, {scaled, w.in(2)}, "biased", w.result().type, {}, true);
}

// x * HardSigmoid(x; 1/6, 0.5): torch's export of nn.Hardswish below opset 14.
ir::ValueId hard_swish_lower(Writer& w) {
  ir::Attributes a;
  a.set("alpha", 1.0f / 6.0f);
  a.set("beta", 0.5f);
  ir::ValueId hs = w.op(ir::Op::HardSigmoid, {w.in(0)}, "hard_sigmoid", w.type(0), a);
  return w.op(ir::Op::Mul, {w.in(0), hs}, "product", w.result().type, {}, true);
}

// x * (erf(x / sqrt 2) + 1) * 0.5: torch's export of nn.GELU below opset
// 20, which ONNX Runtime's GeluFusion matches.
std::optional<std::string> gelu_check(const ir::Graph& g, const ir::Node& node, const std::vector<uint32_t>&) {
  if (auto bad = float_or_double(g, node)) return bad;
  if (ir::OpAttrs(node.op, node.attrs).get_string("approximate") != "none")
    return "the tanh approximation has no older form here";
  return std::nullopt;
}

ir::ValueId gelu_lower(Writer& w) {
  const ir::TensorType& t = w.type(0);
  ir::ValueId scaled = w.op(
      ir::Op::Div, {w.in(0), w.scalar("sqrt2", static_cast<double>(static_cast<float>(std::sqrt(2.0))))}, "scaled", t);
  ir::ValueId e = w.op(ir::Op::Erf, {scaled}, "erf", t);
  ir::ValueId one = w.op(ir::Op::Add, {e, w.scalar("one", 1.0)}, "one_plus", t);
  ir::ValueId prod = w.op(ir::Op::Mul, {w.in(0), one}, "product", t);
  return w.op(ir::Op::Mul, {prod, w.scalar("half", 0.5)}, "half", w.result().type, {}, true);
}

// Attention (com.microsoft) followed by Reshape(y, [-1, 0, 0]) where its
// batch dim is not static: the same values, and the batch unknown to ONNX
// Runtime's shape inference, as it is after the exporters' head join
// (Reshape to [-1, S, H]). ONNX Runtime types the Attention's output
// [batch, S, H] itself; a residual Add of two such values feeding a
// LayerNormalization is then fused into SkipLayerNormalization (it needs
// both inputs' shapes known and equal), whose CPU kernel (1.30, scalar)
// ran 3.7x slower than the Adds and LayerNormalization it replaces:
// bert_encoder fused ran 0.91x, with this Reshape 1.06x (medians of five)
// (docs/measurements.md, "Fused attention and SkipLayerNormalization").
ir::ValueId attention_lower(Writer& w) {
  std::vector<ir::ValueId> inputs;
  for (size_t i = 0; i < w.node.inputs.size(); ++i) inputs.push_back(w.in(i));
  const ir::TensorType& t = w.result().type;
  if (!t.shape.ranked() || t.shape.rank() != 3 || t.shape[0].is_static())
    return w.op(ir::Op::MsAttention, std::move(inputs), "", t, w.node.attrs, true);
  ir::ValueId y = w.op(ir::Op::MsAttention, std::move(inputs), "attention", t, w.node.attrs);
  ir::ValueId shape = w.out.add_constant(w.base() + "/batch_unknown",
                                         std::make_shared<const ir::Tensor>(ir::Tensor::vector_i64({-1, 0, 0})));
  return w.op(ir::Op::Reshape, {y, shape}, "reshape", t, {}, true);
}

// x - c, c a floating-point constant, written x + (-c): the same values bit
// for bit (negation flips each element's sign bit; IEEE subtraction is the
// addition of the negation, signed zeros included). ONNX Runtime's fusions
// match a bias Add (BiasGelu, MatMul + Add), not a Sub; the learned cpu model
// prices a Sub below the Add of the same operands, so extraction may write a
// bias as the Sub of its negation (docs/measurements.md, session 28).
bool sub_constant_applies(const ir::Graph& g, const ir::Node& node) {
  const ir::Tensor* c = g.constant_tensor(node.inputs[1]);
  return c && ir::is_float(c->dtype()) && g.value(node.inputs[0]).type.dtype == c->dtype();
}

ir::ValueId sub_constant_lower(Writer& w) {
  const ir::Tensor& c = *w.g.constant_tensor(w.node.inputs[1]);
  std::vector<std::byte> bytes(c.bytes().begin(), c.bytes().end());
  const size_t size = ir::dtype_size(c.dtype());
  for (size_t i = size - 1; i < bytes.size(); i += size) bytes[i] ^= std::byte{0x80};  // little-endian: the top byte
  ir::ValueId negated = w.out.add_constant(w.base() + "/negated",
                                           std::make_shared<const ir::Tensor>(c.dtype(), c.dims(), std::move(bytes)));
  return w.op(ir::Op::Add, {w.in(0), negated}, "", w.result().type, {}, true);
}

struct Lowering {
  ir::Op op;
  int64_t since;  // the default-domain opset that defines the op (kAlways: written so at every opset)
  Check check;
  Lower lower;
  bool (*applies)(const ir::Graph&, const ir::Node&) = nullptr;  // which nodes of the op (nullptr: every one)
  int constant_input = -1;  // an input the lowering reads as a constant tensor, not through Writer::in (-1: none)
};

constexpr int64_t kAlways = std::numeric_limits<int64_t>::max();

constexpr Lowering kLowerings[] = {
    {ir::Op::HardSwish, 14, no_limitation, hard_swish_lower},
    {ir::Op::LayerNormalization, 17, layer_norm_check, layer_norm_lower},
    {ir::Op::Gelu, 20, gelu_check, gelu_lower},
    {ir::Op::MsAttention, kAlways, no_limitation, attention_lower},
    {ir::Op::Sub, kAlways, no_limitation, sub_constant_lower, sub_constant_applies, 1},
};

const Lowering* lowering_for(const ir::Graph& g, const ir::Node& node, int64_t opset) {
  for (const Lowering& l : kLowerings)
    if (l.op == node.op && opset < l.since && (!l.applies || l.applies(g, node))) return &l;
  return nullptr;
}

}  // namespace

}  // namespace refinery::frontends::detail

namespace refinery::frontends {

bool onnx_can_write(ir::Op op, int64_t opset) {
  const ir::OpInfo& info = ir::op_info(op);
  for (const detail::Lowering& l : detail::kLowerings)
    if (l.op == op && opset < l.since) return true;
  return onnx::OpSchemaRegistry::Schema(std::string(info.onnx_name), static_cast<int>(opset),
                                        std::string(info.onnx_domain)) != nullptr;
}

}  // namespace refinery::frontends

namespace refinery::frontends::detail {

Expected<std::optional<ir::Graph>> lower_for_opset(const ir::Graph& g, const std::string& file) {
  const int64_t opset = default_opset(g.info);
  const auto uses = g.use_counts();
  std::vector<uint32_t> read_as_constant(g.num_values(), 0);  // uses at a lowering's constant_input
  bool any = false;
  for (size_t n = 0; n < g.num_nodes(); ++n) {
    const ir::Node& node = g.nodes()[n];
    const Lowering* l = lowering_for(g, node, opset);
    if (!l) continue;
    any = true;
    if (l->constant_input >= 0) ++read_as_constant[ir::index(node.inputs[static_cast<size_t>(l->constant_input)])];
    if (auto why = l->check(g, node, uses))
      return std::unexpected(Diag{file, fmt::format("node '{}'", g.node_label(ir::NodeId{static_cast<uint32_t>(n)})),
                                  fmt::format("{} at opset {}: {}", ir::op_info(node.op).onnx_name, opset, *why),
                                  true});
  }
  if (!any) return std::optional<ir::Graph>{};

  ir::Graph out;
  out.info = g.info;
  std::vector<ir::ValueId> map(g.num_values(), ir::kNoValue);
  for (ir::ValueId v : g.inputs()) map[ir::index(v)] = out.add_input(g.value(v).name, g.value(v).type);
  // A constant that only lowerings read as a tensor (a Sub's, written negated) is not written itself.
  for (ir::ValueId v : g.constants())
    if (read_as_constant[ir::index(v)] == 0 || read_as_constant[ir::index(v)] < uses[ir::index(v)])
      map[ir::index(v)] = out.add_constant(g.value(v).name, g.value(v).constant);
  for (const ir::Node& node : g.nodes()) {
    if (const Lowering* l = lowering_for(g, node, opset)) {
      Writer w{g, node, out, map};
      map[ir::index(node.outputs[0])] = l->lower(w);
      continue;
    }
    std::vector<ir::ValueId> inputs = node.inputs;
    for (auto& v : inputs) v = v == ir::kNoValue ? v : map[ir::index(v)];
    std::vector<ir::ValueId> results = out.add_copy(g, node, std::move(inputs));
    for (size_t i = 0; i < node.outputs.size(); ++i) map[ir::index(node.outputs[i])] = results[i];
  }
  std::vector<ir::ValueId> outputs;
  for (ir::ValueId v : g.outputs()) outputs.push_back(map[ir::index(v)]);
  out.set_outputs(std::move(outputs));
  return std::optional<ir::Graph>{std::move(out)};
}

}  // namespace refinery::frontends::detail
