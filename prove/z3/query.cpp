#include "prove/z3/query.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <expected>
#include <limits>
#include <optional>
#include <random>
#include <set>

#include <fmt/format.h>

#include "prove/numeric.h"
#include "prove/z3/budget.h"
#include "prove/z3/facts.h"
#include "prove/z3/symbolic.h"

namespace refinery::prove {

using namespace rules;

namespace {

std::vector<SymTensor> symbolic_inputs(const Instance& inst, SymDomain& d, std::vector<z3::expr>& constraints) {
  std::vector<SymTensor> ins;
  for (size_t i = 0; i < inst.inputs.size(); ++i) {
    const ir::Value& v = inst.lhs.value(inst.lhs.inputs()[i]);
    SymTensor t;
    t.shape = v.type.shape.sizes();
    int64_t n = v.type.shape.num_elements().value_or(0);
    const int64_t rows = v.type.shape.rank() >= 1 ? v.type.shape[0].size() : 1;
    for (int64_t k = 0; k < n; ++k) {
      z3::expr e = d.var(fmt::format("{}#{}", inst.inputs[i], k));
      // Binary32 inputs may be NaN, infinite or a signed zero unless a
      // value condition says otherwise.
      d.assume(inst.input_conds[i], e, verification_pruned_element(k, n, rows), constraints);
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

std::string show(const SymDomain& d, const z3::model& m, const std::string& name, const SymTensor& t) {
  std::vector<double> v;
  for (const auto& e : t.elems) v.push_back(d.value(m, e));
  return show_values(name, t.shape, v);
}

// Evaluates the binary32 difference on random inputs (special values
// included) that meet the instance's conditions and `assumed`; the first
// input where the sides differ and that `accept` takes (its replay in the
// interpreter shows the difference) comes back as the counterexample.
template <class Accept>
std::optional<std::string> fp32_witness(SymDomain& d, const Instance& inst, const std::vector<SymTensor>& ins,
                                        const std::vector<z3::expr>& assumed, const z3::expr_vector& diffs, int trials,
                                        Accept accept) {
  std::mt19937_64 rng(0x5eed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f), mant(1.0f, 2.0f);
  // Six kinds of inputs: uniform in [-1, 1), moderate magnitudes, small
  // integers, {0, +-1, +-2} (exact cancellations show the sign of zero),
  // extreme magnitudes (products that underflow to a signed zero or
  // overflow), and the special values NaN, +-inf, -0.
  std::uniform_int_distribution<int> expo(-12, 12), wide(-140, 120), kind(0, 6), small(-4, 4), tiny(-2, 2),
      special(0, 3);
  auto draw = [&](ValueCond c) {
    float x = 0;
    switch (kind(rng)) {
      case 0: x = unit(rng); break;
      case 1: x = std::ldexp(mant(rng), expo(rng)) * (unit(rng) < 0 ? -1.0f : 1.0f); break;
      case 2: x = static_cast<float>(small(rng)); break;
      case 3: x = static_cast<float>(tiny(rng)); break;
      case 4: x = std::ldexp(mant(rng), wide(rng)) * (unit(rng) < 0 ? -1.0f : 1.0f); break;
      default: {
        const float sp[] = {std::numeric_limits<float>::quiet_NaN(), INFINITY, -INFINITY, -0.0f};
        x = sp[special(rng)];
      }
    }
    if (c != ValueCond::None && !std::isfinite(x)) x = 1.5f;
    if (has(c, ValueCond::Positive) || has(c, ValueCond::NonNegative)) x = std::abs(x);
    if ((has(c, ValueCond::Positive) || has(c, ValueCond::Nonzero)) && x == 0) x = 0.75f;
    if (has(c, ValueCond::Zero)) x = 0;
    return x;
  };
  for (int trial = 0; trial < trials; ++trial) {
    z3::model m(d.ctx());
    for (size_t i = 0; i < ins.size(); ++i)
      for (const z3::expr& e : ins[i].elems) {
        z3::func_decl decl = e.decl();
        z3::expr v = d.ctx().fpa_val(draw(inst.input_conds[i]));
        m.add_const_interp(decl, v);
      }
    bool ok = true;
    for (const auto& c : assumed) ok = ok && m.eval(c, true).is_true();
    if (!ok) continue;
    bool differs = false;
    for (unsigned k = 0; k < diffs.size() && !differs; ++k) differs = m.eval(diffs[k], true).is_true();
    if (!differs) continue;
    if (auto text = accept(m)) return text;
  }
  return std::nullopt;
}

// The sides' values at a model, one line per input and per side.
std::string describe_model(const SymDomain& d, const z3::model& m, const Instance& inst,
                           const std::vector<SymTensor>& ins, const std::vector<SymTensor>& lhs,
                           const std::vector<SymTensor>* rhs) {
  std::vector<std::string> lines;
  for (size_t i = 0; i < ins.size(); ++i) lines.push_back(show(d, m, inst.inputs[i], ins[i]));
  for (size_t o = 0; o < lhs.size(); ++o) {
    lines.push_back(show(d, m, lhs.size() > 1 ? fmt::format("lhs{}", o) : "lhs", lhs[o]));
    if (rhs) lines.push_back(show(d, m, lhs.size() > 1 ? fmt::format("rhs{}", o) : "rhs", (*rhs)[o]));
  }
  return fmt::format("{}", fmt::join(lines, "\n"));
}

// A definedness predicate in the rule's variables: `(not (= |?y#0| 0.0))`
// reads `?y != 0`.
std::string readable(const z3::expr& p) {
  auto term = [](const z3::expr& e) {
    std::string t = e.to_string();
    std::string out;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i] == '|') continue;
      if (t[i] == '#') {
        while (i + 1 < t.size() && std::isdigit(static_cast<unsigned char>(t[i + 1]))) ++i;
        continue;
      }
      out += t[i];
    }
    return out;
  };
  auto zero = [](const z3::expr& e) { return e.is_numeral() && e.get_decimal_string(0) == "0"; };
  if (p.is_not() && p.arg(0).is_eq() && zero(p.arg(0).arg(1))) return term(p.arg(0).arg(0)) + " != 0";
  if (p.is_distinct() && p.num_args() == 2 && zero(p.arg(1))) return term(p.arg(0)) + " != 0";
  if (p.is_app() && p.num_args() == 2 && zero(p.arg(1))) {
    Z3_decl_kind k = p.decl().decl_kind();
    if (k == Z3_OP_GE) return term(p.arg(0)) + " >= 0";
    if (k == Z3_OP_GT) return term(p.arg(0)) + " > 0";
  }
  return term(p);
}

// Whether `e` mentions one of `atoms` (constants).
bool mentions(const z3::expr& e, const std::vector<z3::expr>& atoms) {
  if (atoms.empty()) return false;
  std::vector<z3::expr> todo{e};
  std::set<unsigned> seen;
  while (!todo.empty()) {
    z3::expr t = todo.back();
    todo.pop_back();
    if (!seen.insert(t.id()).second) continue;
    if (std::any_of(atoms.begin(), atoms.end(), [&](const z3::expr& a) { return z3::eq(a, t); })) return true;
    if (t.is_app())
      for (unsigned i = 0; i < t.num_args(); ++i) todo.push_back(t.arg(i));
  }
  return false;
}

// Binary32: whether `e` may be NaN or infinite on finite inputs of moderate
// magnitude: it holds an infinity or NaN (an empty reduction's), a
// division, a square root or an uninterpreted function (log of 0, exp's
// overflow). Sums and products of such inputs stay finite (overflow aside).
bool may_be_special(const z3::expr& e) {
  std::vector<z3::expr> todo{e};
  std::set<unsigned> seen;
  while (!todo.empty()) {
    z3::expr t = todo.back();
    todo.pop_back();
    if (!t.is_app() || !seen.insert(t.id()).second) continue;
    switch (t.decl().decl_kind()) {
      case Z3_OP_FPA_PLUS_INF:
      case Z3_OP_FPA_MINUS_INF:
      case Z3_OP_FPA_NAN:
      case Z3_OP_FPA_DIV:
      case Z3_OP_FPA_SQRT:
      case Z3_OP_FPA_REM: return true;
      case Z3_OP_UNINTERPRETED:
        if (t.num_args() > 0) return true;
        break;
      default: break;
    }
    for (unsigned i = 0; i < t.num_args(); ++i) todo.push_back(t.arg(i));
  }
  return false;
}

// Whether `p` is (syntactically) one of `set`: terms are hash-consed, so a
// right side's divisor that is also the left side's needs no search.
bool among(const z3::expr& p, const std::vector<z3::expr>& set) {
  return std::any_of(set.begin(), set.end(), [&](const z3::expr& q) { return z3::eq(p, q); });
}

// The Z3 axioms the rule asks for (`:axioms`; over the reals).
void use_axioms(const RuleBody& body, SymDomain& d) {
  auto asks = [&](const char* ax) {
    return std::find(body.axioms.begin(), body.axioms.end(), ax) != body.axioms.end();
  };
  d.exp_sums = asks("exp-sum");
  d.sigmoid_exp = asks("sigmoid-def");
  d.tanh_exp = asks("tanh-def");
}

// Both sides of an instance in `d`, each with the definedness conditions its
// partial operations recorded.
struct Sides {
  std::vector<z3::expr> constraints;  // what the inputs' conditions say
  std::vector<SymTensor> ins, lhs, rhs;
  std::vector<z3::expr> lhs_defined, rhs_defined;
};

std::expected<Sides, std::string> evaluate_sides(const Instance& inst, SymDomain& d) {
  Sides s;
  s.ins = symbolic_inputs(inst, d, s.constraints);
  auto lhs = eval_symbolic(inst.lhs, s.ins, d);
  if (!lhs) return std::unexpected("left side: " + lhs.error().str());
  s.lhs = std::move(*lhs);
  s.lhs_defined = std::move(d.defined);
  d.defined.clear();
  auto rhs = eval_symbolic(inst.rhs, s.ins, d);
  if (!rhs) return std::unexpected("right side: " + rhs.error().str());
  s.rhs = std::move(*rhs);
  s.rhs_defined = std::move(d.defined);
  d.defined.clear();
  return s;
}

}  // namespace

// The divisions by a count of nothing and the logs of an empty sum among
// what `d` evaluated: inv and log applied to what simplifies to 0 (at an
// instance with empty dims; they have no real value).
static std::vector<z3::expr> of_nothing(SymDomain& d) {
  std::vector<z3::expr> out;
  for (const char* f : {"inv", "log"})
    for (const z3::expr& a : d.applications[f]) {
      z3::expr v = a.simplify();
      if (v.is_numeral() && v.get_decimal_string(0) == "0") out.push_back(d.apply(f, a));
    }
  return out;
}

static Query special_values(const RuleBody& body, const Instance& inst, unsigned timeout_ms);
static bool finite_over_reals(const RuleBody& body, const Instance& inst, unsigned timeout_ms);

static Query prove_checked(const RuleBody& body, const Instance& inst, Domain domain, unsigned timeout_ms) {
  if (domain == Domain::Special32) return special_values(body, inst, timeout_ms);
  if (domain == Domain::Classes32 && finite_over_reals(body, inst, timeout_ms)) return {Check::Unsat, "", ""};
  bool classes = domain == Domain::Classes32;
  bool fp32 = domain == Domain::Exact32 || domain == Domain::Witness32 || classes;
  z3::context ctx;
  SymDomain d(ctx, fp32);
  if (!fp32) use_axioms(body, d);
  auto sides = evaluate_sides(inst, d);
  if (!sides) return {Check::Error, sides.error(), ""};
  // Over the reals, at an instance with empty dims, what mentions a value
  // without a real counterpart is left to the binary32 query of the
  // instance, which compares classes (Classes32, asked first): an empty
  // reduction's infinity or NaN, a division by a count of nothing or the
  // log of an empty sum (0 / 0, log 0), and the definedness predicates that
  // such a division or log makes false.
  std::vector<z3::expr> unreal = d.unreal;
  if (inst.empty && !fp32)
    for (const z3::expr& e : of_nothing(d)) unreal.push_back(e);
  auto real = [&](const z3::expr& e) {
    return fp32 || !inst.empty || (!mentions(e, unreal) && !e.simplify().is_false());
  };
  if (!fp32 && inst.empty) {
    for (auto* defined : {&sides->lhs_defined, &sides->rhs_defined})
      std::erase_if(*defined, [&](const z3::expr& q) { return !real(q); });
    std::erase_if(d.inverses, [&](const auto& inverse) { return !real(inverse.first); });
  }
  const std::vector<z3::expr>& constraints = sides->constraints;
  const std::vector<SymTensor>& ins = sides->ins;
  const std::vector<SymTensor>*lhs = &sides->lhs, *rhs = &sides->rhs;
  const std::vector<z3::expr>&lhs_defined = sides->lhs_defined, &rhs_defined = sides->rhs_defined;
  // What a model must satisfy: the conditions, the facts, the left side's
  // definedness (reals).
  std::vector<z3::expr> assumed = constraints;
  assumed.insert(assumed.end(), d.facts.begin(), d.facts.end());
  assumed.insert(assumed.end(), lhs_defined.begin(), lhs_defined.end());
  if (classes)  // finite, and far from overflow and underflow
    for (const SymTensor& t : ins)
      for (const z3::expr& e : t.elems)
        assumed.push_back(d.finite(e) && (e.mk_is_zero() || (d.num(0x1p-8) <= z3::abs(e) && z3::abs(e) <= d.num(256))));
  z3::solver s(ctx);
  for (const auto& c : assumed) s.add(c);
  add_axioms(body, d, s);
  z3::expr_vector diffs(ctx);
  std::vector<std::pair<z3::expr, z3::expr>> pairs;  // the sides' elements, beside their disequalities
  for (size_t o = 0; o < lhs->size(); ++o)
    for (size_t k = 0; k < (*lhs)[o].elems.size(); ++k) {
      const z3::expr &a = (*lhs)[o].elems[k], &b = (*rhs)[o].elems[k];
      if (!real(a) || !real(b)) continue;
      if (classes && !may_be_special(a) && !may_be_special(b)) continue;  // both finite
      pairs.emplace_back(a, b);
      if (classes)  // NaN, +inf, -inf or finite: the infinities compare as values
        diffs.push_back(a.mk_is_nan() != b.mk_is_nan() || a.mk_is_inf() != b.mk_is_inf() ||
                        (a.mk_is_inf() && b.mk_is_inf() && a != b));
      else
        diffs.push_back(!d.same(a, b));
    }
  // Reals: the right side's definedness that the left side's does not give
  // syntactically; each is an obligation.
  std::vector<z3::expr> obligations;
  for (const z3::expr& q : rhs_defined)
    if (!among(q, lhs_defined) && !among(q, obligations)) obligations.push_back(q);
  if (diffs.empty() && obligations.empty()) return {Check::Unsat, "", ""};
  // Every counterexample is replayed in the interpreter before it is
  // printed (issue #17): over the reals in f64 (the sides must differ by
  // more than f64 rounding, both finite), in binary32 in f32 (the sides
  // must differ bit for bit). The printed values are the interpreter's.
  auto replay_model = [&](const z3::model& m) {
    std::vector<std::vector<double>> values;
    for (const SymTensor& t : ins) {
      std::vector<double> v;
      for (const z3::expr& e : t.elems) v.push_back(d.exact_value(m, e));
      values.push_back(std::move(v));
    }
    return replay(inst, std::move(values), !fp32);
  };
  // Binary32: whether a replay shows what the query asks (a difference in
  // bits; Classes32: in class, in f32 and again in f64).
  auto shows = [&](const Replay& r) {
    if (!r.ran()) return false;
    if (!classes) return differs_in_bits(r);
    if (!differs_in_class(r)) return false;
    Replay wide = replay(inst, r.inputs, true);
    return wide.ran() && differs_in_class(wide);
  };
  // Binary32: first look for a witness by evaluating both sides on concrete
  // binary32 inputs (Z3's own IEEE semantics); bit-blasting a proof of
  // inexactness often times out where a random input shows it at once.
  // Only without uninterpreted functions: a model would have to interpret
  // them arbitrarily.
  if (fp32 && d.applications.empty() && !diffs.empty()) {
    auto accept = [&](const z3::model& m) -> std::optional<std::string> {
      Replay r = replay_model(m);
      if (shows(r)) return r.describe(inst);
      return std::nullopt;
    };
    // the larger instances' search (Witness32) is a second look: fewer draws
    int trials = domain == Domain::Witness32 ? 48 : 192;
    if (auto witness = fp32_witness(d, inst, ins, assumed, diffs, trials, accept)) return {Check::Sat, *witness, ""};
  }
  if (domain == Domain::Witness32) return {Check::Unknown, "no binary32 witness on random inputs", ""};
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
    std::vector<std::pair<z3::expr, z3::expr>> rest_pairs;
    for (size_t k = 0; k < pairs.size(); ++k) {
      z3::expr diff = (pairs[k].first - pairs[k].second).simplify(som);
      if (!(diff.is_numeral() && diff.get_decimal_string(0) == "0")) {
        if (std::getenv("REFINERY_RULES_DEBUG"))
          fmt::print(stderr, "residual: {}\n",
                     diff.to_string().size() > 900 ? diff.to_string().substr(diff.to_string().size() - 900)
                                                   : diff.to_string());
        rest.push_back(diffs[static_cast<unsigned>(k)]);
        rest_pairs.push_back(pairs[k]);
      }
    }
    diffs = rest;
    pairs = std::move(rest_pairs);
  }
  Budget budget(ctx, timeout_ms);
  std::string unknown;
  // Checks `goal` under what is asserted; a model when it is satisfiable.
  auto check = [&](const z3::expr& goal) -> std::optional<z3::model> {
    z3::params step(ctx);
    step.set("rlimit", budget.left_ms() * 2000u);  // a deterministic bound some tactics honour better
    s.set(step);
    s.push();
    s.add(goal);
    std::optional<z3::model> model;
    switch (budget.check(s, unknown)) {
      case z3::unsat: break;
      case z3::unknown: break;
      case z3::sat: model = s.get_model(); break;
    }
    s.pop();
    return model;
  };
  // Values first, where both sides are defined (a right side that is
  // undefined is reported as such below, not as a difference of values).
  s.push();
  for (const z3::expr& q : rhs_defined) s.add(q);
  for (const auto& [nonzero, inverse] : d.inverses) s.add(inverse);  // every divisor is nonzero here
  // A model that does not replay (an uninterpreted function's artefact, or
  // a difference below f64's resolution) is no counterexample: the query
  // learns the functions' laws and their true values at the model's
  // arguments (true facts: an unsatisfiable query is still a proof) and
  // searches again. Where it also had to bound the inputs (the model
  // overflowed in f64) or ask for a larger difference, what it can no
  // longer find is not proved: unknown.
  std::vector<z3::expr> learned;
  int spurious = 0;
  bool restricted = false, laws = false, margin = false;
  std::string not_replayed;
  auto learn = [&](const z3::expr& f) {
    s.add(f);
    learned.push_back(f);
  };
  auto spurious_model = [&](const z3::model& m, const Replay& r, bool overflow) {
    ++spurious;
    // Long tensors are cut: the message says what happened, not every value.
    auto clip = [](std::string t) { return t.size() > 600 ? t.substr(0, 600) + " ..." : t; };
    not_replayed =
        fmt::format("{} models did not replay; the last, the solver's:\n{}\nthe interpreter's:\n{}", spurious,
                    clip(describe_model(d, m, inst, ins, *lhs, &*rhs)), clip(r.ran() ? r.describe(inst) : r.error));
    if (fp32) return;
    if (!laws) {
      // What is true of the functions (ranges, inverse laws, monotonicity):
      // learned only now, so that a proof needs no more than before.
      laws = true;
      for (const z3::expr& f : function_facts(d)) learn(f);
      for (const z3::expr& f : function_laws(d)) learn(f);
    }
    for (const z3::expr& f : function_pins(d, m)) learn(f);
    if (overflow) {
      restricted = true;
      for (const SymTensor& t : ins)
        for (const z3::expr& e : t.elems) learn(d.num(-64) <= e && e <= d.num(64));
    } else if (!has_free_functions(d)) {
      restricted = margin = true;
    }
  };
  const int kMaxSpurious = 6;
  std::optional<z3::model> model;
  std::optional<Replay> replayed;
  if (fp32) {
    // Binary32 queries stay one disjunction (bit-blasting is shared).
    if (!diffs.empty()) model = check(z3::mk_or(diffs));
    if (model) {
      Replay r = replay_model(*model);
      if (shows(r))
        replayed = std::move(r);
      else
        spurious_model(*model, r, false), model.reset();
    }
  } else {
    for (unsigned k = 0; k < diffs.size() && !replayed && unknown != "timeout" && spurious < kMaxSpurious;) {
      z3::expr goal = diffs[k];
      if (margin) {
        const auto& [a, b] = pairs[k];
        z3::expr gap = d.num(1.0 / 1024);
        goal = goal && (a - b > gap || b - a > gap);
      }
      model = check(goal);
      if (!model) {
        ++k;
        continue;
      }
      Replay r = replay_model(*model);
      bool overflow = false;
      if (r.ran() && differs_over_reals(r, overflow)) {
        replayed = std::move(r);
        break;
      }
      spurious_model(*model, r, overflow);
      model.reset();
    }
  }
  s.pop();
  for (const z3::expr& f : learned) s.add(f);
  if (replayed) return {Check::Sat, replayed->describe(inst), ""};
  if (!unknown.empty()) return {Check::Unknown, unknown, ""};
  if (spurious >= kMaxSpurious || (spurious > 0 && (restricted || fp32)))
    return {Check::Unknown, "no counterexample that replays in the interpreter: " + not_replayed, ""};
  // Then the right side's definedness: every predicate that fails somewhere.
  for (const auto& [nonzero, inverse] : d.inverses) s.add(z3::implies(nonzero, inverse));
  std::vector<std::string> needs;
  std::optional<z3::model> first;
  for (const z3::expr& q : obligations) {
    auto m = check(!q);
    if (!m) {
      if (!unknown.empty()) return {Check::Unknown, unknown, ""};
      continue;
    }
    std::string r = readable(q);
    if (std::find(needs.begin(), needs.end(), r) == needs.end()) needs.push_back(r);
    if (!first) first = m;
  }
  if (!first) return {Check::Unsat, "", ""};
  // The point where the right side is undefined, with the interpreter's
  // values there (f64: NaN or an infinity where it divides by zero, takes
  // the log of 0, ...).
  Replay r = replay_model(*first);
  std::string at = r.ran() ? r.describe(inst) : describe_model(d, *first, inst, ins, *lhs, nullptr);
  std::string detail =
      at + "\nrhs undefined over the reals (needs " + fmt::format("{}", fmt::join(needs, " and ")) + ")";
  return {Check::Undefined, detail, fmt::format("{}", fmt::join(needs, " and "))};
}

// Special values (docs/rules.md): on finite inputs, and leaving overflow
// and underflow aside (they are rounding), a binary32 side is NaN or
// infinite exactly where one of its partial operations is applied outside
// its domain over the reals (a division by zero, the square root of a
// negative, the log of a non-positive value), as IEEE defines them. Where
// the left side is undefined, the right side defined, the left side's NaN
// or infinity is lost (the query over the reals has shown the converse).
// Each point the reals give is replayed in binary32: it counts when the
// sides' classes (NaN, +inf, -inf, finite) differ there; where they do not
// (1 / (1 / 0) is 0 in binary32), the point is excluded and the search goes
// on, a few times.
static Query special_values(const RuleBody& body, const Instance& inst, unsigned timeout_ms) {
  z3::context ctx;
  SymDomain d(ctx, false);
  use_axioms(body, d);
  auto sides = evaluate_sides(inst, d);
  if (!sides) return {Check::Error, sides.error(), ""};
  const std::vector<z3::expr>& constraints = sides->constraints;
  const std::vector<SymTensor>& ins = sides->ins;
  std::vector<z3::expr> obligations;
  for (const z3::expr& q : sides->lhs_defined)
    if (!among(q, sides->rhs_defined) && !among(q, obligations)) obligations.push_back(q);
  if (obligations.empty()) return {Check::Unsat, "", ""};
  z3::solver s(ctx);
  for (const auto& c : constraints) s.add(c);
  for (const auto& c : d.facts) s.add(c);
  for (const auto& c : sides->rhs_defined) s.add(c);
  for (const auto& [nonzero, inverse] : d.inverses) s.add(z3::implies(nonzero, inverse));
  add_axioms(body, d, s);
  for (const z3::expr& f : function_facts(d)) s.add(f);
  Budget budget(ctx, timeout_ms);
  for (const z3::expr& q : obligations) {
    for (int attempt = 0;; ++attempt) {
      if (attempt == 4)
        return {Check::Unknown, "the left side is undefined over the reals at points where binary32 agrees", ""};
      s.push();
      s.add(!q);
      std::string why;
      z3::check_result r = budget.check(s, why);
      std::optional<z3::model> m;
      if (r == z3::sat) m = s.get_model();
      s.pop();
      if (r == z3::unsat) break;
      if (!m) return {Check::Unknown, why, ""};
      // The point in binary32 (each input rounded to the nearest float),
      // replayed in the interpreter: its values are the ones printed.
      z3::expr_vector point(ctx);
      std::vector<std::vector<double>> values;
      for (size_t i = 0; i < ins.size(); ++i) {
        values.emplace_back();
        for (size_t k = 0; k < ins[i].elems.size(); ++k) {
          point.push_back(ins[i].elems[k] == m->eval(ins[i].elems[k], true));
          values.back().push_back(d.exact_value(*m, ins[i].elems[k]));
        }
      }
      Replay rep = replay(inst, std::move(values), false);
      if (rep.ran() && differs_in_class(rep))
        return {Check::Sat, rep.describe(inst) + "\nlhs undefined over the reals (needs " + readable(q) + ")", ""};
      // The sides agree in binary32 there: look elsewhere, with the
      // functions' laws and their true values at that point learned.
      if (attempt == 0)
        for (const z3::expr& f : function_laws(d)) s.add(f);
      for (const z3::expr& f : function_pins(d, *m)) s.add(f);
      s.add(!z3::mk_and(point));
    }
  }
  return {Check::Unsat, "", ""};
}

// Classes32 settled over the reals: at an instance where nothing lacks a
// real value (no empty reduction's infinity or NaN, no division by a count
// of nothing, no log of an empty sum) and every partial operation of both
// sides is applied inside its domain on every input the conditions allow
// (each side's definedness follows from them), both sides are finite over
// the reals on every input. In binary32 a side is then NaN or infinite
// only where an operation overflows or underflows, which the class query
// leaves aside (its counterexamples must replay in f64; Special32 rests on
// the same premise), and the query over the reals compares every element
// of this instance, as at an instance without empty dims. Whatever is not
// settled so (a timeout included) goes to the binary32 query.
static bool finite_over_reals(const RuleBody& body, const Instance& inst, unsigned timeout_ms) {
  z3::context ctx;
  SymDomain d(ctx, false);
  use_axioms(body, d);
  auto sides = evaluate_sides(inst, d);
  if (!sides || !d.unreal.empty() || !of_nothing(d).empty()) return false;
  std::vector<z3::expr> defined = sides->lhs_defined;
  defined.insert(defined.end(), sides->rhs_defined.begin(), sides->rhs_defined.end());
  if (defined.empty()) return true;
  z3::solver s(ctx);
  for (const auto& c : sides->constraints) s.add(c);
  for (const auto& c : d.facts) s.add(c);
  for (const z3::expr& f : function_facts(d)) s.add(f);
  z3::expr_vector all(ctx);
  for (const z3::expr& q : defined) all.push_back(q);
  s.add(!z3::mk_and(all));
  Budget budget(ctx, timeout_ms);
  std::string why;
  try {
    return budget.check(s, why) == z3::unsat;
  } catch (const z3::exception&) {
    return false;  // interrupted: the binary32 query decides
  }
}

// A query interrupted by the watchdog (or Z3 giving up inside a call)
// throws; it is an unknown, not a crash.
Query prove_instance(const RuleBody& body, const Instance& inst, Domain domain, unsigned timeout_ms) {
  // An empty result (ONNX: an op on empty tensors gives empty tensors) is
  // trivially equal: nothing of either side is observed, not even an
  // intermediate undefined over the reals (a folded weight of a conv over
  // an empty batch).
  bool observed = false;
  for (ir::ValueId o : inst.lhs.outputs()) observed = observed || inst.lhs.value(o).type.shape.num_elements() != 0;
  if (!observed) return {Check::Unsat, "", ""};
  try {
    return prove_checked(body, inst, domain, timeout_ms);
  } catch (const z3::exception& e) {
    return {Check::Unknown, std::string("z3: ") + e.msg(), ""};
  }
}

}  // namespace refinery::prove
