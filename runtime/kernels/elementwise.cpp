// Elementwise kernels: unary maths, activations, broadcasting binary and
// n-ary ops, comparisons, logic, Where, Cast. f16/bf16 maths runs in f32 and
// rounds back once, as numpy does for float16.
#include <cmath>

#include "runtime/aten.h"

namespace refinery::runtime {
namespace {

using ir::Op;

// A unary function, applied in f32 for low-precision inputs.
template <at::Tensor (*F)(const at::Tensor&)>
KernelResult float_unary(const KernelCall& c) {
  return one(restore(F(upcast(c.in(0))), c.in(0)));
}

float attr(const KernelCall& c, const char* name) { return c.op_attrs().get_float(name); }

at::Tensor softsign(const at::Tensor& x) { return x / (at::abs(x) + 1); }
at::Tensor reciprocal(const at::Tensor& x) { return at::reciprocal(x); }
at::Tensor softplus(const at::Tensor& x) { return at::log1p(at::exp(x)); }
at::Tensor hardswish(const at::Tensor& x) { return x * at::clamp(x / 6 + 0.5, 0, 1); }

at::Tensor relu_fn(const at::Tensor& x) { return at::clamp_min(x, 0); }
at::Tensor sign_fn(const at::Tensor& x) { return at::sign(x); }
at::Tensor abs_fn(const at::Tensor& x) { return at::abs(x); }
at::Tensor neg_fn(const at::Tensor& x) { return at::neg(x); }
at::Tensor round_fn(const at::Tensor& x) { return at::round(x); }  // half to even, as ONNX

KernelResult leaky_relu(const KernelCall& c) {
  at::Tensor x = upcast(c.in(0));
  return one(restore(at::where(x >= 0, x, x * attr(c, "alpha")), c.in(0)));
}

KernelResult elu(const KernelCall& c) {
  at::Tensor x = upcast(c.in(0));
  return one(restore(at::where(x > 0, x, (at::exp(x) - 1) * attr(c, "alpha")), c.in(0)));
}

KernelResult celu(const KernelCall& c) {
  at::Tensor x = upcast(c.in(0));
  float alpha = attr(c, "alpha");
  return one(restore(at::clamp_min(x, 0) + at::clamp_max((at::exp(x / alpha) - 1) * alpha, 0), c.in(0)));
}

KernelResult selu(const KernelCall& c) {
  at::Tensor x = upcast(c.in(0));
  float alpha = attr(c, "alpha"), gamma = attr(c, "gamma");
  return one(restore(at::where(x > 0, x * gamma, (at::exp(x) * alpha - alpha) * gamma), c.in(0)));
}

KernelResult hard_sigmoid(const KernelCall& c) {
  at::Tensor x = upcast(c.in(0));
  return one(restore(at::clamp(x * attr(c, "alpha") + attr(c, "beta"), 0, 1), c.in(0)));
}

// ONNX Gelu (opset 20): x/2 (1 + erf(x / sqrt 2)), or with `approximate`
// "tanh", x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), its constants the
// f32 ones every exporter writes and the prover's definition uses
// (prove/z3/elementwise.cpp). ATen's f32 kernel rounds them alike; in f64
// (validation's wide run) the definition is computed as it stands, for
// ATen's f64 kernel has the exact constants, and a graph that writes GELU
// out (x / 1.4142135) would differ from one Gelu by their rounding.
KernelResult gelu(const KernelCall& c) {
  at::Tensor x = upcast(c.in(0));
  std::string approximate = c.op_attrs().get_string("approximate");
  if (approximate != "none" && approximate != "tanh")
    return std::unexpected(fmt::format("gelu: approximate \"{}\" is neither \"none\" nor \"tanh\"", approximate));
  if (x.scalar_type() != at::kDouble) return one(restore(at::gelu(x, approximate), c.in(0)));
  auto f32 = [](double v) { return static_cast<double>(static_cast<float>(v)); };
  at::Tensor inner = approximate == "none"
                         ? at::erf(x / f32(std::sqrt(2.0)))
                         : at::tanh(f32(std::sqrt(2.0 / M_PI)) * (x + f32(0.044715) * (x * x * x)));
  return one(restore(x * 0.5 * (inner + 1.0), c.in(0)));
}

KernelResult thresholded_relu(const KernelCall& c) {
  at::Tensor x = upcast(c.in(0));
  return one(restore(at::where(x > attr(c, "alpha"), x, at::zeros({}, x.options())), c.in(0)));
}

KernelResult clip(const KernelCall& c) {
  at::Tensor x = upcast(c.in(0));
  c10::optional<at::Scalar> lo, hi;
  if (c.has(1)) lo = upcast(c.in(1)).reshape({}).item();
  if (c.has(2)) hi = upcast(c.in(2)).reshape({}).item();
  if (!lo && !hi) return one(c.in(0));
  return one(restore(at::clamp(x, lo, hi), c.in(0)));
}

KernelResult prelu(const KernelCall& c) {
  at::Tensor x = upcast(c.in(0));
  return one(restore(at::where(x < 0, x * upcast(c.in(1)), x), c.in(0)));
}

KernelResult logical_not(const KernelCall& c) { return one(at::logical_not(c.in(0))); }
KernelResult identity(const KernelCall& c) { return one(c.in(0)); }
KernelResult isnan(const KernelCall& c) { return one(at::isnan(c.in(0))); }

KernelResult isinf(const KernelCall& c) {
  bool neg = c.op_attrs().get_int("detect_negative") != 0, pos = c.op_attrs().get_int("detect_positive") != 0;
  const at::Tensor& x = c.in(0);
  at::Tensor r = at::zeros(x.sizes(), x.options().dtype(at::kBool));
  if (pos) r = at::logical_or(r, at::isposinf(x));
  if (neg) r = at::logical_or(r, at::isneginf(x));
  return one(r);
}

// --- binary and n-ary ---

bool is_integral(const at::Tensor& t) { return at::isIntegralType(t.scalar_type(), /*includeBool=*/true); }

// Low-precision operands are computed in f32 and rounded once.
template <at::Tensor (*F)(const at::Tensor&, const at::Tensor&)>
KernelResult binary(const KernelCall& c) {
  return one(restore(F(upcast(c.in(0)), upcast(c.in(1))), c.in(0)));
}
at::Tensor add(const at::Tensor& a, const at::Tensor& b) { return at::add(a, b); }
at::Tensor sub(const at::Tensor& a, const at::Tensor& b) { return at::sub(a, b); }
at::Tensor mul(const at::Tensor& a, const at::Tensor& b) { return at::mul(a, b); }
// ONNX integer division truncates toward zero (C semantics; numpy's true
// division cast back to the integer type in the reference).
at::Tensor div(const at::Tensor& a, const at::Tensor& b) {
  return is_integral(a) ? at::div(a, b, "trunc") : at::div(a, b);
}

KernelResult pow(const KernelCall& c) {
  // The exponent may have another type; the result has the base's type.
  const at::Tensor& base = c.in(0);
  const at::Tensor& e = c.in(1);
  at::Tensor r;
  if (!is_integral(base))
    r = at::pow(upcast(base), e.to(upcast(base).scalar_type()));
  else if (is_integral(e))
    r = at::pow(base.to(at::kLong), e.to(at::kLong));
  else
    r = at::pow(base.to(at::kDouble), e.to(at::kDouble));
  return one(r.to(base.scalar_type()));
}

KernelResult mod(const KernelCall& c) {
  // fmod = 0: the result takes the divisor's sign (Python %); fmod = 1: the
  // dividend's sign (C fmod).
  at::Tensor a = upcast(c.in(0)), b = upcast(c.in(1));
  at::Tensor r = c.op_attrs().get_int("fmod") != 0 ? at::fmod(a, b) : at::remainder(a, b);
  return one(restore(r, c.in(0)));
}

template <at::Tensor (*F)(const at::Tensor&, const at::Tensor&)>
KernelResult fold(const KernelCall& c) {
  at::Tensor acc = upcast(c.in(0));
  for (size_t i = 1; i < c.num_inputs(); ++i) acc = F(acc, upcast(c.in(i)));
  return one(restore(acc, c.in(0)));
}
at::Tensor maximum(const at::Tensor& a, const at::Tensor& b) { return at::maximum(a, b); }
at::Tensor minimum(const at::Tensor& a, const at::Tensor& b) { return at::minimum(a, b); }

KernelResult mean(const KernelCall& c) {
  at::Tensor acc = upcast(c.in(0));
  for (size_t i = 1; i < c.num_inputs(); ++i) acc = at::add(acc, upcast(c.in(i)));
  acc = is_integral(acc) ? at::div(acc, static_cast<int64_t>(c.num_inputs()), "trunc")
                         : acc / static_cast<double>(c.num_inputs());
  return one(restore(acc, c.in(0)));
}

template <at::Tensor (*F)(const at::Tensor&, const at::Tensor&)>
KernelResult predicate(const KernelCall& c) {
  return one(F(upcast(c.in(0)), upcast(c.in(1))));
}
at::Tensor eq(const at::Tensor& a, const at::Tensor& b) { return at::eq(a, b); }
at::Tensor lt(const at::Tensor& a, const at::Tensor& b) { return at::lt(a, b); }
at::Tensor le(const at::Tensor& a, const at::Tensor& b) { return at::le(a, b); }
at::Tensor gt(const at::Tensor& a, const at::Tensor& b) { return at::gt(a, b); }
at::Tensor ge(const at::Tensor& a, const at::Tensor& b) { return at::ge(a, b); }
at::Tensor logical_and(const at::Tensor& a, const at::Tensor& b) { return at::logical_and(a, b); }
at::Tensor logical_or(const at::Tensor& a, const at::Tensor& b) { return at::logical_or(a, b); }
at::Tensor logical_xor(const at::Tensor& a, const at::Tensor& b) { return at::logical_xor(a, b); }

KernelResult where(const KernelCall& c) { return one(at::where(c.in(0), c.in(1), c.in(2))); }

// ONNX Cast: float to integer truncates toward zero, anything to bool is
// "not zero", narrowing integers wrap.
at::Tensor onnx_cast(const at::Tensor& x, ir::DType to) {
  if (at::isFloatingType(x.scalar_type()) && ir::is_integer(to)) return cast_to(at::trunc(x.to(at::kDouble)), to);
  return cast_to(x, to);
}

KernelResult cast(const KernelCall& c) {
  int64_t to = c.attrs().get_int("to", 0);
  auto dtype = ir::dtype_from_onnx(static_cast<int>(to));
  if (!dtype) return kernel_error(fmt::format("cannot cast to ONNX type {}", to));
  return one(onnx_cast(c.in(0), *dtype));
}

KernelResult cast_like(const KernelCall& c) { return one(onnx_cast(c.in(0), c.input_dtype(1))); }

}  // namespace

void register_elementwise_kernels(KernelTable& t) {
  auto set = [&](Op op, Kernel k) { t[static_cast<size_t>(op)] = k; };
  set(Op::Abs, float_unary<abs_fn>);
  set(Op::Neg, float_unary<neg_fn>);
  set(Op::Exp, float_unary<at::exp>);
  set(Op::Log, float_unary<at::log>);
  set(Op::Sqrt, float_unary<at::sqrt>);
  set(Op::Reciprocal, float_unary<reciprocal>);
  set(Op::Floor, float_unary<at::floor>);
  set(Op::Ceil, float_unary<at::ceil>);
  set(Op::Round, float_unary<round_fn>);
  set(Op::Sign, float_unary<sign_fn>);
  set(Op::Sin, float_unary<at::sin>);
  set(Op::Cos, float_unary<at::cos>);
  set(Op::Tan, float_unary<at::tan>);
  set(Op::Asin, float_unary<at::asin>);
  set(Op::Acos, float_unary<at::acos>);
  set(Op::Atan, float_unary<at::atan>);
  set(Op::Sinh, float_unary<at::sinh>);
  set(Op::Cosh, float_unary<at::cosh>);
  set(Op::Asinh, float_unary<at::asinh>);
  set(Op::Acosh, float_unary<at::acosh>);
  set(Op::Atanh, float_unary<at::atanh>);
  set(Op::Erf, float_unary<at::erf>);
  set(Op::Not, logical_not);
  set(Op::Identity, identity);
  set(Op::IsNaN, isnan);
  set(Op::IsInf, isinf);
  set(Op::Relu, float_unary<relu_fn>);
  set(Op::Sigmoid, float_unary<at::sigmoid>);
  set(Op::Tanh, float_unary<at::tanh>);
  set(Op::Softplus, float_unary<softplus>);
  set(Op::Softsign, float_unary<softsign>);
  set(Op::LeakyRelu, leaky_relu);
  set(Op::Elu, elu);
  set(Op::Selu, selu);
  set(Op::Celu, celu);
  set(Op::HardSigmoid, hard_sigmoid);
  set(Op::HardSwish, float_unary<hardswish>);
  set(Op::Gelu, gelu);
  set(Op::ThresholdedRelu, thresholded_relu);
  set(Op::Clip, clip);
  set(Op::PRelu, prelu);
  set(Op::Add, binary<add>);
  set(Op::Sub, binary<sub>);
  set(Op::Mul, binary<mul>);
  set(Op::Div, binary<div>);
  set(Op::Pow, pow);
  set(Op::Mod, mod);
  set(Op::Max, fold<maximum>);
  set(Op::Min, fold<minimum>);
  set(Op::Sum, fold<add>);
  set(Op::Mean, mean);
  set(Op::Equal, predicate<eq>);
  set(Op::Less, predicate<lt>);
  set(Op::LessOrEqual, predicate<le>);
  set(Op::Greater, predicate<gt>);
  set(Op::GreaterOrEqual, predicate<ge>);
  set(Op::And, predicate<logical_and>);
  set(Op::Or, predicate<logical_or>);
  set(Op::Xor, predicate<logical_xor>);
  set(Op::Where, where);
  set(Op::Cast, cast);
  set(Op::CastLike, cast_like);
}

}  // namespace refinery::runtime
