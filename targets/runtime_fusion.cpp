// The groups ONNX Runtime fuses into one op when it loads a graph
// (targets::fused_by_runtime): its LayerNormFusion and GeluFusion, as the
// pinned onnxruntime-node 1.30 runs them at level 'all' on CPU (all seven
// opset-13 transformers of the zoos, and what export writes for them, run
// as LayerNormalization and Gelu kernels with no Pow, Sqrt or Erf left:
// docs/measurements.md, session 26).
#include <algorithm>
#include <cmath>
#include <optional>

#include "targets/cost_model.h"

namespace refinery::targets {
namespace {

class FusionMatcher {
 public:
  explicit FusionMatcher(const ir::Graph& g)
      : g_(g), uses_(g.use_counts()), readers_(g.readers()), folded_(constant_values(g)) {}

  // X - mean(X) over the last axis, / sqrt(mean(that^2) + epsilon), * scale, + bias.
  std::optional<RuntimeFusion> layer_norm(std::size_t reduce) const {
    const ir::Node& r1 = node(reduce);
    if (r1.op != ir::Op::ReduceMean || !floating(r1.inputs[0])) return std::nullopt;
    const ir::ValueId x = r1.inputs[0];
    const ir::Shape& xs = g_.value(x).type.shape;
    auto sub = only_reader(r1.outputs[0], ir::Op::Sub);
    if (!last_axis(r1, xs) || !sub || node(*sub).inputs != std::vector{x, r1.outputs[0]}) return std::nullopt;
    // The centred value: read by the Pow and the Div alone.
    const ir::ValueId d = node(*sub).outputs[0];
    std::optional<std::size_t> pow, div;
    for (const auto& [n, pos] : readers_[ir::index(d)]) {
      if (pos == 0 && node(n).op == ir::Op::Pow) pow = n;
      if (pos == 0 && node(n).op == ir::Op::Div) div = n;
    }
    if (uses_[ir::index(d)] != 2 || readers_[ir::index(d)].size() != 2 || !pow || !div) return std::nullopt;
    if (scalar(node(*pow).inputs[1]) != 2.0) return std::nullopt;
    auto r2 = only_reader(node(*pow).outputs[0], ir::Op::ReduceMean);
    if (!r2 || !last_axis(node(*r2), xs)) return std::nullopt;
    auto add = only_reader(node(*r2).outputs[0], ir::Op::Add);
    if (!add) return std::nullopt;
    const std::optional<double> epsilon = scalar(other(*add, node(*r2).outputs[0]));
    auto sqrt = only_reader(node(*add).outputs[0], ir::Op::Sqrt);
    if (!epsilon || !sqrt || only_reader(node(*sqrt).outputs[0], ir::Op::Div) != div ||
        node(*div).inputs[1] != node(*sqrt).outputs[0])
      return std::nullopt;
    auto mul = only_reader(node(*div).outputs[0], ir::Op::Mul);
    if (!mul) return std::nullopt;
    const ir::ValueId scale = other(*mul, node(*div).outputs[0]);
    auto bias_add = only_reader(node(*mul).outputs[0], ir::Op::Add);
    if (!bias_add) return std::nullopt;
    const ir::ValueId bias = other(*bias_add, node(*mul).outputs[0]);
    if (!per_feature(scale, xs) || !per_feature(bias, xs)) return std::nullopt;
    std::vector<std::size_t> nodes{reduce, *sub, *pow, *r2, *add, *sqrt, *div, *mul, *bias_add};
    std::ranges::sort(nodes);  // the bias Add, reading all of them, stays last
    RuntimeFusion f{std::move(nodes), ir::Op::LayerNormalization, {x, scale, bias}, {}};
    f.attrs.set("axis", int64_t{-1});
    f.attrs.set("epsilon", static_cast<float>(*epsilon));
    return f;
  }

  // erf(X / sqrt 2) + 1, times X, times 0.5 (or X times 0.5 first).
  std::optional<RuntimeFusion> gelu(std::size_t div) const {
    const ir::Node& dv = node(div);
    if (dv.op != ir::Op::Div || !floating(dv.inputs[0]) || !near(scalar(dv.inputs[1]), std::sqrt(2.0)))
      return std::nullopt;
    const ir::ValueId x = dv.inputs[0];
    auto erf = only_reader(dv.outputs[0], ir::Op::Erf);
    auto add = erf ? only_reader(node(*erf).outputs[0], ir::Op::Add) : std::nullopt;
    if (!add || !near(scalar(other(*add, node(*erf).outputs[0])), 1.0)) return std::nullopt;
    auto mul = only_reader(node(*add).outputs[0], ir::Op::Mul);
    if (!mul) return std::nullopt;
    const ir::ValueId y = other(*mul, node(*add).outputs[0]);
    std::vector<std::size_t> nodes{div, *erf, *add, *mul};
    if (y == x) {  // (X * (erf + 1)) * 0.5
      auto half = only_reader(node(*mul).outputs[0], ir::Op::Mul);
      if (!half || !near(scalar(other(*half, node(*mul).outputs[0])), 0.5)) return std::nullopt;
      nodes.push_back(*half);
    } else {  // (X * 0.5) * (erf + 1)
      if (y == ir::kNoValue || g_.value(y).kind != ir::ValueKind::NodeResult || uses_[ir::index(y)] != 1)
        return std::nullopt;
      const std::size_t half = ir::index(g_.value(y).producer);
      if (node(half).op != ir::Op::Mul || !near(scalar(other(half, x)), 0.5)) return std::nullopt;
      nodes.insert(nodes.begin(), half);
    }
    std::ranges::sort(nodes);
    return RuntimeFusion{std::move(nodes), ir::Op::Gelu, {x}, {}};
  }

 private:
  const ir::Node& node(std::size_t n) const { return g_.nodes()[n]; }

  bool floating(ir::ValueId v) const {
    ir::DType t = g_.value(v).type.dtype;
    return t == ir::DType::f32 || t == ir::DType::f64 || t == ir::DType::f16;
  }

  // The node reading `v`, when that is its one use (not a graph output) and it runs `op`.
  std::optional<std::size_t> only_reader(ir::ValueId v, ir::Op op) const {
    if (uses_[ir::index(v)] != 1 || readers_[ir::index(v)].size() != 1) return std::nullopt;
    const std::size_t n = readers_[ir::index(v)][0].first;
    if (node(n).op != op) return std::nullopt;
    return n;
  }

  // The binary node's input other than `v` (kNoValue when `v` is not one of two).
  ir::ValueId other(std::size_t n, ir::ValueId v) const {
    const auto& in = node(n).inputs;
    if (in.size() != 2) return ir::kNoValue;
    return in[0] == v ? in[1] : in[1] == v ? in[0] : ir::kNoValue;
  }

  // The tensor of a constant, or of a Constant node's `value` (torch's
  // exports write the Pow's 2 and the epsilon so; ONNX Runtime makes them
  // initializers when it loads the graph), as Graph::infer_shapes reads it.
  const ir::Tensor* constant(ir::ValueId v) const {
    if (v == ir::kNoValue) return nullptr;
    if (const ir::Tensor* t = g_.constant_tensor(v)) return t;
    const ir::Value& val = g_.value(v);
    if (val.kind != ir::ValueKind::NodeResult || node(ir::index(val.producer)).op != ir::Op::Constant) return nullptr;
    return node(ir::index(val.producer)).attrs.get_tensor("value").get();
  }

  // The one element of a constant of one element, of a float type.
  std::optional<double> scalar(ir::ValueId v) const {
    const ir::Tensor* t = constant(v);
    if (!t || t->numel() != 1 || !ir::is_float(t->dtype())) return std::nullopt;
    return t->as_double(0);
  }
  static bool near(std::optional<double> v, double want) { return v && std::abs(*v - want) <= 1e-6 * std::abs(want); }

  // A mean over the last axis alone, its dim kept.
  bool last_axis(const ir::Node& r, const ir::Shape& xs) const {
    if (!xs.ranked() || xs.rank() < 1) return false;
    ir::OpAttrs a(r.op, r.attrs, xs.rank());
    auto axes = a.maybe_ints("axes");
    return a.get_int("keepdims") == 1 && axes && axes->size() == 1 && ((*axes)[0] == -1 || (*axes)[0] == xs.rank() - 1);
  }

  // A 1-D constant (or constant expression: torch shares equal weights
  // through Identity nodes, which ONNX Runtime folds first) or graph input
  // as long as X's last axis: the scale, the bias.
  bool per_feature(ir::ValueId v, const ir::Shape& xs) const {
    if (v == ir::kNoValue || (g_.value(v).kind == ir::ValueKind::NodeResult && !folded_[ir::index(v)])) return false;
    const ir::Shape& s = g_.value(v).type.shape;
    return s.ranked() && s.rank() == 1 && s[0] == xs[xs.rank() - 1];
  }

  const ir::Graph& g_;
  std::vector<uint32_t> uses_;
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> readers_;
  std::vector<bool> folded_;  // constant_values
};

}  // namespace

std::vector<RuntimeFusion> fused_by_runtime(const ir::Graph& g) {
  FusionMatcher match(g);
  std::vector<RuntimeFusion> out;
  for (std::size_t i = 0; i < g.num_nodes(); ++i) {
    auto f = match.layer_norm(i);
    if (!f) f = match.gelu(i);
    if (f) out.push_back(std::move(*f));
  }
  return out;
}

}  // namespace refinery::targets
