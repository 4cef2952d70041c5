// Rules to engine rewrites. The engine's matcher finds candidates with a
// skeleton of the left side (operators and arity, payloads as wildcards);
// the applier then matches the attributes, literals and multi-result
// indexes exactly, checks the conditions, computes :let values, and adds the
// right side only when every node of it type-checks (TensorAnalysis::infer).
#include <cassert>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "rules/builtins.h"
#include "rules/compile.h"
#include "rules/rule_ast.h"

namespace refinery::rules {

using egraph::Id;
using egraph::tensor::NodeAttrs;
using egraph::tensor::TensorContext;
using egraph::tensor::TensorData;
using egraph::tensor::TensorEGraph;
using egraph::tensor::TensorNode;

namespace {

// Whether class data holds a constant equal to the literal everywhere.
bool constant_matches(const TensorData& d, const Literal& lit) {
  if (auto* list = std::get_if<std::vector<int64_t>>(&lit)) {
    if (!d.known) return false;
    if (d.known->size() != list->size() || d.type.shape.rank() != 1) return false;
    for (size_t i = 0; i < list->size(); ++i)
      if (!((*d.known)[i] == ir::Dim::integer((*list)[i]))) return false;
    return true;
  }
  if (!d.constant || d.constant->numel() == 0) return false;
  double want = 0;
  if (auto* i = std::get_if<int64_t>(&lit))
    want = static_cast<double>(*i);
  else if (auto* f = std::get_if<float>(&lit))
    want = static_cast<double>(*f);
  else
    return false;
  if (!ir::is_float(d.constant->dtype())) return false;
  for (int64_t i = 0; i < d.constant->numel(); ++i)
    if (d.constant->as_double(i) != want) return false;
  return true;
}

std::optional<std::vector<int64_t>> known_ints(const TensorData& d) {
  if (d.constant && ir::is_integer(d.constant->dtype()) && d.constant->numel() <= 64)
    return d.constant->to_int_vector();
  if (!d.known) return std::nullopt;
  std::vector<int64_t> v;
  for (const ir::Dim& x : *d.known) {
    if (!x.is_integer()) return std::nullopt;
    v.push_back(x.value());
  }
  return v;
}

bool opt_equal(const std::optional<Literal>& a, const std::optional<Literal>& b) {
  if (!a || !b) return !a && !b;
  return literal_equal(*a, *b);
}

// Attributes other than the named ones, without those at their default.
ir::Attributes rest_of(const ir::Attributes& attrs, const Pat& p, int64_t rank) {
  ir::Attributes out;
  for (const auto& [name, value] : attrs.entries()) {
    bool named = false;
    for (const AttrPat& a : p.attrs) named |= a.name == name;
    if (named) continue;
    auto def = ir::attr_default(p.op, name, rank);
    if (def && literal_equal(*def, value)) continue;
    out.set(name, value);
  }
  return out;
}

}  // namespace

// The variables a match binds, by name. A rule binds a handful, so each kind
// is a flat list searched in order (names are views of the rule's own
// strings or the search's variable table, which outlive the match): solve
// binds and unbinds as it backtracks, with no copy per candidate node.
template <typename T>
struct Bound {
  std::vector<std::pair<std::string_view, T>> items;
  const T* find(std::string_view name) const {
    for (const auto& [n, v] : items)
      if (n == name) return &v;
    return nullptr;
  }
  const T& at(std::string_view name) const {
    const T* v = find(name);
    if (!v) throw std::out_of_range(fmt::format("variable {} is not bound", name));  // the load checks prevent it
    return *v;
  }
  void set(std::string_view name, T value) {
    for (auto& [n, v] : items)
      if (n == name) {
        v = std::move(value);
        return;
      }
    items.emplace_back(name, std::move(value));
  }
};

// An e-node a match took for an operator of the left side: below the
// parent matched node's child `kid`, or (parent < 0) a left side's root.
// Valid while the e-graph is unchanged (the match's premises for
// explanations are read from it before anything is applied).
struct Matched {
  const TensorNode* node;
  int parent;
  std::uint32_t kid;
};

struct Binding {
  Bound<Id> tensors;
  Bound<std::optional<Literal>> attrs;
  Bound<ir::Attributes> rests;
  std::vector<Matched> nodes;
  struct Mark {
    std::size_t tensors, attrs, rests, nodes;
  };
  Mark mark() const { return {tensors.items.size(), attrs.items.size(), rests.items.size(), nodes.size()}; }
  void undo(const Mark& m) {
    tensors.items.resize(m.tensors);
    attrs.items.resize(m.attrs);
    rests.items.resize(m.rests);
    nodes.resize(m.nodes);
  }
};

// Whether two bindings give every variable the same value (the e-nodes taken aside).
bool same_variables(const Binding& a, const Binding& b) {
  auto same = [](const auto& x, const auto& y, auto eq) {
    if (x.items.size() != y.items.size()) return false;
    for (const auto& [name, v] : x.items) {
      const auto* w = y.find(name);
      if (!w || !eq(v, *w)) return false;
    }
    return true;
  };
  return same(a.tensors, b.tensors, std::equal_to<>()) && same(a.attrs, b.attrs, opt_equal) &&
         same(a.rests, b.rests, std::equal_to<>());
}

// Classes that operators of a left side must match in (CompiledRule::class_of).
using Resolved = std::vector<std::pair<const Pat*, Id>>;

// A left side's pattern to match in a class: under matched node `parent`'s
// child `kid` (Matched's numbering).
struct Todo {
  const Pat* pat;
  Id cls;
  int parent;
  std::uint32_t kid;
};

class CompiledRule {
 public:
  CompiledRule(std::string name, std::shared_ptr<const RuleBody> body)
      : name_(std::move(name)), body_(std::move(body)) {
    std::set<std::string> ints;
    for (const auto& [root, p] : body_->lhs) leaf_vars(p, ints);
    for (const auto& v : ints) value_vars_.erase(v);
    for (const auto& [root, p] : body_->lhs) first_is_all_ = first_is_all_ && !opens_attrs(p);
  }

  const RuleBody& body() const { return *body_; }
  const std::string& name() const { return name_; }

  // Every exact match of the left side with the given pre-bound classes:
  // `todo` (patterns and the classes they must match) and `b` are extended
  // and restored as the search backtracks. `found` returns whether to stop;
  // solve returns whether it stopped.
  bool solve(const TensorEGraph& g, std::vector<Todo>& todo, Binding& b, const Resolved& resolved,
             const std::function<bool(Binding&)>& found) const {
    if (todo.empty()) return found(b);
    Todo at = todo.back();
    auto [p, raw, parent, kid] = at;
    todo.pop_back();
    Id cls = g.find(raw);
    bool stop = false;
    switch (p->kind) {
      case Pat::Kind::Var: {
        if (const Id* bound = b.tensors.find(p->var)) {
          if (g.find(*bound) == cls) stop = solve(g, todo, b, resolved, found);
        } else {
          b.tensors.items.emplace_back(p->var, cls);
          stop = solve(g, todo, b, resolved, found);
          b.tensors.items.pop_back();
        }
        break;
      }
      case Pat::Kind::Literal:
        if (constant_matches(g[cls].data, p->literal)) stop = solve(g, todo, b, resolved, found);
        break;
      case Pat::Kind::Op: {
        const TensorContext& ctx = g.analysis().context();
        for (const TensorNode& n : g[cls].nodes) {
          if (n.op != static_cast<std::uint32_t>(p->op) || n.kids.size() != p->kids.size()) continue;
          if (!kids_may_match(g, n, *p, b, resolved)) continue;
          Binding::Mark mark = b.mark();
          int64_t rank = n.kids.empty() ? -1 : g[n.kids[0]].data.type.shape.rank();
          if (attrs_match(ctx.attrs(n.payload), *p, rank, b)) {
            if (g.explanations_enabled()) b.nodes.push_back(Matched{&n, parent, kid});
            const int self = static_cast<int>(b.nodes.size()) - 1;
            for (size_t i = 0; i < p->kids.size(); ++i)
              todo.push_back(Todo{&p->kids[i], n.kids[i], self, static_cast<std::uint32_t>(i)});
            stop = solve(g, todo, b, resolved, found);
            todo.resize(todo.size() - p->kids.size());
          }
          b.undo(mark);
          if (stop) break;
        }
        break;
      }
    }
    todo.push_back(at);
    return stop;
  }

  // A cheap filter before `solve` copies its state for `n`: children bound
  // to a variable already must be in that variable's class, literal children
  // must hold the literal. In a large e-class most candidate nodes fail here,
  // so the copies are made only for the few that can match.
  static bool kids_may_match(const TensorEGraph& g, const TensorNode& n, const Pat& p, const Binding& b,
                             const Resolved& resolved) {
    for (size_t i = 0; i < p.kids.size(); ++i) {
      const Pat& k = p.kids[i];
      if (auto r = std::ranges::find(resolved, &k, &std::pair<const Pat*, Id>::first); r != resolved.end()) {
        if (g.find(n.kids[i]) != r->second) return false;
      } else if (k.kind == Pat::Kind::Var) {
        const Id* bound = b.tensors.find(k.var);
        if (bound && g.find(*bound) != g.find(n.kids[i])) return false;
      } else if (k.kind == Pat::Kind::Literal) {
        if (!constant_matches(g[n.kids[i]].data, k.literal)) return false;
      } else {
        bool any = false;
        for (const TensorNode& m : g[n.kids[i]].nodes)
          if (m.op == static_cast<std::uint32_t>(k.op) && m.kids.size() == k.kids.size()) {
            any = true;
            break;
          }
        if (!any) return false;
      }
    }
    return true;
  }

  // The class of `p`'s one e-node where every variable under it is bound and
  // it names no attribute (its children's classes, default attributes: the
  // hashcons holds at most one such node), if the hashcons has it. Each
  // operator under `p` that resolves is noted in `out`, where the search
  // takes that class alone (kids_may_match). A filter, not a proof: before
  // the e-graph is rebuilt the hashcons can miss a node or hold it in a
  // class congruent to another, so a search filtered so that finds nothing
  // runs again without it.
  std::optional<Id> class_of(const TensorEGraph& g, const Pat& p, const Binding& b, Resolved& out) const {
    if (p.kind == Pat::Kind::Var) {
      if (const Id* id = b.tensors.find(p.var)) return g.find(*id);
      return std::nullopt;
    }
    if (p.kind != Pat::Kind::Op) return std::nullopt;
    std::vector<Id> kids;
    bool all = true;
    for (const Pat& k : p.kids) {
      auto id = class_of(g, k, b, out);
      if (id) kids.push_back(*id);
      all = all && id;
    }
    if (!all || !p.attrs.empty() || p.out != 0) return std::nullopt;
    NodeAttrs na;
    na.num_outputs = static_cast<std::uint16_t>(p.nout.value_or(1));
    auto c = g.lookup(TensorNode{static_cast<std::uint32_t>(p.op), g.analysis().context().intern(std::move(na)),
                                 std::move(kids)});
    if (c) out.emplace_back(&p, *c);
    return c;
  }

  // Appends the premises of a match (egraph/explain.h): every e-node it
  // took below a left side's root (`nodes`), with the term its parent
  // e-node reads there. `owner` is scratch.
  static void premises(const TensorEGraph& g, std::span<const Matched> nodes, std::vector<Id>& owner,
                       std::vector<egraph::Premise>& out) {
    owner.assign(nodes.size(), egraph::kInvalidId);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (auto o = g.memo_owner(*nodes[i].node)) owner[i] = *o;
      const Matched& m = nodes[i];
      if (m.parent < 0 || owner[i] == egraph::kInvalidId) continue;
      if (Id up = owner[static_cast<std::size_t>(m.parent)]; up != egraph::kInvalidId)
        out.push_back({g.proof_forest()->original(up).kids[m.kid], owner[i]});
    }
  }

  static bool attrs_match(const NodeAttrs& na, const Pat& p, int64_t rank, Binding& b) {
    if (na.declared || !na.present.empty() || !na.domain.empty()) return false;
    if (na.output != p.out) return false;
    if (p.nout && na.num_outputs != *p.nout) return false;
    bool has_rest = false;
    for (const AttrPat& a : p.attrs) {
      if (a.name == "*") {
        has_rest = true;
        ir::Attributes rest = rest_of(na.attrs, p, rank);
        if (const ir::Attributes* bound = b.rests.find(a.var)) {
          if (!(*bound == rest)) return false;
        } else {
          b.rests.items.emplace_back(a.var, std::move(rest));
        }
        continue;
      }
      std::optional<Literal> v;
      if (const ir::AttrValue* x = na.attrs.find(a.name))
        v = *x;
      else
        v = ir::attr_default(p.op, a.name, rank);
      if (!a.is_var) {
        if (!v || !literal_equal(*v, a.literal)) return false;
        continue;
      }
      if (const std::optional<Literal>* bound = b.attrs.find(a.var)) {
        if (!opt_equal(*bound, v)) return false;
      } else {
        b.attrs.items.emplace_back(a.var, std::move(v));
      }
    }
    if (!has_rest) {
      // Attributes the pattern does not name must be at their default.
      for (const auto& [name, value] : na.attrs.entries()) {
        bool named = false;
        for (const AttrPat& a : p.attrs) named |= a.name == name;
        if (named) continue;
        if (name == "kernel_shape") continue;  // redundant with the weight's shape
        auto def = ir::attr_default(p.op, name, rank);
        if (!def || !literal_equal(*def, value)) return false;
      }
    }
    return true;
  }

  // The environment of a match: facts of each tensor variable, attribute
  // values, then the :let values in order. False when a :let declines.
  bool environment(const TensorEGraph& g, const Binding& b, Env& env) const {
    for (const auto& [name, id] : b.tensors.items) {
      std::string var(name);
      const TensorData& d = g[id].data;
      env.tensors[var] = TensorFact{d.type,         d.constant.get(), known_ints(d),
                                    static_cast<int64_t>(egraph::index(g.find(id))), d.zero, d.channels.get(),
                                    d.input_free};
      if (d.known) env.tensors[var].dims = &*d.known;
      if (d.constant && d.constant->dims().size() >= 3)
        env.tensors[var].zero_pairs = &g.analysis().context().zero_pairs(d.constant);
    }
    for (const auto& [var, v] : b.attrs.items) env.attrs[std::string(var)] = v;
    for (const Let& let : body_->lets) {
      auto args = resolve(env, let.args);
      auto v = find_let(let.fn)->compute(args);
      if (!v) return false;
      env.attrs[let.var] = *v;
    }
    return true;
  }

  // Verification instantiates every tensor variable outside an integer
  // position (reshape targets, split sizes, slice bounds) as f32 and proves
  // over the reals: the rule applies only where those are floating point.
  // Integer tensors (shape arithmetic) divide by truncation, so e.g.
  // mul-div-assoc would turn (c + 1) / 2 * 1 into (c + 1) * (1 / 2) = 0.
  bool floating(const TensorEGraph& g, const Binding& b) const {
    for (const auto& v : value_vars_) {
      const Id* bound = b.tensors.find(v);
      if (bound && !ir::is_float(g[*bound].data.type.dtype)) return false;
    }
    return true;
  }

  // Whether an attribute of `p` or below is open (a variable or `*`).
  static bool opens_attrs(const Pat& p) {
    return std::ranges::any_of(p.attrs, [](const AttrPat& a) { return a.is_var || a.name == "*"; }) ||
           std::ranges::any_of(p.kids, opens_attrs);
  }

  // Collects the tensor variables of `p` (value_vars_) and those at integer positions (`ints`).
  void leaf_vars(const Pat& p, std::set<std::string>& ints) {
    for (size_t i = 0; i < p.kids.size(); ++i) {
      const Pat& k = p.kids[i];
      if (k.kind == Pat::Kind::Var) {
        value_vars_.insert(k.var);
        if (int_position(p.op, i)) ints.insert(k.var);
      }
      leaf_vars(k, ints);
    }
  }

  bool conditions_hold(const Env& env) const {
    for (const Cond& c : body_->conds) {
      auto args = resolve(env, c.args);
      if (!find_condition(c.name)->check(env, args)) return false;
    }
    return true;
  }

  // Adds the right side's node for `p`; nullopt when it does not type-check
  // (or, for the top node, when its type differs from `want`).
  std::optional<Id> build(TensorEGraph& g, const Pat& p, const Binding& b, const Env& env,
                          const ir::TensorType* want) const {
    TensorContext& ctx = g.analysis().context();
    // A right side that is a bare variable or literal must have the matched
    // class's type too: `(reshape ?x ?s) => ?x` holds only where ?s keeps the shape.
    auto typed = [&](Id id) -> std::optional<Id> {
      if (want && g[id].data.type != *want) return std::nullopt;
      return id;
    };
    switch (p.kind) {
      case Pat::Kind::Var: {
        if (const Id* bound = b.tensors.find(p.var)) return typed(*bound);
        auto v = env.attrs.at(p.var);
        if (!v) return std::nullopt;
        return typed(g.add(TensorNode::constant(constant(ctx, literal_tensor(*v, true)))));
      }
      case Pat::Kind::Literal: return typed(g.add(TensorNode::constant(constant(ctx, literal_tensor(p.literal)))));
      case Pat::Kind::Op: break;
    }
    std::vector<Id> kids;
    for (const Pat& k : p.kids) {
      auto id = build(g, k, b, env, nullptr);
      if (!id) return std::nullopt;
      kids.push_back(*id);
    }
    int64_t rank = kids.empty() ? -1 : g[kids[0]].data.type.shape.rank();
    NodeAttrs na;
    na.output = static_cast<std::uint16_t>(p.out);
    na.num_outputs = static_cast<std::uint16_t>(p.nout.value_or(1));
    for (const AttrPat& a : p.attrs) {
      if (a.name == "*") {
        for (const auto& [name, value] : b.rests.at(a.var).entries()) na.attrs.set(name, value);
        continue;
      }
      std::optional<Literal> v;
      if (!a.is_var)
        v = a.literal;
      else
        v = env.attrs.at(a.var);
      if (!v) continue;  // absent stays absent
      auto def = ir::attr_default(p.op, a.name, rank);
      if (def && literal_equal(*def, *v)) continue;  // the canonical form omits defaults
      na.attrs.set(a.name, coerce(p.op, a.name, *v));
    }
    TensorNode node{static_cast<std::uint32_t>(p.op), ctx.intern(std::move(na)), std::move(kids)};
    auto data = g.analysis().infer(g, node);
    if (!data) return std::nullopt;
    // The rule holds for every shape: a right side that knows less than the
    // class ("batch"x?x64 for "batch"x"seq"x64) is the same value, and the
    // union keeps the more precise type. Only a contradiction is refused.
    if (want && !ir::refine(data->type, *want)) return std::nullopt;
    return g.add(std::move(node));
  }

  std::size_t apply(TensorEGraph& g, Id root, egraph::Subst s, const egraph::VarTable& vars) const {
    Binding b0;
    for (std::size_t i = 0; i < vars.size(); ++i) {
      const std::string& name = vars.name(egraph::make_var(i));
      if (name.starts_with("?#")) continue;  // a literal's hidden variable
      Id id = s[egraph::make_var(i)];
      if (id != egraph::kInvalidId) b0.tensors.set(name, g.find(id));
    }
    // A single left side may name its root (`?y = (conv ...)`) to read the
    // matched class's facts: the search binds no variable for it.
    if (body_->lhs.size() == 1 && !body_->lhs[0].first.empty())
      b0.tensors.set(body_->lhs[0].first, g.find(root));
    std::vector<Todo> todo;
    for (const auto& [root_var, pat] : body_->lhs)
      todo.push_back(Todo{&pat, root_var.empty() ? root : b0.tensors.at(root_var), -1, 0});
    std::vector<Binding> found;
    // With explanations on, the e-nodes match f took: taken[taken_end[f - 1], taken_end[f]).
    std::vector<Matched> taken;
    std::vector<std::size_t> taken_end;
    Resolved resolved;
    if (first_is_all_)
      for (const auto& [root_var, pat] : body_->lhs)
        for (const Pat& k : pat.kids) class_of(g, k, b0, resolved);
    auto take = [&](Binding& b) {
      // Bindings that differ only in the e-nodes they took build the same
      // right side: one is enough (a multi-pattern whose shared sub-terms
      // each match through several equal e-nodes finds thousands).
      for (const Binding& seen : found)
        if (same_variables(seen, b)) return first_is_all_;
      if (g.explanations_enabled()) {
        taken.insert(taken.end(), b.nodes.begin(), b.nodes.end());
        taken_end.push_back(taken.size());
      }
      std::vector<Matched> nodes = std::move(b.nodes);  // kept in `taken`
      found.push_back(b);
      b.nodes = std::move(nodes);
      return first_is_all_;
    };
    solve(g, todo, b0, resolved, take);
    if (found.empty() && !resolved.empty()) solve(g, todo, b0, {}, take);
    // The premises of matches first_read.. (why[why_end[k - 1], why_end[k]) for
    // match first_read + k), read from `taken` when the first match passes its
    // conditions: before anything changes the e-graph, while the e-nodes are
    // where solve saw them; matches that fail theirs before cost nothing.
    auto slice = [](const auto& v, const std::vector<std::size_t>& end, std::size_t k) {
      std::size_t from = k == 0 ? 0 : end[k - 1];
      return std::span(v).subspan(from, end[k] - from);
    };
    std::vector<egraph::Premise> why;
    std::vector<std::size_t> why_end;
    std::vector<Id> owner;
    std::size_t first_read = found.size();
    std::size_t changed = 0;
    for (std::size_t f = 0; f < found.size(); ++f) {
      const Binding& b = found[f];
      Env env;
      if (!floating(g, b) || !environment(g, b, env) || !conditions_hold(env)) continue;
      if (!taken_end.empty() && first_read == found.size()) {
        first_read = f;
        for (std::size_t k = f; k < found.size(); ++k) {
          premises(g, slice(taken, taken_end, k), owner, why);
          why_end.push_back(why.size());
        }
      }
      std::vector<std::pair<Id, Id>> unions;
      bool ok = true;
      for (const auto& [root_var, pat] : body_->rhs) {
        Id target = g.find(root_var.empty() ? root : b.tensors.at(root_var));
        ir::TensorType want = g[target].data.type;
        auto id = build(g, pat, b, env, &want);
        if (!id) {
          ok = false;
          break;
        }
        unions.emplace_back(target, *id);
      }
      if (!ok) continue;
      std::span<const egraph::Premise> needed;
      if (!why_end.empty()) needed = slice(why, why_end, f - first_read);
      for (auto [a, c] : unions) changed += g.merge_because(a, c, name_, true, needed);
    }
    return changed;
  }

 private:
  // An attribute value in the kind the op table declares (an int literal for a float attribute).
  static Literal coerce(ir::Op op, std::string_view name, const Literal& v) {
    for (const auto& spec : ir::op_info(op).attrs) {
      if (spec.name != name) continue;
      if (spec.kind == ir::AttrKind::Float)
        if (auto* i = std::get_if<int64_t>(&v)) return Literal(static_cast<float>(*i));
      if (spec.kind == ir::AttrKind::Int)
        if (auto* f = std::get_if<float>(&v)) return Literal(static_cast<int64_t>(*f));
    }
    return v;
  }

  // The index of a constant holding `t` in this context (made once and reused).
  std::uint32_t constant(TensorContext& ctx, ir::Tensor t) const {
    // Keyed by the tensor's hash (dtype, dims and bytes), checked bitwise on
    // a hit: a key of the bytes themselves copied each weight a let computes
    // three times and kept it (resnet18_p40's optimize: 12% of its samples,
    // 4.9 -> 3.6 s).
    std::pair<const TensorContext*, std::uint64_t> key{&ctx, t.hash()};
    auto it = cache_.find(key);
    if (it != cache_.end() && it->second < ctx.num_constants() && ctx.constant(it->second).tensor->bitwise_equal(t))
      return it->second;
    // Another rule (or the model) may hold the same small constant already:
    // one index keeps equal constants in one e-class, so the right sides of
    // two rules that compute the same shape or scalar meet.
    if (t.numel() <= kShareConstantsUpTo)
      for (std::uint32_t i = 0; i < ctx.num_constants(); ++i)
        if (ctx.constant(i).tensor && ctx.constant(i).tensor->bitwise_equal(t)) {
          cache_[key] = i;
          return i;
        }
    auto ref = std::make_shared<const ir::Tensor>(std::move(t));
    std::uint32_t idx = ctx.add_constant({fmt::format("{}.c{}", name_, ctx.num_constants()), ref, std::nullopt, {}});
    cache_[key] = idx;
    return idx;
  }

  static constexpr int64_t kShareConstantsUpTo = 64;  // elements: rules make shapes, axes and scalars
  std::string name_;
  std::shared_ptr<const RuleBody> body_;
  std::set<std::string> value_vars_;  // tensor variables outside integer positions
  // The match binds every tensor variable of the left side (the search, all
  // of the skeleton's; apply, a single side's named root). Where no
  // attribute is open either, every solution binds the same variables and
  // builds the same right sides: the first is enough. (mul-neg-neg in
  // densenet121's classes of 3,000 products scanned them for each match.)
  bool first_is_all_ = true;
  mutable std::map<std::pair<const TensorContext*, std::uint64_t>, std::uint32_t> cache_;
};

namespace {

using LiteralCheck = egraph::VarCheck<TensorNode, egraph::tensor::TensorAnalysis>;

// The left side's pattern for the search: operators without attributes
// (the applier's solve matches those), and each literal a variable of its
// own that the search checks by value (`constant_matches`, as solve does).
egraph::Id skeleton(const Pat& p, egraph::VarTable& vars, egraph::PatternAst<TensorNode>& ast,
                    std::vector<LiteralCheck>& literals) {
  switch (p.kind) {
    case Pat::Kind::Var: return ast.add_var(vars.intern(p.var));
    case Pat::Kind::Literal: {
      egraph::Var v = vars.intern(fmt::format("?#{}", literals.size()));
      literals.push_back({v, [lit = p.literal](const TensorEGraph& g, Id c) {
                            return constant_matches(g[c].data, lit);
                          }});
      return ast.add_var(v);
    }
    case Pat::Kind::Op: break;
  }
  std::vector<Id> kids;
  for (const Pat& k : p.kids) kids.push_back(skeleton(k, vars, ast, literals));
  return ast.add_node(TensorNode{static_cast<std::uint32_t>(p.op), TensorNode::kAnyPayload, std::move(kids)});
}

}  // namespace

TensorRewrite compile_rule(const Rule& rule) {
  egraph::VarTable vars;
  std::vector<std::pair<egraph::Var, egraph::PatternAst<TensorNode>>> lhs;
  std::vector<LiteralCheck> literals;
  for (const auto& [root_var, pat] : rule.body->lhs) {
    egraph::PatternAst<TensorNode> ast;
    skeleton(pat, vars, ast, literals);
    egraph::Var root = root_var.empty() ? egraph::Var{} : vars.intern(root_var);
    lhs.emplace_back(root, std::move(ast));
  }
  auto compiled = std::make_shared<const CompiledRule>(rule.name, rule.body);
  auto table = std::make_shared<egraph::VarTable>(vars);
  egraph::CustomApplier<TensorNode, egraph::tensor::TensorAnalysis> applier{
      rule.name,
      [compiled, table](TensorEGraph& g, Id root, egraph::Subst s) { return compiled->apply(g, root, s, *table); }};
  auto rw = TensorRewrite::make_custom_ast(rule.name, vars, std::move(lhs), rule.multi, std::move(applier),
                                          std::move(literals));
  assert(rw.has_value());  // a checked rule binds every variable it uses
  return std::move(*rw);
}

}  // namespace refinery::rules
