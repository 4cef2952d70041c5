#include <fmt/format.h>

#include <map>
#include <unordered_map>
#include <unordered_set>

#include "egraph/tensor/convert.h"

namespace refinery::egraph::tensor {

namespace {

// A multi-result op is one e-node per result; the results of one op on the
// same children and attributes become one ir node.
struct OpKey {
  std::uint32_t op;
  std::vector<Id> kids;
  std::uint64_t attrs_hash;
  auto operator<=>(const OpKey&) const = default;
};

class Builder {
 public:
  Builder(const TensorEGraph& g, const Choice& choice, const Origin& origin)
      : g_(g), ctx_(g.analysis().context()), choice_(choice), origin_(origin), original_(*origin.graph) {}

  Expected<ir::Graph> build(const std::vector<Id>& roots) {
    out_.info = original_.info;
    for (Id r : roots) mark(g_.find(r));
    // Every original input stays an input, in order.
    for (std::uint32_t i = 0; i < ctx_.num_inputs(); ++i)
      input_value_[i] = out_.add_input(ctx_.input(i).name, ctx_.input(i).type);
    // Initializers in the original order (the context's order).
    std::vector<std::uint32_t> consts;
    for (Id c : needed_order_)
      if (const TensorNode& n = choice_(c); n.op == kConstantOp && !ctx_.constant(n.payload).node_attrs)
        consts.push_back(n.payload);
    std::sort(consts.begin(), consts.end());
    consts.erase(std::unique(consts.begin(), consts.end()), consts.end());
    for (std::uint32_t k : consts) const_value_[k] = out_.add_constant(ctx_.constant(k).name, ctx_.constant(k).tensor);
    // Original nodes that survive, in their order; then new ones bottom-up.
    for (size_t n = 0; n < original_.num_nodes(); ++n)
      for (ir::ValueId v : original_.nodes()[n].outputs)
        if (survives(v)) emit_original(v);
    for (Id c : needed_order_) emit_class(c);
    std::vector<ir::ValueId> outs;
    for (size_t i = 0; i < roots.size(); ++i) {
      ir::ValueId orig = i < original_.outputs().size() ? original_.outputs()[i] : ir::kNoValue;
      outs.push_back(orig != ir::kNoValue && survives(orig) ? emit_original(orig) : emit_class(g_.find(roots[i])));
    }
    keep_output_names(outs);
    out_.set_outputs(std::move(outs));
    if (auto ok = out_.verify(); !ok) return std::unexpected(ok.error());
    return std::move(out_);
  }

 private:
  Id class_of(ir::ValueId v) const { return g_.find(origin_.value_class[ir::index(v)]); }

  // The graph's interface is the original's: output i keeps the original
  // output's name (a runtime's caller fetches outputs by name). A new node's
  // result is renamed; a value that is an input, a constant, another output
  // or an original value under its own name gets an Identity that carries
  // the name. A value already holding the name (a new node's) yields it.
  void keep_output_names(std::vector<ir::ValueId>& outs) {
    std::unordered_set<std::string> wanted;
    for (size_t i = 0; i < outs.size() && i < original_.outputs().size(); ++i)
      wanted.insert(original_.value(original_.outputs()[i]).name);
    std::unordered_set<std::uint32_t> named;  // values that carry an output's name by now
    for (size_t i = 0; i < outs.size() && i < original_.outputs().size(); ++i) {
      const std::string& want = original_.value(original_.outputs()[i]).name;
      ir::ValueId v = outs[i];
      if (out_.value(v).name == want && named.insert(ir::index(v)).second) continue;
      if (auto holder = out_.find_value(want); holder && *holder != v) rename_aside(*holder);
      const bool renamable = out_.value(v).kind == ir::ValueKind::NodeResult && !named.count(ir::index(v)) &&
                             !wanted.count(out_.value(v).name) && !original_names().count(out_.value(v).name);
      if (renamable) {
        out_.value(v).name = want;
      } else {
        ir::Node id;
        id.op = ir::Op::Identity;
        id.inputs = {v};
        v = out_.node(out_.add_node(std::move(id), {want}, {out_.value(v).type})).outputs[0];
      }
      named.insert(ir::index(v));
      outs[i] = v;
    }
  }

  // Gives the value holding a name an output needs another, unused name.
  void rename_aside(ir::ValueId v) {
    for (int k = 0;; ++k) {
      std::string name = fmt::format("{}_{}", out_.value(v).name, k);
      if (!out_.find_value(name) && !original_names().count(name)) {
        out_.value(v).name = std::move(name);
        return;
      }
    }
  }

  // The name of an original value in class c that no value of the new graph
  // has yet, in the original's order; empty if none.
  std::string original_name_of(Id c) {
    if (class_values_.empty())
      for (size_t v = 0; v < original_.num_values(); ++v)
        if (v < origin_.value_class.size() && original_.value(ir::ValueId(static_cast<std::uint32_t>(v))).kind ==
                                                  ir::ValueKind::NodeResult)
          class_values_[g_.find(origin_.value_class[v])].push_back(static_cast<std::uint32_t>(v));
    auto it = class_values_.find(g_.find(c));
    if (it == class_values_.end()) return {};
    for (std::uint32_t v : it->second) {
      const std::string& name = original_.value(ir::ValueId(v)).name;
      if (!out_.find_value(name) && !original_value_.count(v)) return name;
    }
    return {};
  }

  // The names of the original's values (an original value that survives
  // keeps its name; a new one must not take it).
  const std::unordered_set<std::string>& original_names() {
    if (original_names_.empty())
      for (const ir::Value& v : original_.values()) original_names_.insert(v.name);
    return original_names_;
  }

  // The e-node chosen for v's class is the one seeding made for v.
  bool survives(ir::ValueId v) const {
    Id c = class_of(v);
    if (!needed_.count(c)) return false;
    TensorNode seeded = origin_.value_node[ir::index(v)];
    for (Id& k : seeded.kids) k = g_.find(k);
    TensorNode chosen = choice_(c);
    for (Id& k : chosen.kids) k = g_.find(k);
    return seeded == chosen;
  }

  void mark(Id c) {
    if (!needed_.insert(c).second) return;
    for (Id k : choice_(c).kids) mark(g_.find(k));
    needed_order_.push_back(c);  // post-order: children first
  }

  // Emits the original node that produced v (with its original inputs where
  // they survive too) and returns v's new value.
  ir::ValueId emit_original(ir::ValueId v) {
    if (auto it = original_value_.find(ir::index(v)); it != original_value_.end()) return it->second;
    const ir::Value& val = original_.value(v);
    Id c = class_of(v);
    const TensorNode& n = choice_(c);
    if (val.kind != ir::ValueKind::NodeResult || n.op == kConstantOp) {
      ir::ValueId out = emit_leaf(c, n);
      original_value_[ir::index(v)] = out;
      return out;
    }
    const ir::Node& on = original_.node(val.producer);
    ir::Node node;
    node.op = on.op;
    node.name = on.name;
    node.attrs = on.attrs;
    node.domain = on.domain;
    node.op_type = on.op_type;
    for (ir::ValueId in : on.inputs)
      node.inputs.push_back(in == ir::kNoValue ? ir::kNoValue
                            : survives(in)     ? emit_original(in)
                                               : emit_class(class_of(in)));
    std::vector<std::string> names;
    std::vector<ir::TensorType> types;
    // The class's type: what the graph declared, refined by the analysis
    // (a static or symbolic dim where the graph said ?).
    for (ir::ValueId o : on.outputs) {
      names.push_back(original_.value(o).name);
      types.push_back(g_[class_of(o)].data.type);
    }
    ir::NodeId id = out_.add_node(std::move(node), names, types);
    for (size_t o = 0; o < on.outputs.size(); ++o) {
      original_value_[ir::index(on.outputs[o])] = out_.node(id).outputs[o];
      value_.try_emplace(class_of(on.outputs[o]), out_.node(id).outputs[o]);
    }
    return original_value_.at(ir::index(v));
  }

  ir::ValueId emit_leaf(Id c, const TensorNode& n) {
    if (auto it = value_.find(c); it != value_.end()) return it->second;
    ir::ValueId out;
    if (n.op == kInputOp) {
      out = input_value_.at(n.payload);
    } else {
      const ConstantInfo& info = ctx_.constant(n.payload);
      if (!info.node_attrs) {
        out = const_value_.at(n.payload);
      } else {  // written back as the Constant node it was
        ir::Node node;
        node.op = ir::Op::Constant;
        node.name = info.node_name;
        node.attrs = *info.node_attrs;
        out = out_.node(out_.add_node(std::move(node), {info.name}, {g_[c].data.type})).outputs[0];
      }
    }
    value_[c] = out;
    return out;
  }

  // Emits the chosen node of class c (if no node gave it a value yet).
  ir::ValueId emit_class(Id c) {
    if (auto it = value_.find(c); it != value_.end()) return it->second;
    const TensorNode& n = choice_(c);
    if (n.is_leaf()) return emit_leaf(c, n);
    std::vector<ir::ValueId> kids;
    for (Id k : n.kids) kids.push_back(emit_class(g_.find(k)));
    const NodeAttrs& na = ctx_.attrs(n.payload);
    NodeAttrs base = na;
    base.output = 0;
    OpKey key{n.op, {}, base.hash()};
    for (Id k : n.kids) key.kids.push_back(g_.find(k));
    for (const auto& [attrs, id] : siblings_[key])
      if (attrs == base) {
        // The sibling was emitted for another of its results; this result's
        // type was a placeholder until now.
        ir::ValueId v = out_.node(id).outputs[na.output];
        out_.value(v).type = g_[c].data.type;
        return value_[c] = v;
      }
    ir::Node node;
    node.op = n.ir_op();
    node.attrs = na.attrs;
    node.domain = na.domain;
    node.op_type = na.op_type;
    size_t k = 0, positions = na.present.empty() ? kids.size() : na.present.size();
    for (size_t i = 0; i < positions; ++i)
      node.inputs.push_back(!na.present.empty() && !na.present[i] ? ir::kNoValue : kids[k++]);
    std::vector<std::string> names(na.num_outputs);
    for (size_t o = 0; o < names.size(); ++o) names[o] = fmt::format("r{}_{}", index(c), o);
    // The result computes an original value: it takes that value's name (a
    // layer keeps its name in NIR, and a reader of the refined graph finds it).
    if (std::string name = original_name_of(c); !name.empty()) names[na.output] = name;
    std::vector<ir::TensorType> types(na.num_outputs, ir::TensorType{ir::DType::f32, ir::Shape::unranked()});
    types[na.output] = g_[c].data.type;
    ir::NodeId id = out_.add_node(std::move(node), names, types);
    siblings_[key].emplace_back(base, id);
    return value_[c] = out_.node(id).outputs[na.output];
  }

  const TensorEGraph& g_;
  const TensorContext& ctx_;
  const Choice& choice_;
  const Origin& origin_;
  const ir::Graph& original_;
  std::unordered_set<Id> needed_;
  std::vector<Id> needed_order_;
  std::unordered_map<std::uint32_t, ir::ValueId> input_value_, const_value_, original_value_;
  std::unordered_map<Id, ir::ValueId> value_;
  std::map<OpKey, std::vector<std::pair<NodeAttrs, ir::NodeId>>> siblings_;
  std::unordered_set<std::string> original_names_;
  std::unordered_map<Id, std::vector<std::uint32_t>> class_values_;  // class -> its original node results
  ir::Graph out_;
};

}  // namespace

Expected<ir::Graph> to_graph(const TensorEGraph& egraph, const std::vector<Id>& roots, const Choice& choice,
                             const Origin& origin) {
  return Builder(egraph, choice, origin).build(roots);
}

}  // namespace refinery::egraph::tensor
