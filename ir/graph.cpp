#include "ir/graph.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace refinery::ir {

ValueId Graph::add_input(std::string name, TensorType type) {
  ValueId id{static_cast<uint32_t>(values_.size())};
  values_.push_back(Value{std::move(name), std::move(type), ValueKind::Input, kNoNode, nullptr});
  known_.emplace_back();
  inputs_.push_back(id);
  return id;
}

ValueId Graph::add_constant(std::string name, TensorRef tensor) {
  ValueId id{static_cast<uint32_t>(values_.size())};
  TensorType type{tensor->dtype(), Shape::of(tensor->dims())};
  values_.push_back(Value{std::move(name), std::move(type), ValueKind::Constant, kNoNode, std::move(tensor)});
  known_.emplace_back();
  constants_.push_back(id);
  return id;
}

std::vector<ValueId> Graph::add_copy(const Graph& from, const Node& node, std::vector<ValueId> inputs) {
  Node copy = node;
  copy.outputs.clear();
  copy.inputs = std::move(inputs);
  std::vector<std::string> names;
  std::vector<TensorType> types;
  for (ValueId v : node.outputs) {
    names.push_back(from.value(v).name);
    types.push_back(from.value(v).type);
  }
  return this->node(add_node(std::move(copy), names, types)).outputs;
}

NodeId Graph::add_node(Node node, const std::vector<std::string>& output_names,
                       const std::vector<TensorType>& output_types) {
  NodeId id{static_cast<uint32_t>(nodes_.size())};
  node.outputs.clear();
  for (size_t i = 0; i < output_names.size(); ++i) {
    ValueId v{static_cast<uint32_t>(values_.size())};
    TensorType t = i < output_types.size() ? output_types[i] : TensorType{DType::f32, Shape::unranked()};
    values_.push_back(Value{output_names[i], std::move(t), ValueKind::NodeResult, id, nullptr});
    known_.emplace_back();
    node.outputs.push_back(v);
  }
  nodes_.push_back(std::move(node));
  return id;
}

std::optional<ValueId> Graph::find_value(std::string_view name) const {
  for (size_t i = 0; i < values_.size(); ++i)
    if (values_[i].name == name) return ValueId{static_cast<uint32_t>(i)};
  return std::nullopt;
}

std::string Graph::node_label(NodeId n) const {
  const Node& node = nodes_[index(n)];
  if (!node.name.empty()) return node.name;
  std::string_view op = node.op == Op::Opaque ? std::string_view(node.op_type) : op_name(node.op);
  return fmt::format("#{} {}", index(n), op);
}

namespace {

// Successors along edges that point forward in node order (the same-step edges).
std::vector<std::vector<uint32_t>> same_step_successors(const std::vector<Node>& nodes,
                                                        const std::vector<Value>& values) {
  std::vector<std::vector<uint32_t>> succ(nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n)
    for (ValueId in : nodes[n].inputs) {
      if (in == kNoValue || index(in) >= values.size()) continue;
      const Value& v = values[index(in)];
      if (v.kind == ValueKind::NodeResult && index(v.producer) < n)
        succ[index(v.producer)].push_back(static_cast<uint32_t>(n));
    }
  return succ;
}

// A path from `from` to `to` along same-step edges, through nodes that pass
// `through` (the ends excepted); empty when there is none.
template <class Pred>
std::vector<uint32_t> find_path(const std::vector<std::vector<uint32_t>>& succ, uint32_t from, uint32_t to,
                                Pred through) {
  if (from == to) return {from};
  std::vector<uint32_t> parent(succ.size(), UINT32_MAX);
  std::vector<uint32_t> stack{from};
  parent[from] = from;
  while (!stack.empty()) {
    uint32_t u = stack.back();
    stack.pop_back();
    for (uint32_t w : succ[u]) {
      if (parent[w] != UINT32_MAX || w > to) continue;
      parent[w] = u;
      if (w == to) {
        std::vector<uint32_t> path{to};
        while (path.back() != from) path.push_back(parent[path.back()]);
        return {path.rbegin(), path.rend()};
      }
      if (through(w)) stack.push_back(w);
    }
  }
  return {};
}

}  // namespace

Expected<void> Graph::verify() const {
  std::vector<bool> defined(values_.size(), false);
  std::vector<std::vector<uint32_t>> succ;  // built at the first recurrent edge
  for (ValueId v : inputs_) defined[index(v)] = true;
  for (ValueId v : constants_) defined[index(v)] = true;
  for (size_t n = 0; n < nodes_.size(); ++n) {
    const Node& node = nodes_[n];
    NodeId id{static_cast<uint32_t>(n)};
    auto where = [&] { return fmt::format("node '{}'", node_label(id)); };
    for (ValueId in : node.inputs) {
      if (in == kNoValue) continue;
      if (index(in) >= values_.size()) return fail("input refers to no value", where());
      if (defined[index(in)]) continue;
      // A value defined later is a recurrent edge: it reads the previous time
      // step. It must close a cycle, and every such cycle must pass through a
      // stateful op (docs/spiking.md).
      const Value& later = values_[index(in)];
      if (later.kind != ValueKind::NodeResult || later.producer == kNoNode)
        return fail(fmt::format("input '{}' is used before it is defined", later.name), where());
      if (succ.empty()) succ = same_step_successors(nodes_, values_);
      auto from = static_cast<uint32_t>(n), to = index(later.producer);
      if (find_path(succ, from, to, [](uint32_t) { return true; }).empty())
        return fail(fmt::format("input '{}' is used before it is defined", later.name), where());
      auto stateful = [&](uint32_t i) { return nodes_[i].op != Op::Opaque && op_info(nodes_[i].op).stateful; };
      if (stateful(from) || stateful(to)) continue;
      auto path = find_path(succ, from, to, [&](uint32_t i) { return !stateful(i); });
      if (!path.empty()) {
        std::vector<std::string> names;
        for (uint32_t i : path) names.push_back(fmt::format("'{}'", node_label(NodeId{i})));
        return fail(fmt::format("cycle without a stateful op through {}", fmt::join(names, ", ")), where());
      }
    }
    if (node.op != Op::Opaque) {
      const OpInfo& info = op_info(node.op);
      int nin = static_cast<int>(node.inputs.size());
      if (nin < info.min_inputs || (info.max_inputs >= 0 && nin > info.max_inputs))
        return fail(fmt::format("{} takes {}{} inputs, got {}", info.name, info.min_inputs,
                                info.max_inputs < 0                  ? " or more"
                                : info.max_inputs == info.min_inputs ? ""
                                                                     : fmt::format(" to {}", info.max_inputs),
                                nin),
                    where());
      for (int i = 0; i < info.min_inputs; ++i)
        if (node.inputs[static_cast<size_t>(i)] == kNoValue)
          return fail(fmt::format("required input {} of {} is missing", i, info.name), where());
      int nout = static_cast<int>(node.outputs.size());
      if (nout < info.min_outputs || (info.max_outputs >= 0 && nout > info.max_outputs))
        return fail(
            fmt::format("{} has {} outputs, expected {}..{}", info.name, nout, info.min_outputs, info.max_outputs),
            where());
      for (const auto& [name, value] : node.attrs.entries()) {
        const AttrSpec* spec = nullptr;
        for (const auto& s : info.attrs)
          if (s.name == name) spec = &s;
        if (spec == nullptr) return fail(fmt::format("{} has no attribute '{}'", info.name, name), where());
        if (attr_kind(value) != spec->kind)
          return fail(fmt::format("attribute '{}' of {} must be {}, got {}", name, info.name,
                                  attr_kind_name(spec->kind), attr_kind_name(attr_kind(value))),
                      where());
      }
      for (const auto& s : info.attrs)
        if (s.use == AttrUse::Required && !node.attrs.has(s.name))
          return fail(fmt::format("{} requires attribute '{}'", info.name, s.name), where());
    }
    for (ValueId out : node.outputs) {
      if (defined[index(out)])
        return fail(fmt::format("value '{}' is defined twice", values_[index(out)].name), where());
      defined[index(out)] = true;
    }
  }
  for (ValueId out : outputs_)
    if (!defined[index(out)]) return fail(fmt::format("graph output '{}' is never defined", values_[index(out)].name));
  return {};
}

Expected<void> Graph::infer_shapes() {
  for (size_t n = 0; n < nodes_.size(); ++n) {
    Node& node = nodes_[n];
    if (node.op == Op::Opaque) continue;
    const OpInfo& info = op_info(node.op);
    std::vector<InferInput> ins(node.inputs.size());
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      ValueId v = node.inputs[i];
      if (v == kNoValue) continue;
      const Value& val = values_[index(v)];
      ins[i].type = &val.type;
      ins[i].constant = val.constant.get();
      // A Constant node's value, read by the rules that take a constant
      // (known_ holds its small integer contents too).
      if (!ins[i].constant && val.kind == ValueKind::NodeResult && val.producer != kNoNode &&
          nodes_[index(val.producer)].op == Op::Constant)
        if (TensorRef t = nodes_[index(val.producer)].attrs.get_tensor("value")) ins[i].constant = t.get();
      if (known_[index(v)]) ins[i].known = &*known_[index(v)];
    }
    // Past an op whose result is unranked (an opaque op), nothing is known:
    // keep the types the node came with.
    bool unranked_input = false;
    for (const auto& in : ins)
      if (in.type != nullptr && !in.type->shape.ranked()) unranked_input = true;
    if (unranked_input) continue;
    InferContext ctx;
    ctx.op = node.op;
    ctx.inputs = ins;
    ctx.attrs = &node.attrs;
    ctx.num_outputs = static_cast<int>(node.outputs.size());
    ctx.outputs.resize(node.outputs.size());
    ctx.known.resize(node.outputs.size());
    auto ok = info.infer(ctx);
    if (!ok) {
      NodeId id{static_cast<uint32_t>(n)};
      return std::unexpected(
          Diag{{}, fmt::format("node '{}' ({})", node_label(id), info.name), ok.error(), ctx.limitation});
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      values_[index(node.outputs[i])].type = ctx.outputs[i];
      known_[index(node.outputs[i])] = std::move(ctx.known[i]);
    }
  }
  return {};
}

std::vector<std::vector<std::pair<size_t, size_t>>> Graph::readers() const {
  std::vector<std::vector<std::pair<size_t, size_t>>> out(values_.size());
  for (size_t n = 0; n < nodes_.size(); ++n)
    for (size_t i = 0; i < nodes_[n].inputs.size(); ++i)
      if (nodes_[n].inputs[i] != kNoValue) out[index(nodes_[n].inputs[i])].emplace_back(n, i);
  return out;
}

std::vector<uint32_t> Graph::use_counts() const {
  std::vector<uint32_t> uses(values_.size(), 0);
  for (const Node& node : nodes_)
    for (ValueId v : node.inputs)
      if (v != kNoValue) ++uses[index(v)];
  for (ValueId v : outputs_) ++uses[index(v)];
  return uses;
}

}  // namespace refinery::ir
