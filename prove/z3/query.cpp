#include "prove/z3/query.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "prove/z3/symbolic.h"

namespace refinery::prove {

using namespace rules;

namespace {

using Clock = std::chrono::steady_clock;

std::vector<SymTensor> symbolic_inputs(const Instance& inst, SymDomain& d, std::vector<z3::expr>& constraints) {
  std::vector<SymTensor> ins;
  for (size_t i = 0; i < inst.inputs.size(); ++i) {
    const ir::Value& v = inst.lhs.value(inst.lhs.inputs()[i]);
    SymTensor t;
    t.shape = v.type.shape.sizes();
    int64_t n = v.type.shape.num_elements().value_or(0);
    for (int64_t k = 0; k < n; ++k) {
      z3::expr e = d.var(fmt::format("{}#{}", inst.inputs[i], k));
      if (d.fp32()) {
        constraints.push_back(!z3::expr(d.ctx(), Z3_mk_fpa_is_nan(d.ctx(), e)));
        constraints.push_back(!z3::expr(d.ctx(), Z3_mk_fpa_is_infinite(d.ctx(), e)));
      }
      switch (inst.input_conds[i]) {
        case ValueCond::Positive: constraints.push_back(d.num(0) < e); break;
        case ValueCond::NonNegative: constraints.push_back(d.num(0) <= e); break;
        case ValueCond::Nonzero: constraints.push_back(!(e == d.num(0))); break;
        case ValueCond::None: break;
      }
      t.elems.push_back(e);
    }
    ins.push_back(std::move(t));
  }
  return ins;
}

void add_axioms(const RuleBody& body, SymDomain& d, z3::solver& s) {
  for (const std::string& ax : body.axioms) {
    if (d.fp32()) continue;  // binary32 semantics has no axioms
    if (ax == "exp-pos") {
      auto apps = d.applications["exp"];
      for (const auto& a : apps) s.add(d.fn("exp", a) > d.num(0));
    }
    if (ax == "exp-add") {
      auto apps = d.applications["exp"];
      for (const auto& a : apps)
        for (const auto& b : apps) s.add(d.fn("exp", (a - b).simplify()) * d.fn("exp", b) == d.fn("exp", a));
    }
    auto sqrt_apps = d.applications["sqrt"];
    if (ax == "sqrt-sq")
      for (const auto& a : sqrt_apps) s.add(z3::implies(a >= d.num(0), d.fn("sqrt", a) * d.fn("sqrt", a) == a));
    if (ax == "sqrt-pos")
      for (const auto& a : sqrt_apps) s.add(z3::implies(a > d.num(0), d.fn("sqrt", a) > d.num(0)));
  }
}

std::string nested(const std::vector<int64_t>& shape, const std::vector<double>& v, size_t dim, size_t& pos) {
  if (dim == shape.size()) {
    double x = v[pos++];
    return fmt::format("{:g}", x);
  }
  std::vector<std::string> parts;
  for (int64_t i = 0; i < shape[dim]; ++i) parts.push_back(nested(shape, v, dim + 1, pos));
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

std::string show(const SymDomain& d, const z3::model& m, const std::string& name, const SymTensor& t) {
  std::vector<double> v;
  for (const auto& e : t.elems) v.push_back(d.value(m, e));
  size_t pos = 0;
  return fmt::format("{} = {}", name, nested(t.shape, v, 0, pos));
}

// Evaluates the binary32 difference on random finite inputs that meet the
// instance's conditions; the counterexample's text (inputs, both sides) when
// one differs.
std::optional<std::string> fp32_witness(SymDomain& d, const Instance& inst, const std::vector<SymTensor>& ins,
                                        const std::vector<SymTensor>& lhs, const std::vector<SymTensor>& rhs,
                                        const std::vector<z3::expr>& constraints, const z3::expr_vector& diffs) {
  std::mt19937_64 rng(0x5eed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f), mant(1.0f, 2.0f);
  // Five kinds of inputs: uniform in [-1, 1), moderate magnitudes, small
  // integers, {0, +-1, +-2} (exact cancellations show the sign of zero), and
  // extreme magnitudes (products that underflow to a signed zero or overflow).
  std::uniform_int_distribution<int> expo(-12, 12), wide(-140, 120), kind(0, 4), small(-4, 4), tiny(-2, 2);
  auto draw = [&](ValueCond c) {
    float x = 0;
    switch (kind(rng)) {
      case 0: x = unit(rng); break;
      case 1: x = std::ldexp(mant(rng), expo(rng)) * (unit(rng) < 0 ? -1.0f : 1.0f); break;
      case 2: x = static_cast<float>(small(rng)); break;
      case 3: x = static_cast<float>(tiny(rng)); break;
      default: x = std::ldexp(mant(rng), wide(rng)) * (unit(rng) < 0 ? -1.0f : 1.0f); break;
    }
    if (c == ValueCond::Positive || c == ValueCond::NonNegative) x = std::abs(x);
    if ((c == ValueCond::Positive || c == ValueCond::Nonzero) && x == 0) x = 0.75f;
    return x;
  };
  for (int trial = 0; trial < 128; ++trial) {
    z3::model m(d.ctx());
    for (size_t i = 0; i < ins.size(); ++i)
      for (const z3::expr& e : ins[i].elems) {
        z3::func_decl decl = e.decl();
        z3::expr v = d.ctx().fpa_val(draw(inst.input_conds[i]));
        m.add_const_interp(decl, v);
      }
    bool ok = true;
    for (const auto& c : constraints) ok = ok && m.eval(c, true).is_true();
    for (const auto& a : d.assumptions) ok = ok && m.eval(a, true).is_true();
    if (!ok) continue;
    for (unsigned k = 0; k < diffs.size(); ++k) {
      if (!m.eval(diffs[k], true).is_true()) continue;
      std::vector<std::string> lines;
      for (size_t i = 0; i < ins.size(); ++i) lines.push_back(show(d, m, inst.inputs[i], ins[i]));
      for (size_t o = 0; o < lhs.size(); ++o) {
        lines.push_back(show(d, m, lhs.size() > 1 ? fmt::format("lhs{}", o) : "lhs", lhs[o]));
        lines.push_back(show(d, m, rhs.size() > 1 ? fmt::format("rhs{}", o) : "rhs", rhs[o]));
      }
      return fmt::format("{}", fmt::join(lines, "\n"));
    }
  }
  return std::nullopt;
}

}  // namespace

Query prove_instance(const RuleBody& body, const Instance& inst, bool fp32, unsigned timeout_ms) {
  z3::context ctx;
  SymDomain d(ctx, fp32);
  auto asks = [&](const char* ax) { return !fp32 && std::find(body.axioms.begin(), body.axioms.end(), ax) != body.axioms.end(); };
  d.exp_sums = asks("exp-sum");
  d.sigmoid_exp = asks("sigmoid-def");
  d.tanh_exp = asks("tanh-def");
  std::vector<z3::expr> constraints;
  auto ins = symbolic_inputs(inst, d, constraints);
  auto lhs = eval_symbolic(inst.lhs, ins, d);
  if (!lhs) return {Check::Error, "left side: " + lhs.error().str()};
  auto rhs = eval_symbolic(inst.rhs, ins, d);
  if (!rhs) return {Check::Error, "right side: " + rhs.error().str()};
  z3::solver s(ctx);
  z3::params p(ctx);
  p.set("timeout", timeout_ms);
  s.set(p);
  for (const auto& c : constraints) s.add(c);
  for (const auto& a : d.assumptions) s.add(a);
  add_axioms(body, d, s);
  z3::expr_vector diffs(ctx);
  for (size_t o = 0; o < lhs->size(); ++o)
    for (size_t k = 0; k < (*lhs)[o].elems.size(); ++k) diffs.push_back(!d.same((*lhs)[o].elems[k], (*rhs)[o].elems[k]));
  if (diffs.empty()) return {Check::Unsat, ""};
  // Binary32: first look for a witness by evaluating both sides on concrete
  // binary32 inputs (Z3's own IEEE semantics, so a difference found is a
  // counterexample to exactness, not an artefact of a kernel's summation
  // order); bit-blasting a proof of inexactness often times out where a
  // random input shows it at once. Only without uninterpreted functions: a
  // model would have to interpret them arbitrarily.
  if (fp32 && d.applications.empty()) {
    if (auto witness = fp32_witness(d, inst, ins, *lhs, *rhs, constraints, diffs)) return {Check::Sat, *witness};
  }
  // One query per element: many small queries are far easier for Z3 than
  // one disjunction over every element.
  // Over the reals, an element whose difference normalises to the zero
  // polynomial (sum of monomials; uninterpreted functions are atoms) is
  // proved without search.
  if (!fp32) {
    z3::params som(ctx);
    som.set("som", true);
    som.set("som_blowup", 1000000u);
    z3::expr_vector rest(ctx);
    for (size_t o = 0, k = 0; o < lhs->size(); ++o)
      for (size_t e = 0; e < (*lhs)[o].elems.size(); ++e, ++k) {
        z3::expr diff = ((*lhs)[o].elems[e] - (*rhs)[o].elems[e]).simplify(som);
        if (!(diff.is_numeral() && diff.get_decimal_string(0) == "0")) {
          if (std::getenv("REFINERY_RULES_DEBUG")) fmt::print(stderr, "residual: {}\n", diff.to_string().size() > 900 ? diff.to_string().substr(diff.to_string().size() - 900) : diff.to_string());
          rest.push_back(diffs[static_cast<unsigned>(k)]);
        }
      }
    diffs = rest;
    if (diffs.empty()) return {Check::Unsat, ""};
  }
  // Z3 does not always honour its timeout: a watchdog interrupts it.
  struct Watchdog {
    std::atomic<bool> done{false};
    std::thread t;
    Watchdog(z3::context& c, Clock::time_point until) {
      t = std::thread([this, &c, until] {
        while (!done && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (!done) c.interrupt();
      });
    }
    ~Watchdog() {
      done = true;
      t.join();
    }
  } watchdog(ctx, Clock::now() + std::chrono::milliseconds(timeout_ms + 300));
  // Binary32 queries stay one disjunction (bit-blasting is shared).
  std::optional<z3::model> model;
  std::string unknown;
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  unsigned steps = fp32 ? 1 : diffs.size();
  for (unsigned k = 0; k < steps && !model; ++k) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      unknown = "timeout";
      break;
    }
    z3::params step(ctx);
    step.set("timeout", static_cast<unsigned>(left));
    step.set("rlimit", static_cast<unsigned>(left) * 2000u);  // a deterministic bound some tactics honour better
    s.set(step);
    s.push();
    s.add(fp32 ? z3::mk_or(diffs) : diffs[k]);
    switch (s.check()) {
      case z3::unsat: break;
      case z3::unknown: unknown = s.reason_unknown(); break;
      case z3::sat: model = s.get_model(); break;
    }
    s.pop();
  }
  if (!model) return unknown.empty() ? Query{Check::Unsat, ""} : Query{Check::Unknown, unknown};
  z3::model m = *model;
  std::vector<std::string> lines;
  for (size_t i = 0; i < ins.size(); ++i) lines.push_back(show(d, m, inst.inputs[i], ins[i]));
  for (size_t o = 0; o < lhs->size(); ++o) {
    lines.push_back(show(d, m, lhs->size() > 1 ? fmt::format("lhs{}", o) : "lhs", (*lhs)[o]));
    lines.push_back(show(d, m, rhs->size() > 1 ? fmt::format("rhs{}", o) : "rhs", (*rhs)[o]));
  }
  return {Check::Sat, fmt::format("{}", fmt::join(lines, "\n"))};
}

}  // namespace refinery::prove
