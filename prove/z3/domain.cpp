// The scalar domain of the Z3 semantics (SymDomain): numerals, division as
// a checked inverse over the reals, the laws applied as terms are built,
// uninterpreted transcendental functions, and reading values from a model.
// The op semantics over tensors of these scalars are in the family files
// beside this one (prove/z3/semantics.h).
#include "prove/z3/symbolic.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>

#include <fmt/format.h>

namespace refinery::prove {

SymDomain::SymDomain(z3::context& ctx, bool fp32) : ctx_(ctx), fp32_(fp32) {
  if (fp32_) ctx_.set_rounding_mode(z3::RNE);
}

z3::sort SymDomain::sort() const { return fp32_ ? ctx_.fpa_sort<32>() : ctx_.real_sort(); }

namespace {

// 2^k in decimal (k >= 0).
std::string pow2(int k) {
  std::string d = "1";  // little-endian digits
  for (int i = 0; i < k; ++i) {
    int carry = 0;
    for (char& c : d) {
      int x = (c - '0') * 2 + carry;
      c = static_cast<char>('0' + x % 10);
      carry = x / 10;
    }
    if (carry) d += static_cast<char>('0' + carry);
  }
  return {d.rbegin(), d.rend()};
}

// The operands of a (nested) application of `kind`: (a + b) + c gives a, b, c.
void flatten(const z3::expr& e, Z3_decl_kind kind, std::vector<z3::expr>& out) {
  if (e.is_app() && e.decl().decl_kind() == kind) {
    for (unsigned i = 0; i < e.num_args(); ++i) flatten(e.arg(i), kind, out);
  } else {
    out.push_back(e);
  }
}

}  // namespace

z3::expr SymDomain::num(double v) const {
  if (fp32_) return ctx_.fpa_val(static_cast<float>(v));
  if (v == std::floor(v) && std::abs(v) < 1e15) return ctx_.real_val(static_cast<int64_t>(v));
  // The exact binary value as a fraction, so reals and floats agree on constants.
  int e = 0;
  double m = std::frexp(v, &e);
  auto mi = static_cast<int64_t>(std::ldexp(m, 53));
  int k = 53 - e;
  while (k > 0 && mi % 2 == 0) {
    mi /= 2;
    --k;
  }
  if (k <= 0) return ctx_.real_val(std::to_string(mi).c_str()) * ctx_.real_val(pow2(-k).c_str());
  return ctx_.real_val((std::to_string(mi) + "/" + pow2(k)).c_str());
}

int SymDomain::is_unit(const z3::expr& e) const {
  // Most terms are no numeral: leave before making the three to compare with.
  if (!fp32_ || !e.is_app() || e.decl().decl_kind() != Z3_OP_FPA_NUM) return 0;
  // numerals are hash-consed: compare the terms
  z3::expr one = ctx_.fpa_val(1.0f), minus_one = ctx_.fpa_val(-1.0f);
  if (z3::eq(e, one)) return 1;
  if (z3::eq(e, minus_one)) return -1;
  if (z3::eq(e, ctx_.fpa_val(2.0f))) return 2;
  return 0;
}

z3::expr SymDomain::var(const std::string& name) const { return ctx_.constant(name.c_str(), sort()); }

void SymDomain::assume(rules::ValueCond c, const z3::expr& e, bool pruned, std::vector<z3::expr>& out) const {
  using rules::ValueCond;
  // fp.lt and fp.leq are false on NaN: value conditions hold of finite values
  if (fp32_ && c != ValueCond::None) out.push_back(finite(e));
  const z3::expr zero = fp32_ ? e.mk_is_zero() : e == num(0);
  if (has(c, ValueCond::Positive)) out.push_back(num(0) < e);
  if (has(c, ValueCond::NonNegative)) out.push_back(num(0) <= e);
  if (has(c, ValueCond::Nonzero)) out.push_back(!zero);
  if (has(c, ValueCond::Zero)) out.push_back(zero);
  if (!pruned) return;
  if (has(c, ValueCond::ZeroPruned)) out.push_back(zero);
  if (has(c, ValueCond::NonNegativePruned)) out.push_back(num(0) <= e);
  if (has(c, ValueCond::NonPositivePruned)) out.push_back(e <= num(0));
}

void SymDomain::require(const z3::expr& p, bool partial) {
  if (p.simplify().is_true()) return;
  (partial ? defined : facts).push_back(p);
}

z3::expr SymDomain::div(const z3::expr& a, const z3::expr& b, bool partial) {
  if (fp32_) {
    if (is_unit(b) == 1) return a;  // x / 1 is x, x / -1 is -x
    if (is_unit(b) == -1) return neg(a);
    return a / b;
  }
  // Over the reals, a / b is a * inv(b) with b * inv(b) = 1 where b != 0:
  // polynomial goals are much easier for Z3 than goals with division.
  // inv(x * y) = inv(x) * inv(y) and inv(inv(x)) = x, applied as terms are
  // built, keep the goals polynomial of low degree (x * y != 0 is x != 0
  // and y != 0; inv(x) is nonzero wherever it is defined).
  if (b.is_app() && b.decl().decl_kind() == Z3_OP_MUL && b.num_args() == 2)
    return div(div(a, b.arg(0), partial), b.arg(1), partial);
  if (b.is_app() && b.num_args() == 1 && b.decl().name().str() == "inv") return a * b.arg(0);
  if (exp_sums) {
    // A factor common to every summand of b: b = f * b', so a / b = (a / f) / b'
    // (b != 0 implies f != 0 and b' != 0).
    std::vector<z3::expr> terms;
    flatten(b, Z3_OP_ADD, terms);
    if (terms.size() > 1) {
      std::vector<std::vector<z3::expr>> factors(terms.size());
      for (size_t i = 0; i < terms.size(); ++i) flatten(terms[i], Z3_OP_MUL, factors[i]);
      for (const z3::expr& f : factors[0]) {
        auto has = [&](const std::vector<z3::expr>& fs) {
          return std::any_of(fs.begin(), fs.end(), [&](const z3::expr& g) { return z3::eq(f, g); });
        };
        if (f.is_numeral() || !std::all_of(factors.begin() + 1, factors.end(), has)) continue;
        std::optional<z3::expr> rest;
        for (const auto& fs : factors) {
          std::optional<z3::expr> prod;
          bool dropped = false;
          for (const z3::expr& g : fs) {
            if (!dropped && z3::eq(f, g)) {
              dropped = true;
              continue;
            }
            prod = prod ? *prod * g : g;
          }
          z3::expr t = prod ? *prod : num(1);
          rest = rest ? *rest + t : t;
        }
        return div(div(a, f, partial), *rest, partial);
      }
    }
  }
  if (sigmoid_exp || tanh_exp) {
    // A summand 1/u of b (exp(-t) is 1/exp(t)): a / b = (a u) / (b u), with (1/u) u = 1.
    std::vector<z3::expr> terms;
    flatten(b, Z3_OP_ADD, terms);
    // 1/u, as div builds it: inv(u) or 1 * inv(u)
    auto inv_of = [](const z3::expr& e) -> std::optional<z3::expr> {
      auto is_inv = [](const z3::expr& f) { return f.is_app() && f.num_args() == 1 && f.decl().name().str() == "inv"; };
      if (is_inv(e)) return e.arg(0);
      if (e.is_app() && e.decl().decl_kind() == Z3_OP_MUL && e.num_args() == 2 && e.arg(0).is_numeral() &&
          e.arg(0).get_decimal_string(0) == "1" && is_inv(e.arg(1)))
        return e.arg(1).arg(0);
      return std::nullopt;
    };
    auto k = std::find_if(terms.begin(), terms.end(), [&](const z3::expr& e) { return inv_of(e).has_value(); });
    if (terms.size() > 1 && k != terms.end()) {
      z3::expr u = *inv_of(*k);
      std::optional<z3::expr> bu;
      for (const z3::expr& t : terms) {
        z3::expr tu = z3::eq(t, *k) ? num(1) : t.is_numeral() && t.get_decimal_string(0) == "1" ? u : t * u;
        bu = bu ? *bu + tu : tu;
      }
      // u != 0 is already known: 1/u was built by a division
      return div(a * u, *bu, partial);
    }
  }
  z3::expr inv = fn("inv", b);
  require(b != num(0), partial);
  inverses.emplace_back(b != num(0), b * inv == num(1));
  return a * inv;
}

// In binary32 max and min propagate NaN (as the interpreter's ATen kernels
// do); with ordered operands the first of two equal ones (-0, +0) is kept.
z3::expr SymDomain::max(const z3::expr& a, const z3::expr& b) const {
  z3::expr m = z3::ite(a < b, b, a);
  return fp32_ ? z3::ite(a.mk_is_nan() || b.mk_is_nan(), ctx_.fpa_nan(sort()), m) : m;
}
z3::expr SymDomain::min(const z3::expr& a, const z3::expr& b) const {
  z3::expr m = z3::ite(b < a, b, a);
  return fp32_ ? z3::ite(a.mk_is_nan() || b.mk_is_nan(), ctx_.fpa_nan(sort()), m) : m;
}

z3::expr SymDomain::empty_value(double v) {
  if (fp32_) return std::isnan(v) ? ctx_.fpa_nan(sort()) : std::isinf(v) ? ctx_.fpa_inf(sort(), v < 0) : num(v);
  z3::expr e = ctx_.constant(fmt::format("empty{}", unreal.size()).c_str(), sort());
  unreal.push_back(e);
  return e;
}

z3::expr SymDomain::sqrt(const z3::expr& a) {
  if (fp32_) return z3::sqrt(a, ctx_.fpa_rounding_mode());
  require(a >= num(0), true);
  return fn("sqrt", a);
}

z3::expr SymDomain::log(const z3::expr& a, bool partial) {
  // an op that is total (log_softmax) needs no fact: its argument is positive by construction
  if (!fp32_ && partial) require(a > num(0), true);
  return fn("log", a);
}

// a = -t: t (nullopt when a, simplified, is not a negative multiple).
static std::optional<z3::expr> negated(const z3::expr& a) {
  z3::expr s = a.simplify();
  bool neg = false;
  if (s.is_numeral())
    neg = (s < 0).simplify().is_true();
  else if (s.is_app() && s.decl().decl_kind() == Z3_OP_MUL && s.num_args() == 2 && s.arg(0).is_numeral())
    neg = (s.arg(0) < 0).simplify().is_true();
  if (!neg) return std::nullopt;
  return (-s).simplify();
}

z3::expr SymDomain::fn(const std::string& name, const z3::expr& a) {
  if (!fp32_ && (sigmoid_exp || tanh_exp)) {
    auto t = negated(a);
    // exp(t) > 0, so these divisions are defined everywhere
    if (name == "exp" && t) return div(num(1), fn("exp", *t), false);
    if (name == "sigmoid" && sigmoid_exp) {
      if (t) return div(num(1), fn("exp", *t) + num(1), false);
      z3::expr e = fn("exp", a.simplify());
      return div(e, e + num(1), false);
    }
    if (name == "tanh" && tanh_exp) {
      z3::expr e = fn("exp", (num(2) * (t ? *t : a)).simplify());
      return div(t ? num(1) - e : e - num(1), e + num(1), false);
    }
  }
  if (exp_sums && !fp32_ && name == "exp" && a.is_app() && a.decl().decl_kind() == Z3_OP_ADD) {
    std::vector<z3::expr> terms;
    flatten(a, Z3_OP_ADD, terms);
    z3::expr prod = fn(name, terms[0]);
    for (size_t i = 1; i < terms.size(); ++i) prod = prod * fn(name, terms[i]);
    return prod;
  }
  auto it = fns_.find(name);
  if (it == fns_.end()) it = fns_.emplace(name, ctx_.function(name.c_str(), sort(), sort())).first;
  z3::expr e = it->second(a);
  applications[name].push_back(a);
  if (!fp32_) return e;
  return special_values(name, a, e);
}

// Binary32: f(a) is IEEE's at NaN and the infinities (C's <math.h>, which
// the interpreter's kernels follow); at a finite argument it is the
// uninterpreted value `u`, within the function's range (a fact).
z3::expr SymDomain::special_values(const std::string& name, const z3::expr& a, const z3::expr& u) {
  z3::expr nan = ctx_.fpa_nan(sort()), pinf = ctx_.fpa_inf(sort(), false), ninf = ctx_.fpa_inf(sort(), true);
  z3::expr at_pinf = nan, at_ninf = nan;
  z3::expr is_pinf = a == pinf, is_ninf = a == ninf;
  auto within = [&](double lo, double hi) { facts.push_back(z3::implies(finite(a), num(lo) <= u && u <= num(hi))); };
  if (name == "exp") {
    at_pinf = pinf, at_ninf = num(0);
    facts.push_back(z3::implies(finite(a), num(0) <= u));
  } else if (name == "softplus") {
    at_pinf = pinf, at_ninf = num(0);
    facts.push_back(z3::implies(finite(a), num(0) <= u));
  } else if (name == "log") {
    // log(+-0) = -inf, log(x < 0) = NaN (-inf included), log(+inf) = +inf
    facts.push_back(z3::implies(finite(a) && num(0) < a, finite(u)));
    return z3::ite(a.mk_is_nan() || a < num(0), nan, z3::ite(a.mk_is_zero(), ninf, z3::ite(is_pinf, pinf, u)));
  } else if (name == "tanh" || name == "erf") {
    at_pinf = num(1), at_ninf = num(-1);
    within(-1, 1);
  } else if (name == "sigmoid") {
    at_pinf = num(1), at_ninf = num(0);
    within(0, 1);
  } else if (name == "sin" || name == "cos") {
    within(-1, 1);
  } else {
    return u;  // unknown: uninterpreted everywhere
  }
  return z3::ite(a.mk_is_nan(), nan, z3::ite(is_pinf, at_pinf, z3::ite(is_ninf, at_ninf, u)));
}

z3::expr SymDomain::apply(const std::string& name, const z3::expr& a) {
  auto it = fns_.find(name);
  if (it == fns_.end()) it = fns_.emplace(name, ctx_.function(name.c_str(), sort(), sort())).first;
  return it->second(a);
}

double SymDomain::exact_value(const z3::model& m, const z3::expr& e) const {
  z3::expr v = m.eval(e, true);
  if (fp32_) {
    if (!v.is_fpa()) return value(m, e);
    if (m.eval(z3::expr(ctx_, Z3_mk_fpa_is_nan(ctx_, v)), true).is_true()) return std::nan("");
    z3::expr bits = m.eval(z3::expr(ctx_, Z3_mk_fpa_to_ieee_bv(ctx_, v)), true);
    uint64_t b = 0;
    if (!bits.is_numeral_u64(b)) return value(m, e);
    return static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(b)));
  }
  if (v.is_numeral() && !v.is_algebraic()) {
    // a rational: numerator over denominator, rounded once
    std::string num = z3::expr(ctx_, Z3_get_numerator(ctx_, v)).get_decimal_string(0);
    std::string den = z3::expr(ctx_, Z3_get_denominator(ctx_, v)).get_decimal_string(0);
    return static_cast<double>(std::stold(num) / std::stold(den));
  }
  std::string s = v.get_decimal_string(20);
  if (!s.empty() && s.back() == '?') s.pop_back();
  return std::stod(s);
}

double SymDomain::value(const z3::model& m, const z3::expr& e) const {
  z3::expr v = m.eval(e, true);
  if (fp32_) {
    // Evaluate through the reals: fp.to_real of a finite value.
    if (v.is_fpa()) {
      z3::expr nan = z3::expr(ctx_, Z3_mk_fpa_is_nan(ctx_, v));
      if (m.eval(nan, true).is_true()) return std::nan("");
      z3::expr inf = z3::expr(ctx_, Z3_mk_fpa_is_infinite(ctx_, v));
      if (m.eval(inf, true).is_true()) {
        z3::expr negative = z3::expr(ctx_, Z3_mk_fpa_is_negative(ctx_, v));
        return m.eval(negative, true).is_true() ? -INFINITY : INFINITY;
      }
      z3::expr r = m.eval(z3::expr(ctx_, Z3_mk_fpa_to_real(ctx_, v)), true);
      return std::stod(r.get_decimal_string(12));
    }
  }
  std::string s = v.get_decimal_string(12);
  if (!s.empty() && s.back() == '?') s.pop_back();
  return std::stod(s);
}

}  // namespace refinery::prove
