#include <fmt/format.h>

#include "egraph/tensor/convert.h"

namespace refinery::egraph::tensor {

namespace {

// The payload of a node: its attributes and whatever the shape rules alone
// cannot recover.
NodeAttrs node_attrs(const ir::Graph& g, const ir::Node& n, size_t output) {
  NodeAttrs a;
  a.attrs = n.attrs;
  a.output = static_cast<std::uint16_t>(output);
  a.num_outputs = static_cast<std::uint16_t>(n.outputs.size());
  bool any_absent = false;
  for (ir::ValueId v : n.inputs) any_absent |= v == ir::kNoValue;
  if (any_absent)
    for (ir::ValueId v : n.inputs) a.present.push_back(v != ir::kNoValue);
  bool unranked_input = false;
  for (ir::ValueId v : n.inputs)
    if (v != ir::kNoValue && !g.value(v).type.shape.ranked()) unranked_input = true;
  if (n.op == ir::Op::Opaque) {
    a.domain = n.domain;
    a.op_type = n.op_type;
  }
  if (n.op == ir::Op::Opaque || unranked_input) a.declared = g.value(n.outputs[output]).type;
  return a;
}

// The tensor a Constant node makes, when it is numeric.
ir::TensorRef constant_node_value(const ir::Attributes& a) {
  if (ir::TensorRef t = a.get_tensor("value")) return t;
  if (const auto* f = a.find("value_float"))
    return std::make_shared<const ir::Tensor>(ir::Tensor::scalar_f32(std::get<float>(*f)));
  if (const auto* f = a.find("value_floats")) {
    const auto& v = std::get<std::vector<float>>(*f);
    return std::make_shared<const ir::Tensor>(
        ir::Tensor::from_values<float>(ir::DType::f32, {static_cast<int64_t>(v.size())}, v));
  }
  if (const auto* i = a.find("value_int"))
    return std::make_shared<const ir::Tensor>(
        ir::Tensor::from_values<int64_t>(ir::DType::i64, {}, {std::get<int64_t>(*i)}));
  if (auto v = a.maybe_ints("value_ints")) return std::make_shared<const ir::Tensor>(ir::Tensor::vector_i64(*v));
  return nullptr;
}

}  // namespace

Expected<Seeded> seed(const ir::Graph& g, EGraphConfig config) {
  auto ctx = std::make_shared<TensorContext>();
  Seeded s{TensorEGraph(TensorAnalysis(ctx), config),
           ctx,
           Origin{&g, std::vector<Id>(g.num_values(), kInvalidId), std::vector<TensorNode>(g.num_values())},
           {}};
  auto& value_class = s.origin.value_class;
  auto add = [&](ir::ValueId v, TensorNode node) {
    s.origin.value_node[ir::index(v)] = node;
    value_class[ir::index(v)] = s.egraph.add(std::move(node));
  };
  for (ir::ValueId v : g.inputs()) add(v, TensorNode::input(ctx->add_input({g.value(v).name, g.value(v).type})));
  for (ir::ValueId v : g.constants())
    add(v, TensorNode::constant(ctx->add_constant({g.value(v).name, g.value(v).constant})));
  for (size_t n = 0; n < g.num_nodes(); ++n) {
    const ir::Node& node = g.nodes()[n];
    if (node.op == ir::Op::Constant) {
      // A constant is a leaf however it was written (decision 5); each keeps
      // its own identity, so seeding and extracting give the graph back.
      if (ir::TensorRef t = constant_node_value(node.attrs)) {
        ir::ValueId out = node.outputs[0];
        add(out, TensorNode::constant(ctx->add_constant({g.value(out).name, std::move(t), node.attrs, node.name})));
        continue;
      }
    }
    std::vector<Id> kids;
    for (ir::ValueId v : node.inputs) {
      if (v == ir::kNoValue) continue;
      if (value_class[ir::index(v)] == kInvalidId)  // defined later: a recurrent edge, a cycle of values
        return fail(fmt::format("input '{}' is a recurrent edge (defined later, read from the previous time step); "
                                "the e-graph does not hold cycles",
                                g.value(v).name),
                    fmt::format("node '{}'", g.node_label(ir::NodeId{static_cast<uint32_t>(n)})));
      kids.push_back(value_class[ir::index(v)]);
    }
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      TensorNode tn{static_cast<std::uint32_t>(node.op), ctx->intern(node_attrs(g, node, o)), kids};
      auto data = s.egraph.analysis().infer(s.egraph, tn);
      if (!data)
        return fail(data.error(), fmt::format("node '{}'", g.node_label(ir::NodeId{static_cast<uint32_t>(n)})));
      // The graph's type is a claim the model makes; the analysis's is what
      // the op computes from its inputs. Where one knows more, that is a
      // refinement and the class keeps the more precise (docs/ir.md).
      const ir::TensorType& declared = g.value(node.outputs[o]).type;
      auto type = ir::refine(data->type, declared);
      if (!type) {
        Diag d{{},
               fmt::format("node '{}'", g.node_label(ir::NodeId{static_cast<uint32_t>(n)})),
               fmt::format("the e-graph types output {} as {}, the graph says {}: {}", o, data->type.str(),
                           declared.str(), type.error())};
        d.limitation = true;  // the graph was imported and checked: the two inferences disagree
        return std::unexpected(std::move(d));
      }
      add(node.outputs[o], std::move(tn));
      if (*type != data->type)
        s.egraph.merge_data(value_class[ir::index(node.outputs[o])],
                            TensorData{std::move(*type), std::nullopt, nullptr, false, nullptr});
    }
  }
  s.egraph.rebuild();
  for (ir::ValueId v : g.outputs()) s.roots.push_back(s.egraph.find(value_class[ir::index(v)]));
  return s;
}

}  // namespace refinery::egraph::tensor
