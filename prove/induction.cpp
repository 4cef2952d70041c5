// Induction over time for rules on the NIR primitives (prove/induction.h).
#include "prove/induction.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>

#include "ir/spiking.h"
#include "prove/z3/budget.h"
#include "prove/z3/symbolic.h"

namespace refinery::prove {
namespace {

struct Mode {
  bool exact, subtract;
  std::string name() const { return fmt::format("{}/{}", exact ? "exact" : "euler", subtract ? "subtract" : "zero"); }
};

// The modes a rule claims (`:dynamics`, docs/rules.md): both discretisations
// and both resets unless it names some.
std::vector<Mode> claimed_modes(const rules::RuleBody& body) {
  auto names = [&](std::initializer_list<const char*> of) {
    std::vector<std::string> out;
    for (const char* n : of)
      if (std::find(body.dynamics.begin(), body.dynamics.end(), n) != body.dynamics.end()) out.push_back(n);
    return out;
  };
  auto disc = names({"euler", "exact"}), reset = names({"zero", "subtract"});
  if (disc.empty()) disc = {"euler", "exact"};
  if (reset.empty()) reset = {"zero", "subtract"};
  std::vector<Mode> out;
  for (const auto& d : disc)
    for (const auto& r : reset) out.push_back({d == "exact", r == "subtract"});
  return out;
}

struct StatefulNode {
  std::string name;
  ir::Op op;
  std::vector<int64_t> shape;
};

std::vector<StatefulNode> stateful_nodes(const ir::Graph& g) {
  std::vector<StatefulNode> out;
  for (const ir::Node& n : g.nodes())
    if (ir::op_info(n.op).stateful) out.push_back({n.name, n.op, g.value(n.outputs[0]).type.shape.sizes()});
  return out;
}

bool is_cuba(ir::Op op) { return op == ir::Op::CubaLI || op == ir::Op::CubaLIF; }

using States = std::map<std::string, std::vector<SymTensor>>;

States fresh_states(SymDomain& d, const std::vector<StatefulNode>& nodes, const std::string& tag) {
  States s;
  for (const auto& n : nodes) {
    int64_t size = 1;
    for (int64_t x : n.shape) size *= x;
    for (const char* comp : {"v", "i"}) {
      if (comp[0] == 'i' && !is_cuba(n.op)) break;
      SymTensor t{n.shape, {}, nullptr};
      for (int64_t k = 0; k < size; ++k) t.elems.push_back(d.var(fmt::format("{}.{}.{}#{}", tag, n.name, comp, k)));
      s[n.name].push_back(std::move(t));
    }
  }
  return s;
}

States zero_states(SymDomain& d, const States& like) {
  States z = like;
  for (auto& [name, comps] : z)
    for (auto& t : comps)
      for (auto& e : t.elems) e = d.num(0);
  return z;
}

// One side's step: its outputs, its states after, its thresholds, what it needs defined.
struct Step {
  std::vector<SymTensor> out;
  States after;
  std::map<std::string, SymTensor> threshold;
  std::vector<z3::expr> defined;
};

std::expected<Step, std::string> step(const ir::Graph& g, const std::vector<SymTensor>& ins, const States& before,
                                      SymDomain& d, SpikingStep& st) {
  st.before = before;
  st.after.clear();
  st.thresholds.clear();
  d.defined.clear();
  auto out = eval_symbolic(g, ins, d);
  if (!out) return std::unexpected(out.error().str());
  Step s{std::move(*out), std::move(st.after), std::move(st.thresholds), std::move(d.defined)};
  d.defined.clear();
  return s;
}

// A candidate relation between the left side's states and the right side's,
// paired in node order (a pair of different neurons relates v only). Where
// a population is smaller on one side (a dead-neuron rule keeps its first
// neurons), the neurons past the other side's are unpaired: free, or with
// `rest`, at rest (every state 0).
struct Relation {
  std::string name;
  std::function<z3::expr(SymDomain&, const z3::expr& l, const z3::expr& r, const z3::expr& th_l,
                         const z3::expr& th_r)>
      elem;
  bool rest = false;
};

const std::vector<Relation>& relations() {
  static const std::vector<Relation> kRelations{
      {"equal states", [](SymDomain&, const z3::expr& l, const z3::expr& r, const z3::expr&,
                          const z3::expr&) { return l == r; }},
      {"states scaled by the thresholds' ratio (v_R * th_L = v_L * th_R)",
       [](SymDomain& d, const z3::expr& l, const z3::expr& r, const z3::expr& tl, const z3::expr& tr) {
         return d.mul(r, tl) == d.mul(l, tr);
       }},
      {"equal states, the unpaired neurons at rest",
       [](SymDomain&, const z3::expr& l, const z3::expr& r, const z3::expr&, const z3::expr&) { return l == r; },
       true},
  };
  return kRelations;
}

z3::expr relate(SymDomain& d, const Relation& rel, const std::vector<StatefulNode>& ln,
                const std::vector<StatefulNode>& rn, const States& ls, const States& rs, const Step& lstep,
                const Step& rstep) {
  z3::expr all = d.ctx().bool_val(true);
  if (ln.size() != rn.size()) return all;  // unpaired: the states are free
  for (size_t p = 0; p < ln.size(); ++p) {
    const auto& lc = ls.at(ln[p].name);
    const auto& rc = rs.at(rn[p].name);
    size_t comps = ln[p].op == rn[p].op ? lc.size() : 1;
    auto lt = lstep.threshold.find(ln[p].name), rt = rstep.threshold.find(rn[p].name);
    for (size_t c = 0; c < comps; ++c)
      for (size_t e = 0; e < lc[c].elems.size() && e < rc[c].elems.size(); ++e) {
        z3::expr one = d.num(1);
        const z3::expr& tl = lt != lstep.threshold.end() ? lt->second.elems[e] : one;
        const z3::expr& tr = rt != rstep.threshold.end() ? rt->second.elems[e] : one;
        all = all && rel.elem(d, lc[c].elems[e], rc[c].elems[e], tl, tr);
      }
    if (rel.rest)
      for (const auto* side : {&lc, &rc})
        for (const SymTensor& t : *side)
          for (size_t e = std::min(lc.front().elems.size(), rc.front().elems.size()); e < t.elems.size(); ++e)
            all = all && t.elems[e] == d.num(0);
  }
  return all;
}

z3::expr outputs_equal(SymDomain& d, const Step& l, const Step& r) {
  z3::expr all = d.ctx().bool_val(true);
  for (size_t o = 0; o < l.out.size(); ++o)
    for (size_t e = 0; e < l.out[o].elems.size(); ++e) all = all && l.out[o].elems[e] == r.out[o].elems[e];
  return all;
}

z3::expr conj(z3::context& c, const std::vector<z3::expr>& v) {
  z3::expr all = c.bool_val(true);
  for (const auto& e : v) all = all && e;
  return all;
}

// Symbolic inputs with the rule's value conditions.
std::vector<SymTensor> inputs(const Instance& inst, SymDomain& d, const std::string& tag,
                              std::vector<z3::expr>& constraints) {
  std::vector<SymTensor> ins;
  for (size_t i = 0; i < inst.inputs.size(); ++i) {
    const ir::Value& v = inst.lhs.value(inst.lhs.inputs()[i]);
    SymTensor t{v.type.shape.sizes(), {}, nullptr};
    const int64_t numel = v.type.shape.num_elements().value_or(0);
    for (int64_t k = 0; k < numel; ++k) {
      z3::expr e = d.var(fmt::format("{}{}#{}", tag, inst.inputs[i], k));
      rules::ValueCond c = inst.input_conds[i];
      // element k belongs to neuron k / (elements per neuron) (axis 0)
      const int64_t n = v.type.shape.rank() >= 1 ? v.type.shape[0].size() : 1;
      d.assume(c, e, rules::verification_pruned_element(k, numel, n), constraints);
      if (has(c, rules::ValueCond::Step) && d.step != nullptr) constraints.push_back(e == d.step->dt);
      if (has(c, rules::ValueCond::Uniform) && k > 0) constraints.push_back(e == t.elems.front());
      t.elems.push_back(e);
    }
    ins.push_back(std::move(t));
  }
  return ins;
}


// Every application of an uninterpreted function (inv, exp) becomes a fresh
// real constant, one per distinct argument term: the goal is then plain
// nonlinear real arithmetic, which Z3's nlsat decides, where a mix with
// functions times out. A proof without the functions' consistency across
// different terms holds with it too; a model may not (unroll keeps them).
// With `consistent`, the functions' consistency is kept (Ackermann: equal
// arguments give equal values), and exp's range (positive, below 1 for a
// negative argument), so that a model is one of real functions.
void eliminate_functions(z3::context& ctx, std::vector<z3::expr>& assertions, bool consistent = false) {
  z3::expr_vector from(ctx), to(ctx);
  std::set<unsigned> seen;
  std::vector<z3::expr> todo(assertions.begin(), assertions.end());
  while (!todo.empty()) {
    z3::expr e = todo.back();
    todo.pop_back();
    if (!seen.insert(e.id()).second || !e.is_app()) continue;
    for (unsigned k = 0; k < e.num_args(); ++k) todo.push_back(e.arg(k));
    if (e.decl().decl_kind() == Z3_OP_UNINTERPRETED && e.num_args() > 0) {
      from.push_back(e);
      to.push_back(ctx.real_const(fmt::format("{}@{}", e.decl().name().str(), from.size()).c_str()));
    }
  }
  if (from.empty()) return;
  for (auto& a : assertions) a = a.substitute(from, to);
  if (!consistent) return;
  for (unsigned i = 0; i < from.size(); ++i) {
    z3::expr ai = from[i].arg(0).substitute(from, to);
    if (from[i].decl().name().str() == "exp") {
      assertions.push_back(to[i] > 0);
      assertions.push_back(z3::implies(ai < 0, to[i] < 1));
    }
    for (unsigned j = 0; j < i; ++j)
      if (z3::eq(from[i].decl(), from[j].decl()))
        assertions.push_back(z3::implies(ai == from[j].arg(0).substitute(from, to), to[i] == to[j]));
  }
}

bool check_unsat(z3::context& ctx, std::vector<z3::expr> assertions, unsigned timeout_ms, std::string& unknown,
                 bool& sat) {
  eliminate_functions(ctx, assertions);
  z3::solver s(ctx, "QF_NRA");
  for (const auto& a : assertions) s.add(a);
  Budget budget(ctx, timeout_ms);
  auto res = budget.check(s, unknown);
  sat = res == z3::sat;
  return res == z3::unsat;
}

enum class Outcome { Proved, Failed, Unknown, Error };

struct Attempt {
  Outcome outcome = Outcome::Error;
  std::string detail;
};

// Base case and inductive step of one relation at one instance and mode.
Attempt try_relation(const Instance& inst, const Mode& mode, const Relation& rel, unsigned timeout_ms) {
  z3::context ctx;
  SymDomain d(ctx, false);
  SpikingStep st{.exact = mode.exact, .subtract = mode.subtract, .dt = ctx.real_const("dt")};
  d.step = &st;
  std::vector<z3::expr> constraints{ctx.real_val(0) < st.dt};
  auto ins = inputs(inst, d, "", constraints);
  auto ln = stateful_nodes(inst.lhs), rn = stateful_nodes(inst.rhs);
  States ls = fresh_states(d, ln, "L"), rs = fresh_states(d, rn, "R");
  auto l = step(inst.lhs, ins, ls, d, st);
  if (!l) return {Outcome::Error, "left side: " + l.error()};
  auto r = step(inst.rhs, ins, rs, d, st);
  if (!r) return {Outcome::Error, "right side: " + r.error()};
  std::vector<z3::expr> common(constraints);
  for (const auto& f : d.facts) common.push_back(f);
  for (const auto& [nonzero, inverse] : d.inverses) common.push_back(z3::implies(nonzero, inverse));
  common.push_back(conj(ctx, l->defined));
  std::string unknown;
  bool sat = false;
  // Base: all states start at zero.
  std::vector<z3::expr> base(common);
  base.push_back(!relate(d, rel, ln, rn, zero_states(d, ls), zero_states(d, rs), *l, *r));
  if (!check_unsat(ctx, base, timeout_ms, unknown, sat))
    return sat ? Attempt{Outcome::Failed, "does not hold at t = 0"} : Attempt{Outcome::Unknown, "t = 0: " + unknown};
  // Step: relation before, the left side defined => outputs equal, the right side defined, relation after.
  // Each conjunct of the goal on its own (the assumptions all kept): the
  // elements of a population are independent, and Z3 decides several small
  // nonlinear goals where their conjunction times out.
  std::vector<z3::expr> ind(common);
  ind.push_back(relate(d, rel, ln, rn, ls, rs, *l, *r));
  std::vector<z3::expr> goals;
  auto split = [&](const z3::expr& g) {
    if (g.is_app() && g.decl().decl_kind() == Z3_OP_AND)
      for (unsigned k = 0; k < g.num_args(); ++k) goals.push_back(g.arg(k));
    else
      goals.push_back(g);
  };
  split(outputs_equal(d, *l, *r).simplify());
  for (const auto& e : r->defined) split(e);
  split(relate(d, rel, ln, rn, l->after, r->after, *l, *r).simplify());
  for (const z3::expr& g : goals) {
    if (g.is_true()) continue;
    std::vector<z3::expr> q(ind);
    q.push_back(!g);
    if (check_unsat(ctx, q, timeout_ms, unknown, sat)) continue;
    return sat ? Attempt{Outcome::Failed, "not preserved by a step"} : Attempt{Outcome::Unknown, unknown};
  }
  return {Outcome::Proved, ""};
}

// From zero state, `steps` steps on symbolic inputs (the same parameters
// throughout): a model where some output differs refutes the rule.
Attempt unroll(const Instance& inst, const Mode& mode, int steps, unsigned timeout_ms) {
  z3::context ctx;
  SymDomain d(ctx, false);
  SpikingStep st{.exact = mode.exact, .subtract = mode.subtract, .dt = ctx.real_const("dt")};
  d.step = &st;
  std::vector<z3::expr> constraints{ctx.real_val(0) < st.dt};
  auto params = inputs(inst, d, "", constraints);
  auto ln = stateful_nodes(inst.lhs), rn = stateful_nodes(inst.rhs);
  States ls = zero_states(d, fresh_states(d, ln, "L")), rs = zero_states(d, fresh_states(d, rn, "R"));
  std::vector<z3::expr> defined, differs;
  std::vector<std::pair<std::string, z3::expr>> shown;
  for (int t = 0; t < steps; ++t) {
    // The rule's first tensor variable is the input that changes per step
    // (the op's operand 0); the others are parameters.
    std::vector<z3::expr> c2;
    auto ins = params;
    auto fresh = inputs(inst, d, fmt::format("t{}:", t), c2);
    if (!ins.empty()) ins[0] = fresh[0];
    for (const auto& e : ins.empty() ? std::vector<z3::expr>{} : ins[0].elems) shown.emplace_back(e.to_string(), e);
    auto l = step(inst.lhs, ins, ls, d, st);
    if (!l) return {Outcome::Error, "left side: " + l.error()};
    auto r = step(inst.rhs, ins, rs, d, st);
    if (!r) return {Outcome::Error, "right side: " + r.error()};
    defined.insert(defined.end(), l->defined.begin(), l->defined.end());
    differs.push_back(!outputs_equal(d, *l, *r));
    ls = l->after;
    rs = r->after;
  }
  std::vector<z3::expr> q(constraints);
  for (const auto& f : d.facts) q.push_back(f);
  for (const auto& [nonzero, inverse] : d.inverses) q.push_back(z3::implies(nonzero, inverse));
  q.push_back(conj(ctx, defined));
  z3::expr any = ctx.bool_val(false);
  for (const auto& e : differs) any = any || e;
  q.push_back(any);
  eliminate_functions(ctx, q, true);
  z3::solver s(ctx, "QF_NRA");
  for (const auto& a : q) s.add(a);
  Budget budget(ctx, timeout_ms);
  std::string why;
  auto res = budget.check(s, why);
  if (res == z3::unsat) return {Outcome::Unknown, ""};
  if (res == z3::unknown) return {Outcome::Unknown, why};
  z3::model m = s.get_model();
  auto show = [&](const z3::expr& e) {
    z3::expr v = m.eval(e, true);
    return v.is_numeral() ? v.get_decimal_string(6) : v.to_string();
  };
  std::string detail = fmt::format("dt = {}", show(st.dt));
  for (size_t i = 1; i < inst.inputs.size(); ++i) {
    std::vector<std::string> vals;
    for (const auto& e : params[i].elems) vals.push_back(show(e));
    detail += fmt::format("; {} = [{}]", inst.inputs[i], fmt::join(vals, " "));
  }
  std::vector<std::string> in;
  for (const auto& [name, e] : shown) in.push_back(show(e));
  detail += fmt::format("; {} per step [{}]; the outputs differ within {} steps",
                        inst.inputs.empty() ? "" : inst.inputs[0], fmt::join(in, " "), steps);
  return {Outcome::Failed, detail};
}

// Whether the paired neurons' thresholds are the same terms on both sides:
// then equal states are tried first, else the scaled relation (a failed
// candidate costs a Z3 query, often up to its timeout).
bool same_thresholds(const Instance& inst) {
  z3::context ctx;
  SymDomain d(ctx, false);
  SpikingStep st{.exact = false, .subtract = false, .dt = ctx.real_const("dt")};
  d.step = &st;
  std::vector<z3::expr> constraints;
  auto ins = inputs(inst, d, "", constraints);
  auto ln = stateful_nodes(inst.lhs), rn = stateful_nodes(inst.rhs);
  auto l = step(inst.lhs, ins, fresh_states(d, ln, "L"), d, st);
  auto r = step(inst.rhs, ins, fresh_states(d, rn, "R"), d, st);
  if (!l || !r || ln.size() != rn.size()) return true;
  for (size_t p = 0; p < ln.size(); ++p) {
    auto lt = l->threshold.find(ln[p].name), rt = r->threshold.find(rn[p].name);
    if ((lt == l->threshold.end()) != (rt == r->threshold.end())) return false;
    if (lt == l->threshold.end()) continue;
    for (size_t e = 0; e < std::min(lt->second.elems.size(), rt->second.elems.size()); ++e)
      if (!z3::eq(lt->second.elems[e].simplify(), rt->second.elems[e].simplify())) return false;
  }
  return true;
}

// Whether some neuron population has fewer neurons on one side (paired in
// node order): a rule that prunes neurons.
bool unequal_populations(const Instance& inst) {
  auto ln = stateful_nodes(inst.lhs), rn = stateful_nodes(inst.rhs);
  if (ln.size() != rn.size()) return false;
  for (size_t p = 0; p < ln.size(); ++p)
    if (ln[p].shape != rn[p].shape) return true;
  return false;
}

// Rules whose only state is delays: such a graph has finite memory. With
// each delay's length fixed at k steps (a case: the delay rounds to k), an
// output at step t >= K (the longest k) is the same function of the inputs
// of steps t - K .. t as at step K, and before K the registers still hold
// zeros. So both sides run from zero state for K + 1 steps on fresh
// symbolic inputs: outputs equal at every one of them (the right side
// defined) proves the case for every step and every input sequence; a
// model where some output differs refutes the rule. Every assignment of
// 0 .. kMaxDelaySteps steps to the delay nodes of both sides is a case.
constexpr int64_t kMaxDelaySteps = 2;

bool only_delays(const Instance& inst, bool& any) {
  any = false;
  bool only = true;
  for (const ir::Graph* g : {&inst.lhs, &inst.rhs})
    for (const auto& n : stateful_nodes(*g)) {
      any |= n.op == ir::Op::Delay;
      only &= n.op == ir::Op::Delay;
    }
  return only;
}

Attempt delay_case(const Instance& inst, const std::vector<int64_t>& lk, const std::vector<int64_t>& rk,
                   unsigned timeout_ms) {
  z3::context ctx;
  SymDomain d(ctx, false);
  SpikingStep st{.exact = false, .subtract = false, .dt = ctx.real_const("dt")};
  d.step = &st;
  std::vector<z3::expr> constraints{ctx.real_val(0) < st.dt};
  auto params = inputs(inst, d, "", constraints);
  auto ln = stateful_nodes(inst.lhs), rn = stateful_nodes(inst.rhs);
  auto registers = [&](const std::vector<StatefulNode>& nodes, const std::vector<int64_t>& ks) {
    States s;
    std::map<std::string, int64_t> steps;
    for (size_t n = 0; n < nodes.size(); ++n) {
      SymTensor zero{nodes[n].shape, {}, nullptr};
      int64_t size = 1;
      for (int64_t x : nodes[n].shape) size *= x;
      zero.elems.assign(static_cast<size_t>(size), d.num(0));
      s[nodes[n].name].assign(static_cast<size_t>(ks[n]), zero);
      steps[nodes[n].name] = ks[n];
    }
    return std::pair{s, steps};
  };
  auto [ls, lsteps] = registers(ln, lk);
  auto [rs, rsteps] = registers(rn, rk);
  int64_t horizon = 1;
  for (const auto* ks : {&lk, &rk})
    for (int64_t k : *ks) horizon = std::max(horizon, k + 1);
  std::vector<z3::expr> assumed, goals;
  std::vector<z3::expr> shown;
  for (int64_t t = 0; t < horizon; ++t) {
    std::vector<z3::expr> unused;
    auto ins = params;
    auto fresh = inputs(inst, d, fmt::format("t{}:", t), unused);
    if (!ins.empty()) ins[0] = fresh[0];
    if (!ins.empty()) shown.insert(shown.end(), ins[0].elems.begin(), ins[0].elems.end());
    st.delay_steps = lsteps;
    auto l = step(inst.lhs, ins, ls, d, st);
    if (!l) return {Outcome::Error, "left side: " + l.error()};
    st.delay_steps = rsteps;
    auto r = step(inst.rhs, ins, rs, d, st);
    if (!r) return {Outcome::Error, "right side: " + r.error()};
    assumed.insert(assumed.end(), l->defined.begin(), l->defined.end());
    goals.insert(goals.end(), r->defined.begin(), r->defined.end());
    goals.push_back(outputs_equal(d, *l, *r));
    ls = l->after;
    rs = r->after;
  }
  std::vector<z3::expr> q(constraints);
  for (const auto& f : d.facts) q.push_back(f);
  for (const auto& [nonzero, inverse] : d.inverses) q.push_back(z3::implies(nonzero, inverse));
  q.insert(q.end(), assumed.begin(), assumed.end());
  if (!st.same_length.empty()) {  // the case covers a population of one length only
    std::vector<z3::expr> one_length(q);
    one_length.push_back(!conj(ctx, st.same_length));
    std::string unknown;
    bool sat = false;
    if (!check_unsat(ctx, one_length, timeout_ms, unknown, sat))
      return {Outcome::Error,
              "a delay whose elements may round to different lengths is not modelled: the rule needs (scalar ?d) or a "
              "condition that gives them one length"};
  }
  q.push_back(!conj(ctx, goals));
  eliminate_functions(ctx, q, true);
  z3::solver s(ctx, "QF_NRA");
  for (const auto& a : q) s.add(a);
  Budget budget(ctx, timeout_ms);
  std::string why;
  auto res = budget.check(s, why);
  if (res == z3::unsat) return {Outcome::Proved, ""};
  if (res == z3::unknown) return {Outcome::Unknown, why};
  z3::model m = s.get_model();
  auto show = [&](const z3::expr& e) {
    z3::expr v = m.eval(e, true);
    return v.is_numeral() ? v.get_decimal_string(6) : v.to_string();
  };
  std::string detail = fmt::format("delays of [{}] steps on the left, [{}] on the right; dt = {}", fmt::join(lk, " "),
                                   fmt::join(rk, " "), show(st.dt));
  for (size_t i = 1; i < inst.inputs.size(); ++i) {
    std::vector<std::string> vals;
    for (const auto& e : params[i].elems) vals.push_back(show(e));
    detail += fmt::format("; {} = [{}]", inst.inputs[i], fmt::join(vals, " "));
  }
  std::vector<std::string> in;
  for (const auto& e : shown) in.push_back(show(e));
  detail += fmt::format("; {} per step [{}]; the outputs differ within {} steps",
                        inst.inputs.empty() ? "" : inst.inputs[0], fmt::join(in, " "), horizon);
  return {Outcome::Failed, detail};
}

// Every case of every instance (prove_by_induction's verdicts).
void prove_delays(const std::vector<Instance>& insts, const VerifyOptions& opt, RuleReport& r) {
  int64_t cases = 0;
  for (const Instance& inst : insts) {
    if (inst.empty) continue;
    const size_t nl = stateful_nodes(inst.lhs).size(), n = nl + stateful_nodes(inst.rhs).size();
    std::vector<int64_t> ks(n, 0);
    for (;;) {
      std::vector<int64_t> lk(ks.begin(), ks.begin() + static_cast<std::ptrdiff_t>(nl)),
          rk(ks.begin() + static_cast<std::ptrdiff_t>(nl), ks.end());
      Attempt a = delay_case(inst, lk, rk, opt.timeout_ms);
      ++cases;
      if (a.outcome == Outcome::Error) {
        r.verdict = Verdict::Error;
        r.message = fmt::format("at {}: {}", inst.describe, a.detail);
        return;
      }
      if (a.outcome == Outcome::Failed) {
        r.verdict = Verdict::Refuted;
        r.domain = "reals";
        r.counterexample = fmt::format("at {}: {}", inst.describe, a.detail);
        return;
      }
      if (a.outcome == Outcome::Unknown) {
        r.verdict = Verdict::Unknown;
        r.domain = "reals";
        r.message = fmt::format("at {}: Z3: {}", inst.describe, a.detail);
        return;
      }
      size_t i = 0;
      while (i < n && ++ks[i] > kMaxDelaySteps) ks[i++] = 0;
      if (i == n) break;
    }
  }
  r.verdict = Verdict::ProvedReals;
  r.message = fmt::format(
      "by unrolling a finite memory: every delay of 0 to {} steps ({} cases), each run from zero state to its longest "
      "delay; any discretisation and reset",
      kMaxDelaySteps, cases);
}

}  // namespace

bool needs_induction(const Instance& inst) {
  for (const ir::Graph* g : {&inst.lhs, &inst.rhs})
    for (const ir::Node& n : g->nodes())
      if (ir::is_nir_op(n.op)) return true;
  return false;
}

void prove_by_induction(const rules::RuleBody& body, const std::vector<Instance>& insts, const VerifyOptions& opt,
                        RuleReport& r) {
  r.numeric = "skipped: induction over time (whole graphs are validated by simulation)";
  bool any_delay = false;
  for (const Instance& inst : insts) {
    bool any = false;
    if (inst.empty) continue;
    if (!only_delays(inst, any) && any) {
      r.verdict = Verdict::Error;
      r.message = fmt::format("at {}: a rule with a delay and a neuron is not modelled (only delays and stateless ops)",
                              inst.describe);
      return;
    }
    any_delay |= any;
  }
  if (any_delay) {
    prove_delays(insts, opt, r);
    return;
  }
  std::vector<std::string> how;
  std::vector<const Relation*> order;
  // Equal states first, or scaled ones where the thresholds differ; a
  // population pruned on one side first at rest (with populations of one
  // size, that relation is equal states again).
  const bool pruned = !insts.empty() && unequal_populations(insts.front());
  for (const Relation& rel : relations())
    if (!rel.rest || pruned) order.push_back(&rel);
  if (!insts.empty() && !same_thresholds(insts.front())) std::swap(order[0], order[1]);
  if (pruned) std::rotate(order.begin(), order.end() - 1, order.end());
  for (const Mode& mode : claimed_modes(body)) {
    std::string used;
    for (const Instance& inst : insts) {
      if (inst.empty) continue;
      std::string unknown;
      bool proved = false;
      for (const Relation* rel : order) {
        Attempt a = try_relation(inst, mode, *rel, opt.timeout_ms);
        if (a.outcome == Outcome::Error) {
          r.verdict = Verdict::Error;
          r.message = fmt::format("at {} ({}): {}", inst.describe, mode.name(), a.detail);
          return;
        }
        if (a.outcome == Outcome::Proved) {
          proved = true;
          used = rel->name;
          break;
        }
        if (a.outcome == Outcome::Unknown) unknown = a.detail;
      }
      if (proved) continue;
      Attempt u = unroll(inst, mode, 3, opt.timeout_ms);
      if (u.outcome == Outcome::Error) {
        r.verdict = Verdict::Error;
        r.message = u.detail;
        return;
      }
      if (u.outcome == Outcome::Failed) {
        r.verdict = Verdict::Refuted;
        r.domain = "reals";
        r.counterexample = fmt::format("at {} ({}): {}", inst.describe, mode.name(), u.detail);
        return;
      }
      r.verdict = Verdict::Unknown;
      r.domain = "reals";
      r.message = fmt::format("at {} ({}): no relation among the candidates is inductive{}", inst.describe,
                              mode.name(), unknown.empty() ? "" : " (Z3: " + unknown + ")");
      return;
    }
    how.push_back(fmt::format("{}: {}", mode.name(), used));
  }
  r.verdict = Verdict::ProvedReals;
  r.message = "by induction over time; " + fmt::format("{}", fmt::join(how, ", "));
}

}  // namespace refinery::prove
