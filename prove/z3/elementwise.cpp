// Symbolic semantics of the elementwise ops (ir/ops/elementwise.cpp): unary
// maths and activations, transcendental functions as uninterpreted ones,
// and the broadcasting binary and n-ary ops.
#include "prove/z3/semantics.h"

#include <fmt/format.h>

namespace refinery::prove::semantics {
namespace {

using Expr = z3::expr;

Result relu(Ctx& c) {
  auto& d = c.d;
  return map_unary(c, [&](const Expr& x) { return z3::ite(d.lt(x, d.num(0)), d.num(0), x); });
}

Result neg(Ctx& c) {
  return map_unary(c, [&](const Expr& x) { return c.d.neg(x); });
}

Result abs(Ctx& c) {
  return map_unary(c, [&](const Expr& x) { return c.d.abs(x); });
}

Result sign(Ctx& c) {
  auto& d = c.d;
  return map_unary(c, [&](const Expr& x) {
    return z3::ite(d.lt(x, d.num(0)), d.num(-1), z3::ite(d.lt(d.num(0), x), d.num(1), d.num(0)));
  });
}

Result reciprocal(Ctx& c) {
  return map_unary(c, [&](const Expr& x) { return c.d.div(c.d.num(1), x); });
}
Result sqrt(Ctx& c) {
  return map_unary(c, [&](const Expr& x) { return c.d.sqrt(x); });
}

// An uninterpreted function of one argument (exp, log, tanh, ...).
template <const char* Name>
Result uninterpreted(Ctx& c) {
  return map_unary(c, [&](const Expr& x) { return c.d.fn(Name, x); });
}
constexpr char kExp[] = "exp", kTanh[] = "tanh", kSigmoid[] = "sigmoid", kErf[] = "erf", kSoftplus[] = "softplus",
               kSin[] = "sin", kCos[] = "cos";

// log is defined for positive arguments (over the reals).
Result log(Ctx& c) {
  return map_unary(c, [&](const Expr& x) { return c.d.log(x); });
}

// softsign is total: 1 + |x| is never 0.
Result softsign(Ctx& c) {
  auto& d = c.d;
  return map_unary(c, [&](const Expr& x) { return d.div(x, d.add(d.num(1), d.abs(x)), false); });
}

Result leaky_relu(Ctx& c) {
  auto& d = c.d;
  double a = c.attr_float("alpha");
  return map_unary(c, [&](const Expr& x) { return z3::ite(d.lt(x, d.num(0)), d.mul(d.num(a), x), x); });
}

Result elu(Ctx& c) {
  auto& d = c.d;
  double a = c.attr_float("alpha");
  return map_unary(c, [&](const Expr& x) {
    return z3::ite(d.lt(x, d.num(0)), d.mul(d.num(a), d.sub(d.fn("exp", x), d.num(1))), x);
  });
}

Result hard_sigmoid(Ctx& c) {
  auto& d = c.d;
  double a = c.attr_float("alpha"), b = c.attr_float("beta");
  return map_unary(
      c, [&](const Expr& x) { return d.max(d.num(0), d.min(d.num(1), d.add(d.mul(d.num(a), x), d.num(b)))); });
}

Result hard_swish(Ctx& c) {
  auto& d = c.d;
  return map_unary(c, [&](const Expr& x) {
    return d.mul(
        x, d.max(d.num(0), d.min(d.num(1), d.add(d.mul(d.num(static_cast<double>(1.0f / 6.0f)), x), d.num(0.5)))));
  });
}

// ONNX Gelu: x/2 (1 + erf(x / sqrt 2)), the square root of 2 being the
// f32 constant (1.41421353816986083984375) that every f32 implementation
// and exporter divides by; "tanh": x/2 (1 + tanh(c (x + 0.044715 x^3))) with
// c the f32 sqrt(2/pi).
Result gelu(Ctx& c) {
  auto& d = c.d;
  std::string approximate = c.attrs().get_string("approximate");
  if (approximate == "none")
    return map_unary(c, [&](const Expr& x) {
      return d.mul(
          d.mul(x, d.num(0.5)),
          d.add(d.num(1), d.fn(kErf, d.div(x, d.num(static_cast<double>(static_cast<float>(std::sqrt(2.0))))))));
    });
  if (approximate == "tanh")
    return map_unary(c, [&](const Expr& x) {
      Expr inner = d.add(x, d.mul(d.num(static_cast<double>(0.044715f)), d.mul(x, d.mul(x, x))));
      return d.mul(
          d.mul(x, d.num(0.5)),
          d.add(d.num(1),
                d.fn(kTanh, d.mul(d.num(static_cast<double>(static_cast<float>(std::sqrt(2.0 / M_PI)))), inner))));
    });
  return fail_sem(c, fmt::format("gelu with approximate \"{}\"", approximate));
}

Result clip(Ctx& c) {
  auto& d = c.d;
  std::optional<Expr> lo, hi;
  if (c.has(1)) lo = c.x(1).elems[0];
  if (c.has(2)) hi = c.x(2).elems[0];
  return map_unary(c, [&](const Expr& x) {
    Expr y = x;
    if (lo) y = d.max(*lo, y);
    if (hi) y = d.min(*hi, y);
    return y;
  });
}

Result prelu(Ctx& c) {
  auto& d = c.d;
  return map_nary(c, [&](const Expr& x, const Expr& s) { return z3::ite(d.lt(x, d.num(0)), d.mul(s, x), x); });
}

Result add(Ctx& c) {
  return map_nary(c, [&](const Expr& a, const Expr& b) { return c.d.add(a, b); });
}
Result sub(Ctx& c) {
  return map_nary(c, [&](const Expr& a, const Expr& b) { return c.d.sub(a, b); });
}
Result mul(Ctx& c) {
  return map_nary(c, [&](const Expr& a, const Expr& b) { return c.d.mul(a, b); });
}
Result div(Ctx& c) {
  return map_nary(c, [&](const Expr& a, const Expr& b) { return c.d.div(a, b); });
}
Result max(Ctx& c) {
  return map_nary(c, [&](const Expr& a, const Expr& b) { return c.d.max(a, b); });
}
Result min(Ctx& c) {
  return map_nary(c, [&](const Expr& a, const Expr& b) { return c.d.min(a, b); });
}

Result mean(Ctx& c) {
  auto& d = c.d;
  auto r = map_nary(c, [&](const Expr& a, const Expr& b) { return d.add(a, b); });
  if (!r) return r;
  for (auto& x : (*r)[0].elems) x = d.div(x, d.num(static_cast<double>(c.in.size())));
  return r;
}

Result pow(Ctx& c) {
  auto& d = c.d;
  if (!c.x(1).concrete || c.x(1).concrete->numel() != 1) return fail_sem(c, "pow with a non-constant exponent");
  double p = c.x(1).concrete->as_double(0);
  if (p == 2) return map_unary(c, [&](const Expr& x) { return d.mul(x, x); });
  if (p == 3) return map_unary(c, [&](const Expr& x) { return d.mul(d.mul(x, x), x); });
  if (p == 1) return same_elems(c);
  if (p == 0.5) return map_unary(c, [&](const Expr& x) { return d.sqrt(x); });
  if (p == -1) return map_unary(c, [&](const Expr& x) { return d.div(d.num(1), x); });
  return fail_sem(c, fmt::format("pow with exponent {}", p));
}

}  // namespace

void fill_elementwise(Table& t) {
  using ir::Op;
  define(t, Op::Identity, same_elems);
  define(t, Op::Neg, neg);
  define(t, Op::Abs, abs);
  define(t, Op::Sign, sign);
  define(t, Op::Relu, relu);
  define(t, Op::Reciprocal, reciprocal);
  define(t, Op::Sqrt, sqrt);
  define(t, Op::Exp, uninterpreted<kExp>);
  define(t, Op::Log, log);
  define(t, Op::Tanh, uninterpreted<kTanh>);
  define(t, Op::Sigmoid, uninterpreted<kSigmoid>);
  define(t, Op::Erf, uninterpreted<kErf>);
  define(t, Op::Softplus, uninterpreted<kSoftplus>);
  define(t, Op::Sin, uninterpreted<kSin>);
  define(t, Op::Cos, uninterpreted<kCos>);
  define(t, Op::Softsign, softsign);
  define(t, Op::LeakyRelu, leaky_relu);
  define(t, Op::Elu, elu);
  define(t, Op::HardSigmoid, hard_sigmoid);
  define(t, Op::HardSwish, hard_swish);
  define(t, Op::Gelu, gelu);
  define(t, Op::Clip, clip);
  define(t, Op::PRelu, prelu);
  define(t, Op::Add, add);
  define(t, Op::Sum, add);
  define(t, Op::Sub, sub);
  define(t, Op::Mul, mul);
  define(t, Op::Div, div);
  define(t, Op::Max, max);
  define(t, Op::Min, min);
  define(t, Op::Mean, mean);
  define(t, Op::Pow, pow);
}

}  // namespace refinery::prove::semantics
