#include "optimize/fold.h"

#include <fmt/format.h>

#include <optional>

#include "optimize/tensor_cost.h"
#include "runtime/interpreter.h"
#include "targets/workload.h"

namespace refinery::optimize {
namespace {

// The names and types of a node's results, to add a copy of it elsewhere.
std::pair<std::vector<std::string>, std::vector<ir::TensorType>> output_signature(const ir::Graph& g,
                                                                                  const ir::Node& n) {
  std::pair<std::vector<std::string>, std::vector<ir::TensorType>> sig;
  for (ir::ValueId o : n.outputs) {
    sig.first.push_back(g.value(o).name);
    sig.second.push_back(g.value(o).type);
  }
  return sig;
}

// A folded value, computed in f64, rounded once to the type the graph
// declares for it (f16 and bf16 through f32).
ir::TensorRef narrowed(const ir::TensorRef& wide, ir::DType to) {
  if (wide->dtype() == to || !ir::is_float(to)) return wide;
  const int64_t n = wide->numel();
  if (to == ir::DType::f64) {
    std::vector<double> v(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = wide->as_double(i);
    return std::make_shared<const ir::Tensor>(ir::Tensor::from_values(to, wide->dims(), v));
  }
  if (to == ir::DType::f32) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(wide->as_double(i));
    return std::make_shared<const ir::Tensor>(ir::Tensor::from_values(to, wide->dims(), v));
  }
  std::vector<uint16_t> v(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const auto f = static_cast<float>(wide->as_double(i));
    v[static_cast<std::size_t>(i)] = to == ir::DType::f16 ? ir::float_to_half(f) : ir::float_to_bf16(f);
  }
  return std::make_shared<const ir::Tensor>(ir::Tensor::from_values(to, wide->dims(), v));
}

}  // namespace

Expected<Folded> fold_constants(const ir::Graph& g) {
  Folded out;
  // Known constant contents: floats in f64 (`value`), and as the graph
  // computes them, in their declared types (`declared`).
  std::vector<ir::TensorRef> value(g.num_values()), declared(g.num_values());
  for (ir::ValueId v : g.constants()) value[ir::index(v)] = declared[ir::index(v)] = g.value(v).constant;
  std::vector<bool> is_output(g.num_values(), false);
  for (ir::ValueId v : g.outputs()) is_output[ir::index(v)] = true;
  std::vector<bool> folded(g.num_nodes(), false);

  for (std::size_t i = 0; i < g.num_nodes(); ++i) {
    const ir::Node& n = g.nodes()[i];
    // A Constant node's value is known to the nodes that read it (a scale
    // a rule divided a weight by); the node itself stays as it was written.
    const bool constant_node = n.op == ir::Op::Constant;
    bool all_const = !n.inputs.empty() || constant_node;
    double in_bytes = 0, out_bytes = 0;
    for (ir::ValueId v : n.inputs) {
      if (v == ir::kNoValue) continue;
      if (!value[ir::index(v)])
        all_const = false;
      else
        in_bytes += targets::bytes(g.value(v).type);
    }
    bool any_output = false, static_out = true;
    for (ir::ValueId o : n.outputs) {
      any_output |= is_output[ir::index(o)];
      static_out &= g.value(o).type.shape.is_static();
      out_bytes += targets::bytes(g.value(o).type);
    }
    if (!all_const || any_output || !static_out || (!constant_node && !foldable(n.op, in_bytes, out_bytes))) continue;
    // The node alone on its constant inputs, `wide`: in f64 on the folded
    // values kept so, or as the graph computes it, in the declared types.
    auto [names, types] = output_signature(g, n);
    auto run_alone = [&](bool wide) {
      ir::Graph one;
      ir::Node copy = n;
      copy.inputs.clear();
      for (ir::ValueId v : n.inputs)
        copy.inputs.push_back(v == ir::kNoValue ? ir::kNoValue
                                                : one.add_constant(g.value(v).name, (wide ? value : declared)[ir::index(v)]));
      ir::NodeId id = one.add_node(std::move(copy), names, types);
      one.set_outputs(one.node(id).outputs);
      return runtime::run(one, {}, {.wide_floats = wide});
    };
    auto fits = [&](const std::vector<ir::Tensor>& r, bool wide) {
      bool ok = true;
      for (std::size_t k = 0; k < n.outputs.size(); ++k)
        ok &= r[k].dtype() == (wide && ir::is_float(types[k].dtype) ? ir::DType::f64 : types[k].dtype) &&
              r[k].dims() == types[k].shape.sizes();
      return ok;
    };
    // A float result is computed in f64, from the folded values kept so (a
    // chain of folds rounds once, where its value is written): Wq Wk^T
    // folded as one weight is then the f32 nearest the product, not an f32
    // product's sums rounded 64 times. A result that is not a float (a
    // Cast to an integer, a comparison) is computed as the graph computes
    // it, from each value as its declared type rounds it op by op, so that
    // a floor or a tie decides as it would have.
    bool all_float = true;
    for (const ir::TensorType& t : types) all_float &= ir::is_float(t.dtype);
    auto r = run_alone(false);
    if (!r || !fits(*r, false)) continue;  // an op the interpreter refuses here stays an op
    std::optional<Expected<std::vector<ir::Tensor>>> w;
    if (all_float) {
      w = run_alone(true);
      if (!*w || !fits(**w, true)) continue;
    }
    for (std::size_t k = 0; k < n.outputs.size(); ++k) {
      const std::size_t o = ir::index(n.outputs[k]);
      declared[o] = std::make_shared<const ir::Tensor>(std::move((*r)[k]));
      value[o] = all_float ? std::make_shared<const ir::Tensor>(std::move((**w)[k])) : declared[o];
    }
    if (constant_node) continue;
    folded[i] = true;
    ++out.folded;
  }

  // Liveness from the outputs through the nodes that stay.
  std::vector<bool> live(g.num_values(), false);
  for (ir::ValueId v : g.outputs()) live[ir::index(v)] = true;
  std::vector<bool> node_live(g.num_nodes(), false);
  for (std::size_t i = g.num_nodes(); i-- > 0;) {
    const ir::Node& n = g.nodes()[i];
    if (folded[i]) continue;
    bool any = false;
    for (ir::ValueId o : n.outputs) any |= live[ir::index(o)];
    if (!any) continue;
    node_live[i] = true;
    for (ir::ValueId v : n.inputs)
      if (v != ir::kNoValue) live[ir::index(v)] = true;
  }

  ir::Graph& ng = out.graph;
  ng.info = g.info;
  std::vector<ir::ValueId> map(g.num_values(), ir::kNoValue);
  for (ir::ValueId v : g.inputs()) map[ir::index(v)] = ng.add_input(g.value(v).name, g.value(v).type);
  for (ir::ValueId v : g.constants()) {
    if (live[ir::index(v)])
      map[ir::index(v)] = ng.add_constant(g.value(v).name, g.value(v).constant);
    else
      ++out.constants_dropped;
  }
  for (std::size_t i = 0; i < g.num_nodes(); ++i) {
    const ir::Node& n = g.nodes()[i];
    if (folded[i]) {
      for (ir::ValueId o : n.outputs)
        if (live[ir::index(o)])
          map[ir::index(o)] = ng.add_constant(g.value(o).name, narrowed(value[ir::index(o)], g.value(o).type.dtype));
      continue;
    }
    if (!node_live[i]) continue;
    ir::Node copy = n;
    for (ir::ValueId& v : copy.inputs)
      if (v != ir::kNoValue) v = map[ir::index(v)];
    copy.outputs.clear();
    auto [names, types] = output_signature(g, n);
    ir::NodeId id = ng.add_node(std::move(copy), names, types);
    for (std::size_t k = 0; k < n.outputs.size(); ++k) map[ir::index(n.outputs[k])] = ng.node(id).outputs[k];
  }
  std::vector<ir::ValueId> outs;
  for (ir::ValueId v : g.outputs()) outs.push_back(map[ir::index(v)]);
  ng.set_outputs(std::move(outs));
  if (auto ok = ng.verify(); !ok) return std::unexpected(ok.error());
  return out;
}

}  // namespace refinery::optimize
