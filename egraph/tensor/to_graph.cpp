#include <fmt/format.h>

#include <map>
#include <unordered_map>
#include <unordered_set>

#include "egraph/tensor/convert.h"

namespace refinery::egraph::tensor {

namespace {

// A multi-result op is one e-node per result; results of the same op on the
// same children and attributes are one ir node.
struct NodeKey {
  std::uint32_t op;
  std::vector<Id> kids;
  NodeAttrs attrs;  // with output = 0
  bool operator<(const NodeKey& o) const {
    if (op != o.op) return op < o.op;
    if (kids != o.kids) return kids < o.kids;
    return attrs.hash() < o.attrs.hash();
  }
};

class Builder {
 public:
  Builder(const TensorEGraph& g, const Choice& choice, const ir::Graph& original, const std::vector<Id>& value_class)
      : g_(g), choice_(choice), original_(original), value_class_(value_class) {
    // Which original value (and node) each class came from, first one wins.
    for (size_t v = 0; v < value_class.size(); ++v)
      if (value_class[v] != kInvalidId) origin_.emplace(g_.find(value_class[v]), ir::ValueId{static_cast<uint32_t>(v)});
  }

  Expected<ir::Graph> build(const std::vector<Id>& roots) {
    out_.info = original_.info;
    // Needed classes, by DFS from the roots.
    for (Id r : roots) mark(g_.find(r));
    // Inputs: all of the original's, in order (an unused input stays an input).
    const auto& ctx = g_.analysis().context();
    for (std::uint32_t i = 0; i < ctx.num_inputs(); ++i) {
      ir::ValueId v = out_.add_input(ctx.input(i).name, ctx.input(i).type);
      input_value_[i] = v;
    }
    // Constants in the original order, then any new ones.
    std::vector<std::uint32_t> consts;
    for (Id c : needed_order_)
      if (const TensorNode& n = choice_(c); n.op == kConstantOp && !ctx.constant(n.payload).node_attrs)
        consts.push_back(n.payload);
    std::sort(consts.begin(), consts.end());
    consts.erase(std::unique(consts.begin(), consts.end()), consts.end());
    for (std::uint32_t k : consts) const_value_[k] = out_.add_constant(ctx.constant(k).name, ctx.constant(k).tensor);
    // Nodes: original nodes first, in their order, then new ones bottom-up.
    for (size_t n = 0; n < original_.num_nodes(); ++n)
      for (ir::ValueId v : original_.nodes()[n].outputs) {
        auto it = class_of_.find(ir::index(v));
        if (it != class_of_.end() && needed_.count(it->second)) emit(it->second);
      }
    for (Id c : needed_order_) emit(c);
    std::vector<ir::ValueId> outs;
    for (Id r : roots) outs.push_back(value_[g_.find(r)]);
    out_.set_outputs(std::move(outs));
    if (auto ok = out_.verify(); !ok) return std::unexpected(ok.error());
    return std::move(out_);
  }

 private:
  void mark(Id c) {
    if (!needed_.insert(c).second) return;
    const TensorNode& n = choice_(c);
    for (Id k : n.kids) mark(g_.find(k));
    needed_order_.push_back(c);  // post-order: children first
    auto o = origin_.find(c);
    if (o != origin_.end()) class_of_[ir::index(o->second)] = c;
  }

  // Whether `n` is the e-node the original graph had for this class's value.
  const ir::Value* original_value(Id c, const TensorNode& n) const {
    auto o = origin_.find(c);
    if (o == origin_.end()) return nullptr;
    const ir::Value& v = original_.value(o->second);
    if (n.op == kInputOp) return v.kind == ir::ValueKind::Input ? &v : nullptr;
    if (n.op == kConstantOp) return v.kind == ir::ValueKind::Constant ? &v : nullptr;
    if (v.kind != ir::ValueKind::NodeResult) return nullptr;
    const ir::Node& on = original_.node(v.producer);
    if (static_cast<std::uint32_t>(on.op) != n.op) return nullptr;
    size_t present = 0;
    for (ir::ValueId in : on.inputs) present += in != ir::kNoValue;
    if (present != n.kids.size()) return nullptr;
    size_t k = 0;
    for (ir::ValueId in : on.inputs)
      if (in != ir::kNoValue && (origin_class(in) != g_.find(n.kids[k++]))) return nullptr;
    return &v;
  }

  Id origin_class(ir::ValueId v) const { return g_.find(value_class_[ir::index(v)]); }

  void emit(Id c) {
    if (value_.count(c)) return;
    const TensorNode& n = choice_(c);
    for (Id k : n.kids) emit(g_.find(k));
    if (n.op == kInputOp) { value_[c] = input_value_.at(n.payload); return; }
    const auto& ctx = g_.analysis().context();
    if (n.op == kConstantOp) {
      const ConstantInfo& info = ctx.constant(n.payload);
      if (!info.node_attrs) {
        value_[c] = const_value_.at(n.payload);
        return;
      }
      ir::Node node;  // written back as the Constant node it was
      node.op = ir::Op::Constant;
      node.name = info.node_name;
      node.attrs = *info.node_attrs;
      ir::NodeId id = out_.add_node(std::move(node), {info.name}, {g_[c].data.type});
      value_[c] = out_.node(id).outputs[0];
      return;
    }
    const NodeAttrs& na = ctx.attrs(n.payload);
    NodeAttrs base = na;
    base.output = 0;
    NodeKey key{n.op, {}, base};
    for (Id k : n.kids) key.kids.push_back(g_.find(k));
    auto sib = siblings_.find(key);
    if (sib != siblings_.end()) {  // another result of an op already emitted
      for (const auto& [attrs, node] : sib->second)
        if (attrs == base) {
          value_[c] = out_.node(node).outputs[na.output];
          return;
        }
    }
    ir::Node node;
    node.op = n.ir_op();
    node.attrs = na.attrs;
    node.domain = na.domain;
    node.op_type = na.op_type;
    size_t k = 0;
    size_t positions = na.present.empty() ? n.kids.size() : na.present.size();
    for (size_t i = 0; i < positions; ++i)
      node.inputs.push_back(!na.present.empty() && !na.present[i] ? ir::kNoValue : value_.at(g_.find(n.kids[k++])));
    // Names: the original's when this is the original node, else fresh.
    const ir::Value* orig = original_value(c, n);
    std::vector<std::string> names(na.num_outputs);
    std::vector<ir::TensorType> types(na.num_outputs, ir::TensorType{ir::DType::f32, ir::Shape::unranked()});
    if (orig != nullptr) {
      const ir::Node& on = original_.node(orig->producer);
      node.name = on.name;
      for (size_t o = 0; o < on.outputs.size(); ++o) {
        names[o] = original_.value(on.outputs[o]).name;
        types[o] = original_.value(on.outputs[o]).type;
      }
    } else {
      for (size_t o = 0; o < names.size(); ++o) names[o] = fmt::format("r{}_{}", index(c), o);
    }
    types[na.output] = g_[c].data.type;
    ir::NodeId id = out_.add_node(std::move(node), names, types);
    siblings_[key].emplace_back(base, id);
    value_[c] = out_.node(id).outputs[na.output];
  }

  const TensorEGraph& g_;
  const Choice& choice_;
  const ir::Graph& original_;
  const std::vector<Id>& value_class_;
  std::unordered_map<Id, ir::ValueId> origin_;
  std::unordered_map<uint32_t, Id> class_of_;
  std::unordered_set<Id> needed_;
  std::vector<Id> needed_order_;
  std::unordered_map<std::uint32_t, ir::ValueId> input_value_, const_value_;
  std::unordered_map<Id, ir::ValueId> value_;
  std::map<NodeKey, std::vector<std::pair<NodeAttrs, ir::NodeId>>> siblings_;
  ir::Graph out_;
};

}  // namespace

Expected<ir::Graph> to_graph(const TensorEGraph& egraph, const std::vector<Id>& roots, const Choice& choice,
                             const ir::Graph& original, const std::vector<Id>& value_class) {
  return Builder(egraph, choice, original, value_class).build(roots);
}

}  // namespace refinery::egraph::tensor
