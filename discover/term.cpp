#include "discover/term.h"

#include <fmt/format.h>

#include "ir/tensor.h"

namespace refinery::discover {

using egraph::Id;
using egraph::tensor::NodeAttrs;
using egraph::tensor::TensorNode;

int Term::size() const {
  int n = 0;
  for (const TermNode& t : nodes) n += t.kind == TermNode::Kind::Op;
  return n;
}

int Term::constants() const {
  int n = 0;
  for (const TermNode& t : nodes) n += t.kind == TermNode::Kind::Const;
  return n;
}

std::set<int> Term::vars() const {
  std::set<int> out;
  for (const TermNode& t : nodes)
    if (t.kind == TermNode::Kind::Var) out.insert(t.var);
  return out;
}

std::string var_name(int var) { return fmt::format("?{}", static_cast<char>('a' + var)); }

namespace {

// A float as the DSL reads it back: always with a point or an exponent.
std::string float_text(float v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string attr_text(const ir::AttrValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return fmt::format("{}", *i);
  if (auto* f = std::get_if<float>(&v)) return float_text(*f);
  if (auto* s = std::get_if<std::string>(&v)) return fmt::format("\"{}\"", *s);
  if (auto* is = std::get_if<std::vector<int64_t>>(&v)) return fmt::format("[{}]", fmt::join(*is, " "));
  if (auto* fs = std::get_if<std::vector<float>>(&v)) {
    std::vector<std::string> parts;
    for (float f : *fs) parts.push_back(float_text(f));
    return fmt::format("[{}]", fmt::join(parts, " "));
  }
  return "?unsupported";  // not reachable: parse_ops refuses other kinds
}

std::string node_text(const Term& t, int i) {
  const TermNode& n = t.nodes[static_cast<size_t>(i)];
  switch (n.kind) {
    case TermNode::Kind::Var: return var_name(n.var);
    case TermNode::Kind::Const: return float_text(n.value);
    case TermNode::Kind::Op: break;
  }
  std::string s = fmt::format("({}", ir::op_name(n.op));
  for (const auto& [name, value] : n.attrs.entries()) s += fmt::format(" :{} {}", name, attr_text(value));
  for (int k : n.kids) s += " " + node_text(t, k);
  return s + ")";
}

}  // namespace

std::string Term::dsl() const { return nodes.empty() ? "" : node_text(*this, static_cast<int>(nodes.size()) - 1); }

TermGraph::TermGraph(const ir::TensorType& var_type, int variables)
    : ctx_(std::make_shared<egraph::tensor::TensorContext>()),
      egraph_(std::make_unique<egraph::tensor::TensorEGraph>(egraph::tensor::TensorAnalysis(ctx_))) {
  for (int i = 0; i < variables; ++i)
    vars_.push_back(
        egraph_->add(TensorNode::input(ctx_->add_input({std::string(1, static_cast<char>('a' + i)), var_type}))));
}

Id TermGraph::constant(float value) {
  if (auto it = constants_.find(value); it != constants_.end()) return it->second;
  auto t = std::make_shared<const ir::Tensor>(ir::Tensor::scalar_f32(value));
  Id id = egraph_->add(TensorNode::constant(ctx_->add_constant({float_text(value), t})));
  constants_.emplace(value, id);
  return id;
}

ir::Attributes TermGraph::node_attrs(ir::Op op, const ir::Attributes& attrs, int64_t rank) {
  ir::Attributes out;
  for (const auto& [name, value] : attrs.entries()) {
    auto def = ir::attr_default(op, name, rank, &attrs);
    if (!def || !ir::attr_equal(*def, value)) out.set(name, value);
  }
  return out;
}

std::optional<TensorNode> TermGraph::make_node(ir::Op op, const ir::Attributes& attrs,
                                               const std::vector<Id>& kids) const {
  NodeAttrs na;
  int64_t rank = kids.empty() ? -1 : egraph_->operator[](kids[0]).data.type.shape.rank();
  na.attrs = node_attrs(op, attrs, rank);
  TensorNode node{static_cast<std::uint32_t>(op), ctx_->intern(std::move(na)), {}};
  for (Id k : kids) node.kids.push_back(egraph_->find(k));
  if (!egraph_->analysis().infer(*egraph_, node)) return std::nullopt;
  return node;
}

std::optional<Id> TermGraph::add(const Term& term) {
  std::vector<Id> ids;
  for (const TermNode& n : term.nodes) {
    switch (n.kind) {
      case TermNode::Kind::Var: ids.push_back(var(n.var)); break;
      case TermNode::Kind::Const: ids.push_back(constant(n.value)); break;
      case TermNode::Kind::Op: {
        std::vector<Id> kids;
        for (int k : n.kids) kids.push_back(ids[static_cast<size_t>(k)]);
        auto node = make_node(n.op, n.attrs, kids);
        if (!node) return std::nullopt;
        ids.push_back(egraph_->add(std::move(*node)));
        break;
      }
    }
  }
  return ids.back();
}

TermNode TermGraph::node_of(const TensorNode& n) const {
  TermNode t;
  if (n.op == egraph::tensor::kInputOp) {
    t.kind = TermNode::Kind::Var;
    t.var = static_cast<int>(n.payload);
  } else if (n.op == egraph::tensor::kConstantOp) {
    t.kind = TermNode::Kind::Const;
    t.value = static_cast<float>(ctx_->constant(n.payload).tensor->as_double(0));
  } else {
    t.kind = TermNode::Kind::Op;
    t.op = n.ir_op();
    t.attrs = ctx_->attrs(n.payload).attrs;
  }
  return t;
}

}  // namespace refinery::discover
