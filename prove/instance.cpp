#include "prove/instance.h"

#include "prove/instance_ops.h"
#include "prove/instance_shapes.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <random>
#include <set>

#include <fmt/format.h>

namespace refinery::prove {

using namespace rules;

namespace {

class Generator {
 public:
  // `empty`: dims may be 0 (empty tensors), where ONNX defines the ops on them.
  Generator(const RuleBody& body, uint64_t seed, bool empty)
      : body_(body), dice_(seed, empty), demands_(read_demands(body)) {
    for (const auto& [root, p] : body.lhs) find_int_vars(p);
    // A :let function that reads values (rules::LetDef::reads_values) needs
    // its tensor arguments as constants; their value conditions choose the draws.
    for (const Let& let : body.lets)
      if (find_let(let.fn)->reads_values)
        for (const Arg& a : let.args)
          if (a.is_var) value_vars_[a.var] = ValueCond::None;
    for (const Cond& c : body.conds)
      if (const CondDef* def = find_condition(c.name); def->value != ValueCond::None && !c.args.empty() &&
                                                       c.args[0].is_var && value_vars_.contains(c.args[0].var))
        value_vars_[c.args[0].var] = value_vars_[c.args[0].var] | def->value;
    // The rule's own shape facts: `(rank ?x N)` fixes a variable's rank.
    for (const Cond& c : body.conds)
      if (c.name == "rank" && c.args.size() == 2 && c.args[0].is_var && !c.args[1].is_var)
        if (auto* n = std::get_if<int64_t>(&c.args[1].literal)) ranks_[c.args[0].var] = *n;
  }

  // One random instance; nullopt (with why_) when this draw does not fit.
  std::optional<Instance> draw() {
    for (const auto& [root, p] : body_.lhs) {
      auto t = visit(p);
      if (!t) return std::nullopt;
      if (!root.empty()) {
        // A multi-pattern root: its type is the pattern's.
        facts_[root] = *t;
      }
    }
    Env env;
    env.symbolic_values = true;
    for (const auto& [v, t] : facts_) env.tensors[v] = TensorFact{t.type, t.constant, t.ints};
    for (const auto& [v, a] : attrs_) env.attrs[v] = a;
    for (const Let& let : body_.lets) {
      auto args = resolve(env, let.args);
      auto val = find_let(let.fn)->compute(args);
      if (!val) return why(fmt::format("a :let function declined: {}", let.fn));
      env.attrs[let.var] = *val;
      computed_[let.var] = *val;
    }
    for (const Cond& c : body_.conds) {
      auto args = resolve(env, c.args);
      if (!find_condition(c.name)->check(env, args)) return why(fmt::format("condition {} does not hold", c.name));
    }
    Instance inst;
    for (const auto& name : order_)
      if (!int_vars_.count(name) && !value_vars_.count(name) && !is_root(name)) inst.inputs.push_back(name);
    for (const auto& name : inst.inputs) {
      ValueCond vc = ValueCond::None;
      for (const Cond& c : body_.conds) {
        const CondDef* def = find_condition(c.name);
        if (def->value != ValueCond::None && !c.args.empty() && c.args[0].is_var && c.args[0].var == name)
          vc = vc | def->value;
      }
      inst.input_conds.push_back(vc);
      inst.elements += facts_[name].type.shape.num_elements().value_or(0);
    }
    auto lhs = build(inst, body_.lhs);
    if (!lhs) return why("left side: " + graph_error_);
    auto rhs = build(inst, body_.rhs);
    if (!rhs) return why("right side does not type-check: " + graph_error_);
    for (size_t i = 0; i < lhs->outputs().size(); ++i)
      if (lhs->value(lhs->outputs()[i]).type != rhs->value(rhs->outputs()[i]).type)
        return why(fmt::format("the sides' types differ: {} and {}", lhs->value(lhs->outputs()[i]).type.str(),
                               rhs->value(rhs->outputs()[i]).type.str()));
    inst.lhs = std::move(*lhs);
    inst.rhs = std::move(*rhs);
    std::vector<std::string> parts;
    for (const auto& name : order_) {
      if (is_root(name)) continue;
      const Drawn& f = facts_[name];
      if (f.ints)
        parts.push_back(fmt::format("{}=[{}]", name, fmt::join(*f.ints, " ")));
      else
        parts.push_back(fmt::format("{}:{}", name, f.type.shape.rank() == 0 ? "scalar" : f.type.shape.str()));
    }
    for (const auto& [v, a] : attrs_) parts.push_back(fmt::format("{}={}", v, a ? literal_str(*a) : "absent"));
    for (const auto& [v, r] : rests_)
      if (!r.empty()) {
        std::vector<std::string> kv;
        for (const auto& [k, x] : r.entries()) kv.push_back(fmt::format("{}={}", k, literal_str(x)));
        parts.push_back(fmt::format("{}={{{}}}", v, fmt::join(kv, ",")));
      }
    inst.describe = fmt::format("{}", fmt::join(parts, " "));
    return inst;
  }

  const std::string& why_not() const { return why_; }

 private:
  std::nullopt_t why(std::string s) {
    why_ = std::move(s);
    return std::nullopt;
  }
  bool is_root(const std::string& v) const {
    for (const auto& [root, p] : body_.lhs)
      if (root == v) return true;
    return false;
  }

  void find_int_vars(const Pat& p) {
    for (size_t i = 0; i < p.kids.size(); ++i) {
      if (p.kind == Pat::Kind::Op && p.kids[i].kind == Pat::Kind::Var && int_position(p.op, i))
        int_vars_.insert(p.kids[i].var);
      find_int_vars(p.kids[i]);
    }
  }

  void assign(const std::string& var, Sizes s) {
    // `(vector-of ?b ?w k)` with ?w drawn: ?b is [dim k of ?w] (a bias of a projection)
    for (const Cond& c : body_.conds)
      if (c.name == "vector-of" && c.args.size() == 3 && c.args[0].is_var && c.args[0].var == var &&
          c.args[1].is_var && facts_.count(c.args[1].var))
        if (auto* k = std::get_if<int64_t>(&c.args[2].literal)) {
          const ir::Shape& w = facts_[c.args[1].var].type.shape;
          if (auto ax = ir::normalize_axis(*k, w.rank())) s = {w[*ax].size()};
        }
    // `(heads-merged ?a ?s1 ?b ?s2 ?y)` with ?a drawn: ?b is K's heads beside Q's, [B, h, T, d] of ?a's
    // [B, h, S, d] (drawn independently, the two would rarely agree)
    for (const Cond& c : body_.conds)
      if (c.name == "heads-merged" && c.args.size() == 5 && c.args[2].is_var && c.args[2].var == var &&
          c.args[0].is_var && facts_.count(c.args[0].var)) {
        std::vector<int64_t> a = facts_[c.args[0].var].type.shape.sizes();
        if (a.size() == 4) s = {a[0], a[1], 1 + dice_.pick(3), a[3]};
      }
    // `(rank ?x N)`: a proposal of more dims keeps its last N (a matmul's
    // [k, n] of a batched proposal, a broadcasting suffix), else N random dims
    if (auto r = ranks_.find(var); r != ranks_.end() && static_cast<int64_t>(s.size()) != r->second) {
      if (static_cast<int64_t>(s.size()) > r->second)
        s.erase(s.begin(), s.end() - r->second);
      else
        s = dice_.random_shape(static_cast<int>(r->second));
    }
    // a dim that a split into n parts reads: a multiple of n
    if (auto m = demands_.multiple.find(var); m != demands_.multiple.end()) {
      auto [from_end, n] = m->second;
      if (from_end >= 1 && from_end <= static_cast<int64_t>(s.size())) {
        int64_t& d = s[s.size() - static_cast<size_t>(from_end)];
        if (d % n != 0) d = n * (1 + dice_.pick(2));
      }
    }
    order_.push_back(var);
    facts_[var] = Drawn{ir::TensorType{ir::DType::f32, ir::Shape::of(s)}, std::nullopt, nullptr};
    if (auto v = value_vars_.find(var); v != value_vars_.end()) facts_[var].constant = draw_constant(s, v->second);
  }
  // A constant for a variable whose value a :let reads: elements from a
  // small set that spans magnitudes (an epsilon's 1e-12 and 1e-5 among
  // them), within the variable's value conditions.
  const ir::Tensor* draw_constant(const Sizes& s, ValueCond c) {
    std::vector<float> pool{1e-12f, 1e-5f, 0.5f, 1.0f, 3.0f};
    if (!has(c, ValueCond::Positive)) {
      pool.push_back(-2.5f);
      if (!has(c, ValueCond::Nonzero)) pool.push_back(0.0f);
    }
    if (has(c, ValueCond::NonNegative) && !has(c, ValueCond::Nonzero) && !has(c, ValueCond::Positive))
      pool = {0.0f, 1e-5f, 1.0f};
    if (has(c, ValueCond::Zero)) pool = {0.0f};
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    std::vector<float> v(static_cast<size_t>(n));
    float first = pool[static_cast<size_t>(dice_.pick(static_cast<int>(pool.size())))];
    for (float& x : v)
      x = has(c, ValueCond::Uniform) ? first : pool[static_cast<size_t>(dice_.pick(static_cast<int>(pool.size())))];
    auto t = std::make_shared<ir::Tensor>(ir::Tensor::from_values<float>(ir::DType::f32, s, v));
    tensors_.push_back(t);
    return t.get();
  }
  void assign_ints(const std::string& var, std::vector<int64_t> v) {
    order_.push_back(var);
    auto t = std::make_shared<ir::Tensor>(ir::Tensor::vector_i64(v));
    tensors_.push_back(t);
    facts_[var] = Drawn{ir::TensorType{ir::DType::i64, ir::Shape::of({static_cast<int64_t>(v.size())})}, v, t.get()};
  }

  // Post-order: the type of pattern `p`, assigning its variables.
  std::optional<Drawn> visit(const Pat& p) {
    switch (p.kind) {
      case Pat::Kind::Var: {
        if (!facts_.count(p.var)) assign(p.var, dice_.random_shape());
        return facts_[p.var];
      }
      case Pat::Kind::Literal: {
        auto t = std::make_shared<ir::Tensor>(literal_tensor(p.literal));
        tensors_.push_back(t);
        Drawn info{ir::TensorType{t->dtype(), ir::Shape::of(t->dims())}, std::nullopt, t.get()};
        if (auto* l = std::get_if<std::vector<int64_t>>(&p.literal)) info.ints = *l;
        return info;
      }
      case Pat::Kind::Op: break;
    }
    std::vector<std::optional<Drawn>> kids(p.kids.size());
    // 1. sub-operations, literals and variables already known
    for (size_t i = 0; i < p.kids.size(); ++i) {
      const Pat& k = p.kids[i];
      if (k.kind != Pat::Kind::Var) {
        kids[i] = visit(k);
        if (!kids[i]) return std::nullopt;
      } else if (facts_.count(k.var)) {
        kids[i] = facts_[k.var];
      }
    }
    // 2. the first operand, when nothing else fixes it
    // (a variable that occurs twice, (mul ?x ?x), is assigned once: its
    // other occurrences take that shape)
    auto first_free = [&]() -> std::optional<size_t> {
      for (size_t i = 0; i < p.kids.size(); ++i) {
        if (kids[i] || int_vars_.count(p.kids[i].var)) continue;
        if (p.kids[i].kind == Pat::Kind::Var && facts_.count(p.kids[i].var)) {
          kids[i] = facts_[p.kids[i].var];
          continue;
        }
        return i;
      }
      return std::nullopt;
    };
    bool any = std::any_of(kids.begin(), kids.end(), [](const auto& k) { return k.has_value(); });
    if (!any)
      if (auto i = first_free()) {
        assign(p.kids[*i].var, ops_.propose(p, *i, kids));
        kids[*i] = facts_[p.kids[*i].var];
      }
    // 3. attributes
    int64_t rank = kids.empty() || !kids[0] ? -1 : kids[0]->type.shape.rank();
    ir::Attributes attrs;
    for (const AttrPat& a : p.attrs) {
      if (a.name == "*") {
        if (!rests_.count(a.var)) rests_[a.var] = ops_.gen_rest(p.op, rank, p.attrs);
        for (const auto& [k, v] : rests_[a.var].entries()) attrs.set(k, v);
        continue;
      }
      std::optional<Literal> v;
      if (!a.is_var) {
        v = a.literal;
      } else {
        // a convolution's bound group: 1, or the input's channels (depthwise)
        if (!attrs_.count(a.var) && p.op == ir::Op::Conv && a.name == "group" && rank >= 3 && kids[0])
          attrs_[a.var] = Literal(dice_.coin(0.6) ? kids[0]->type.shape[1].size() : int64_t{1});
        if (!attrs_.count(a.var)) attrs_[a.var] = ops_.gen_attr(p.op, a.name, rank);
        v = attrs_[a.var];
      }
      if (v) attrs.set(a.name, *v);
    }
    // 4. the remaining operands
    while (auto i = first_free()) {
      assign(p.kids[*i].var, ops_.propose(p, *i, kids));
      kids[*i] = facts_[p.kids[*i].var];
    }
    // 5. integer inputs
    for (size_t i = 0; i < p.kids.size(); ++i) {
      if (kids[i]) continue;
      auto v = ops_.gen_ints(p, i, kids, attrs);
      if (!v) return why(fmt::format("no integer input for {}", ir::op_name(p.op)));
      assign_ints(p.kids[i].var, *v);
      kids[i] = facts_[p.kids[i].var];
    }
    // ONNX pooling: a pad no smaller than the kernel would make a window of
    // padding only (no instance of the op)
    if (p.op == ir::Op::MaxPool || p.op == ir::Op::AveragePool) {
      if (rank < 3) return why("a pool's input is not N x C x D1...");
      auto kernel = attrs.maybe_ints("kernel_shape");
      auto pads = ir::OpAttrs(p.op, attrs, rank).get_ints("pads");
      if (kernel)
        for (size_t k = 0; k < pads.size() && !kernel->empty(); ++k)
          if (pads[k] >= (*kernel)[k % kernel->size()]) return why("a pool's pad is not smaller than its kernel");
    }
    // 6. the node's type
    std::vector<ir::InferInput> ins(kids.size());
    std::vector<std::vector<ir::Dim>> known(kids.size());
    for (size_t i = 0; i < kids.size(); ++i) {
      ins[i].type = &kids[i]->type;
      ins[i].constant = kids[i]->constant;
      if (kids[i]->ints) {
        for (int64_t v : *kids[i]->ints) known[i].push_back(ir::Dim::integer(v));
        ins[i].known = &known[i];
      }
    }
    const ir::OpInfo& info = ir::op_info(p.op);
    int nout = p.nout.value_or(std::max(info.min_outputs, p.op == ir::Op::Split ? 2 : 1));
    ir::InferContext ctx;
    ctx.op = p.op;
    ctx.inputs = ins;
    ctx.attrs = &attrs;
    ctx.num_outputs = nout;
    ctx.outputs.resize(static_cast<size_t>(nout));
    ctx.known.resize(static_cast<size_t>(nout));
    if (auto ok = info.infer(ctx); !ok) return why(fmt::format("{}: {}", info.name, ok.error()));
    const ir::TensorType& t = ctx.outputs[static_cast<size_t>(p.out)];
    if (!t.shape.is_static()) return why(fmt::format("{} has a non-static result", info.name));
    std::vector<Sizes> shapes;
    for (const auto& k : kids) shapes.push_back(k->type.shape.sizes());
    if (auto bad = undefined_on_empty(p.op, shapes, attrs)) return why(*bad);
    Drawn out{t, std::nullopt, nullptr};
    if (ctx.known[static_cast<size_t>(p.out)]) {
      std::vector<int64_t> v;
      for (const auto& d : *ctx.known[static_cast<size_t>(p.out)])
        if (d.is_integer()) v.push_back(d.value());
      if (v.size() == ctx.known[static_cast<size_t>(p.out)]->size()) out.ints = v;
    }
    return out;
  }

  // Builds the graph of one side over the instance's inputs.
  std::optional<ir::Graph> build(const Instance& inst, const std::vector<std::pair<std::string, Pat>>& side) {
    ir::Graph g;
    std::map<std::string, ir::ValueId> vals;
    for (const auto& name : inst.inputs) vals[name] = g.add_input(name.substr(1), facts_[name].type);
    std::map<std::string, ir::NodeId> memo;
    // Known contents of the results built so far (a Shape's dims, a Concat of
    // them), read by the shape rules of the nodes above them, as infer_shapes
    // would (an Expand to a target computed from Shape).
    std::map<uint32_t, std::vector<ir::Dim>> propagated;
    int counter = 0;
    std::function<std::optional<ir::ValueId>(const Pat&)> rec = [&](const Pat& p) -> std::optional<ir::ValueId> {
      switch (p.kind) {
        case Pat::Kind::Var: {
          if (auto it = vals.find(p.var); it != vals.end()) return it->second;
          if (auto f = facts_.find(p.var); f != facts_.end() && f->second.constant) {
            auto t = std::make_shared<const ir::Tensor>(*f->second.constant);
            return vals[p.var] = g.add_constant(p.var.substr(1), t);
          }
          if (auto c = computed_.find(p.var); c != computed_.end())
            return vals[p.var] = g.add_constant(p.var.substr(1),
                                                std::make_shared<const ir::Tensor>(literal_tensor(c->second, true)));
          if (auto c = attrs_.find(p.var); c != attrs_.end() && c->second)
            return vals[p.var] = g.add_constant(p.var.substr(1),
                                                std::make_shared<const ir::Tensor>(literal_tensor(*c->second, true)));
          graph_error_ = fmt::format("{} has no value", p.var);
          return std::nullopt;
        }
        case Pat::Kind::Literal:
          return g.add_constant(fmt::format("k{}", counter++),
                                std::make_shared<const ir::Tensor>(literal_tensor(p.literal)));
        case Pat::Kind::Op: break;
      }
      ir::Node node;
      node.op = p.op;
      for (const Pat& k : p.kids) {
        auto v = rec(k);
        if (!v) return std::nullopt;
        node.inputs.push_back(*v);
      }
      for (const AttrPat& a : p.attrs) {
        if (a.name == "*") {
          for (const auto& [k, v] : rests_[a.var].entries()) node.attrs.set(k, v);
          continue;
        }
        std::optional<Literal> v;
        if (!a.is_var)
          v = a.literal;
        else if (auto it = attrs_.find(a.var); it != attrs_.end())
          v = it->second;
        else if (auto c = computed_.find(a.var); c != computed_.end())
          v = c->second;
        if (!v) continue;
        Literal x = *v;
        for (const auto& spec : ir::op_info(p.op).attrs)
          if (spec.name == a.name && spec.kind == ir::AttrKind::Float)
            if (auto* i = std::get_if<int64_t>(&x)) x = Literal(static_cast<float>(*i));
        node.attrs.set(a.name, x);
      }
      const ir::OpInfo& info = ir::op_info(p.op);
      int nout = p.nout.value_or(std::max(info.min_outputs, p.op == ir::Op::Split ? 2 : 1));
      std::string key = fmt::format("{}|{}|{}|{}", static_cast<int>(p.op), nout,
                                    fmt::join(std::vector<uint32_t>([&] {
                                                std::vector<uint32_t> v;
                                                for (auto in : node.inputs) v.push_back(ir::index(in));
                                                return v;
                                              }()),
                                              ","),
                                    [&] {
                                      std::string s;
                                      for (const auto& [k, v] : node.attrs.entries())
                                        s += k + "=" + literal_str(v) + ";";
                                      return s;
                                    }());
      if (auto it = memo.find(key); it != memo.end()) return g.node(it->second).outputs[static_cast<size_t>(p.out)];
      // Output types from the shape rule.
      std::vector<ir::InferInput> ins(node.inputs.size());
      std::vector<std::vector<ir::Dim>> known(node.inputs.size());
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        const ir::Value& v = g.value(node.inputs[i]);
        ins[i].type = &v.type;
        ins[i].constant = v.constant.get();
        if (v.constant && ir::is_integer(v.constant->dtype())) {
          for (int64_t x : v.constant->to_int_vector()) known[i].push_back(ir::Dim::integer(x));
          ins[i].known = &known[i];
        } else if (auto kv = propagated.find(ir::index(node.inputs[i])); kv != propagated.end()) {
          known[i] = kv->second;
          ins[i].known = &known[i];
        }
      }
      ir::InferContext ctx;
      ctx.op = node.op;
      ctx.inputs = ins;
      ctx.attrs = &node.attrs;
      ctx.num_outputs = nout;
      ctx.outputs.resize(static_cast<size_t>(nout));
      ctx.known.resize(static_cast<size_t>(nout));
      if (auto ok = info.infer(ctx); !ok) {
        graph_error_ = fmt::format("{}: {}", info.name, ok.error());
        return std::nullopt;
      }
      std::vector<Sizes> shapes;
      for (const auto& in : ins) shapes.push_back(in.type->shape.sizes());
      if (auto bad = undefined_on_empty(node.op, shapes, node.attrs)) {
        graph_error_ = *bad;
        return std::nullopt;
      }
      std::vector<std::string> names;
      for (int o = 0; o < nout; ++o) names.push_back(fmt::format("v{}", counter++));
      ir::NodeId id = g.add_node(std::move(node), names, ctx.outputs);
      for (size_t o = 0; o < ctx.known.size(); ++o)
        if (ctx.known[o]) propagated[ir::index(g.node(id).outputs[o])] = std::move(*ctx.known[o]);
      memo[key] = id;
      return g.node(id).outputs[static_cast<size_t>(p.out)];
    };
    std::vector<ir::ValueId> outs;
    for (const auto& [root, p] : side) {
      auto v = rec(p);
      if (!v) return std::nullopt;
      outs.push_back(*v);
    }
    g.set_outputs(outs);
    if (auto ok = g.infer_shapes(); !ok) {
      graph_error_ = ok.error().message;
      return std::nullopt;
    }
    return g;
  }

  const RuleBody& body_;
  Dice dice_;
  Demands demands_;
  std::set<std::string> int_vars_;
  std::map<std::string, int64_t> ranks_;
  std::vector<std::string> order_;
  std::map<std::string, Drawn> facts_;
  std::map<std::string, std::optional<Literal>> attrs_;
  std::map<std::string, ir::Attributes> rests_;
  std::map<std::string, Literal> computed_;
  std::vector<std::shared_ptr<ir::Tensor>> tensors_;
  std::map<std::string, ValueCond> value_vars_;  // variables drawn as constants, with their value conditions
  OpProposals ops_{dice_, demands_, attrs_, rests_};
  std::string why_, graph_error_;
};

}  // namespace

std::vector<Instance> make_instances(const RuleBody& body, const std::string& name, int count, int empty,
                                     std::string& why, std::vector<Instance>* others) {
  std::vector<Instance> out;
  std::set<std::string> seen;
  uint64_t seed = std::hash<std::string>()(name);
  std::map<std::string, int> reasons;
  // The first 4 x count distinct draws are the candidates for Z3; the
  // screen (`others`) takes the candidates not kept and as many draws again.
  std::vector<Instance> more;
  const int wanted = count * 4, screened = others ? count * 8 : 0;
  for (int attempt = 0; attempt < 3000 && static_cast<int>(out.size() + more.size()) < wanted + screened; ++attempt) {
    Generator gen(body, seed + static_cast<uint64_t>(attempt) * 7919, false);
    auto inst = gen.draw();
    if (!inst) {
      reasons[gen.why_not()]++;
      continue;
    }
    // (an op may make an empty value of full ones: such a draw is left to
    // the instances with empty dims)
    if (has_empty(inst->lhs) || has_empty(inst->rhs)) continue;
    if (!seen.insert(inst->describe).second) continue;
    (static_cast<int>(out.size()) < wanted ? out : more).push_back(std::move(*inst));
  }
  if (others)
    for (auto& i : more) others->push_back(std::move(i));
  // Keep the smallest first, then a spread of the others; among them the
  // smallest instance where an elementwise op broadcasts (a law that fails
  // under broadcasting, [c] against [n, c] or a scalar, is refuted there),
  // when the draws found one.
  std::stable_sort(out.begin(), out.end(),
                   [](const Instance& a, const Instance& b) { return a.elements < b.elements; });
  if (static_cast<int>(out.size()) > count) {
    std::vector<size_t> chosen;
    for (int i = 0; i < count; ++i)
      chosen.push_back(static_cast<size_t>(i * (static_cast<int>(out.size()) - 1) / std::max(count - 1, 1)));
    auto broadcasting = [&](size_t i) { return broadcasts(out[i].lhs) || broadcasts(out[i].rhs); };
    if (count > 1 && std::none_of(chosen.begin(), chosen.end(), broadcasting))
      for (size_t i = 0; i < out.size(); ++i)
        if (broadcasting(i)) {
          chosen[1] = i;
          break;
        }
    std::sort(chosen.begin(), chosen.end());
    chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
    std::vector<Instance> pick;
    for (size_t i = 0; i < out.size(); ++i)
      if (std::binary_search(chosen.begin(), chosen.end(), i))
        pick.push_back(std::move(out[i]));
      else if (others)
        others->push_back(std::move(out[i]));
    out = std::move(pick);
  }
  if (out.empty()) {
    int best = 0;
    for (const auto& [r, n] : reasons)
      if (n > best) {
        best = n;
        why = r;
      }
    return out;
  }
  // Instances with empty dims, after the others (the binary32 class is
  // decided at the smallest instance without them): the ones where an op
  // makes something of nothing first, then the smallest.
  std::vector<Instance> empties;
  for (int attempt = 0; attempt < 400 && static_cast<int>(empties.size()) < empty * 4; ++attempt) {
    Generator gen(body, seed + 0x5eed + static_cast<uint64_t>(attempt) * 104729, true);
    auto inst = gen.draw();
    if (!inst || !(has_empty(inst->lhs) || has_empty(inst->rhs))) continue;
    if (!seen.insert(inst->describe).second) continue;
    inst->empty = true;
    empties.push_back(std::move(*inst));
  }
  auto rank = [](const Instance& i) { return std::pair(!(collapses(i.lhs) || collapses(i.rhs)), i.elements); };
  std::stable_sort(empties.begin(), empties.end(),
                   [&](const Instance& a, const Instance& b) { return rank(a) < rank(b); });
  for (size_t i = 0; i < empties.size() && static_cast<int>(i) < empty; ++i) out.push_back(std::move(empties[i]));
  return out;
}

}  // namespace refinery::prove
