// Elementwise ops: unary maths, activations, broadcasting binary and n-ary
// ops, comparisons, logic, Where, Cast.
#include "ir/ops/registry.h"

namespace refinery::ir::ops {
namespace {

Result unary_float(InferContext& c) {
  if (!is_float(c.in(0).dtype))
    return error(fmt::format("expects a floating-point input, got {}", dtype_name(c.in(0).dtype)));
  return same_as_first(c);
}

Result unary_numeric(InferContext& c) {
  if (c.in(0).dtype == DType::boolean) return error("expects a numeric input, got bool");
  return same_as_first(c);
}

Result unary_bool(InferContext& c) {
  if (c.in(0).dtype != DType::boolean)
    return error(fmt::format("expects a bool input, got {}", dtype_name(c.in(0).dtype)));
  return same_as_first(c);
}

Result float_predicate(InferContext& c) {
  if (!is_float(c.in(0).dtype)) return error("expects a floating-point input");
  c.outputs[0] = TensorType{DType::boolean, c.shape(0)};
  return {};
}

// Broadcast every present input; all share input 0's dtype (unless `mixed`).
Result broadcast_all(InferContext& c, DType out_dtype, bool check_dtypes = true) {
  if (check_dtypes)
    if (auto ok = same_dtype(c, 0, 1, c.inputs.size()); !ok) return ok;
  Shape s = c.shape(0);
  for (size_t i = 1; i < c.inputs.size(); ++i) {
    if (!c.has_input(i)) continue;
    auto b = broadcast(s, c.shape(i));
    if (!b) return std::unexpected(b.error());
    s = std::move(*b);
  }
  c.outputs[0] = TensorType{out_dtype, std::move(s)};
  return {};
}

// The contents of inputs `a` and `b`, paired entry by entry with
// broadcasting, when both are known and the result has rank 1 or less.
std::optional<std::vector<std::pair<Dim, Dim>>> paired_contents(const InferContext& c, size_t a, size_t b) {
  if (c.outputs[0].shape.rank() > 1) return std::nullopt;
  auto x = c.contents(a), y = c.contents(b);
  if (!x || !y || (x->size() != y->size() && x->size() != 1 && y->size() != 1)) return std::nullopt;
  std::vector<std::pair<Dim, Dim>> out;
  for (size_t i = 0; i < std::max(x->size(), y->size()); ++i)
    out.emplace_back((*x)[x->size() == 1 ? 0 : i], (*y)[y->size() == 1 ? 0 : i]);
  return out;
}

// Small integer arithmetic is propagated so Reshape targets computed from
// Shape stay known (ONNX data propagation). `f` gives nullopt where the
// result is not an int64 (overflow, a division by 0): that entry is unknown.
Result arith(InferContext& c, std::optional<int64_t> (*f)(int64_t, int64_t)) {
  if (c.in(0).dtype == DType::boolean) return error("expects numeric inputs, got bool");
  if (auto ok = broadcast_all(c, c.in(0).dtype); !ok) return ok;
  if (f == nullptr || c.in(0).dtype != DType::i64) return {};
  auto pairs = paired_contents(c, 0, 1);
  if (!pairs) return {};
  std::vector<Dim> out;
  for (const auto& [x, y] : *pairs) {
    if (!x.is_integer() || !y.is_integer()) return {};
    auto r = f(x.value(), y.value());
    out.push_back(r ? Dim::integer(*r) : Dim::unknown());
  }
  c.known[0] = std::move(out);
  return {};
}

Result add(InferContext& c) {
  return arith(c, [](int64_t a, int64_t b) -> std::optional<int64_t> {
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? std::nullopt : std::optional(r);
  });
}
Result sub(InferContext& c) {
  return arith(c, [](int64_t a, int64_t b) -> std::optional<int64_t> {
    int64_t r;
    return __builtin_sub_overflow(a, b, &r) ? std::nullopt : std::optional(r);
  });
}
Result mul(InferContext& c) {
  return arith(c, [](int64_t a, int64_t b) -> std::optional<int64_t> {
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? std::nullopt : std::optional(r);
  });
}
Result div(InferContext& c) {
  return arith(c, [](int64_t a, int64_t b) -> std::optional<int64_t> {
    if (b == 0 || (a == INT64_MIN && b == -1)) return std::nullopt;
    return a / b;
  });
}
Result numeric_nary(InferContext& c) { return arith(c, nullptr); }

Result pow_rule(InferContext& c) {  // base and exponent may differ in type
  if (c.in(0).dtype == DType::boolean) return error("expects a numeric base");
  return broadcast_all(c, c.in(0).dtype, false);
}

// Equal of known integer contents is known (1 or 0 per entry): torch's
// expand(-1, 1, S, -1) finds its -1 entries so. A symbol names a size, so
// it equals no negative integer; an entry that cannot be told stays unknown.
Result compare(InferContext& c) {
  if (auto ok = broadcast_all(c, DType::boolean); !ok) return ok;
  if (c.op != Op::Equal || !is_integer(c.in(0).dtype)) return {};
  auto pairs = paired_contents(c, 0, 1);
  if (!pairs) return {};
  std::vector<Dim> out;
  for (const auto& [x, y] : *pairs) {
    if (x.is_integer() && y.is_integer())
      out.emplace_back(x.value() == y.value() ? 1 : 0);
    else if (x.is_symbol() && x == y)
      out.emplace_back(1);
    else if ((x.is_symbol() && y.is_negative()) || (x.is_negative() && y.is_symbol()))
      out.emplace_back(0);
    else
      out.push_back(Dim::unknown());
  }
  c.known[0] = std::move(out);
  return {};
}

Result logic(InferContext& c) {
  if (c.in(0).dtype != DType::boolean || c.in(1).dtype != DType::boolean) return error("expects bool inputs");
  return broadcast_all(c, DType::boolean);
}

Result where(InferContext& c) {
  if (c.in(0).dtype != DType::boolean)
    return error(fmt::format("condition must be bool, got {}", dtype_name(c.in(0).dtype)));
  if (auto ok = same_dtype(c, 1, 2, 3); !ok) return ok;
  auto s = broadcast(c.shape(0), c.shape(1));
  if (!s) return std::unexpected(s.error());
  auto s2 = broadcast(*s, c.shape(2));
  if (!s2) return std::unexpected(s2.error());
  c.outputs[0] = TensorType{c.in(1).dtype, std::move(*s2)};
  // Known contents pick entry by entry (the condition's from Equal above).
  auto cond = c.contents(0);
  auto pairs = paired_contents(c, 1, 2);
  if (!is_integer(c.in(1).dtype) || !cond || !pairs || (cond->size() != pairs->size() && cond->size() != 1) ||
      (pairs->size() == 1 && cond->size() != 1))
    return {};
  std::vector<Dim> out;
  for (size_t i = 0; i < pairs->size(); ++i) {
    const Dim& k = (*cond)[cond->size() == 1 ? 0 : i];
    const auto& [x, y] = (*pairs)[i];
    if (k.is_static())
      out.push_back(k.size() != 0 ? x : y);
    else
      out.push_back(x == y ? x : Dim::unknown());
  }
  c.known[0] = std::move(out);
  return {};
}

Result clip(InferContext& c) {
  if (auto ok = same_dtype(c, 0, 1, 3); !ok) return ok;
  for (size_t i = 1; i < 3; ++i)
    if (c.has_input(i) && c.shape(i).rank() != 0 && !(c.shape(i).rank() == 1 && c.shape(i)[0] == Dim(1)))
      return error(fmt::format("min and max must be scalars, input {} is {}", i, c.shape(i).str()));
  return same_as_first(c);
}

Result prelu(InferContext& c) {
  if (auto ok = same_dtype(c, 0, 1, 2); !ok) return ok;
  auto s = broadcast(c.shape(0), c.shape(1));  // slope broadcasts to x (unidirectional)
  if (!s) return std::unexpected(s.error());
  if (s->rank() != c.shape(0).rank()) return error("slope has a higher rank than the input");
  return same_as_first(c);
}

Result cast(InferContext& c) {
  int64_t to = c.attrs->get_int("to", 0);
  auto t = dtype_from_onnx(static_cast<int>(to));
  if (!t) return error(fmt::format("cannot cast to ONNX type {}", to));
  c.outputs[0] = TensorType{*t, c.shape(0)};
  if (*t == DType::i64 || *t == DType::i32)
    if (auto v = c.contents(0)) c.known[0] = std::move(*v);
  return {};
}

Result cast_like(InferContext& c) {
  c.outputs[0] = TensorType{c.in(1).dtype, c.shape(0)};
  return {};
}

Result identity(InferContext& c) {
  c.outputs[0] = c.in(0);
  if (auto v = c.contents(0)) c.known[0] = std::move(*v);
  return {};
}

}  // namespace

void register_elementwise(Table& t) {
  auto unary = [&](Op op, InferFn f, std::vector<AttrSpec> attrs = {}) {
    define(t, OpInfo{.op = op,
                     .min_inputs = 1,
                     .max_inputs = 1,
                     .attrs = std::move(attrs),
                     .shape_rule = f,
                     .elementwise = true});
  };
  for (Op op : {Op::Exp,   Op::Log,   Op::Sqrt, Op::Reciprocal, Op::Floor, Op::Ceil,     Op::Round,    Op::Sin,
                Op::Cos,   Op::Tan,   Op::Asin, Op::Acos,       Op::Atan,  Op::Sinh,     Op::Cosh,     Op::Asinh,
                Op::Acosh, Op::Atanh, Op::Erf,  Op::Sigmoid,    Op::Tanh,  Op::Softplus, Op::Softsign, Op::HardSwish})
    unary(op, unary_float);
  for (Op op : {Op::Abs, Op::Neg, Op::Sign, Op::Relu}) unary(op, unary_numeric);
  unary(Op::Not, unary_bool);
  unary(Op::Identity, identity);
  unary(Op::IsNaN, float_predicate);
  unary(Op::IsInf, float_predicate, {int_attr("detect_negative", 1), int_attr("detect_positive", 1)});
  unary(Op::LeakyRelu, unary_float, {float_attr("alpha", 0.01f)});
  unary(Op::Elu, unary_float, {float_attr("alpha", 1.0f)});
  unary(Op::Celu, unary_float, {float_attr("alpha", 1.0f)});
  unary(Op::ThresholdedRelu, unary_float, {float_attr("alpha", 1.0f)});
  unary(Op::Selu, unary_float,
        {float_attr("alpha", 1.67326319217681884765625f), float_attr("gamma", 1.05070102214813232421875f)});
  unary(Op::HardSigmoid, unary_float, {float_attr("alpha", 0.2f), float_attr("beta", 0.5f)});
  unary(Op::Gelu, unary_float, {string_attr("approximate", "none")});
  unary(Op::Cast, cast, {{"to", AttrKind::Int, AttrUse::Required}});
  define(t, OpInfo{.op = Op::CastLike, .min_inputs = 2, .max_inputs = 2, .shape_rule = cast_like, .elementwise = true});
  define(t, OpInfo{.op = Op::Clip, .min_inputs = 1, .max_inputs = 3, .shape_rule = clip, .elementwise = true});
  define(t, OpInfo{.op = Op::PRelu, .min_inputs = 2, .max_inputs = 2, .shape_rule = prelu, .elementwise = true});

  auto binary = [&](Op op, InferFn f, bool commutative, std::vector<AttrSpec> attrs = {}) {
    define(t, OpInfo{.op = op,
                     .min_inputs = 2,
                     .max_inputs = 2,
                     .attrs = std::move(attrs),
                     .shape_rule = f,
                     .elementwise = true,
                     .commutative = commutative});
  };
  binary(Op::Add, add, true);
  binary(Op::Sub, sub, false);
  binary(Op::Mul, mul, true);
  binary(Op::Div, div, false);
  binary(Op::Pow, pow_rule, false);
  binary(Op::Mod, numeric_nary, false, {int_attr("fmod", 0)});
  for (Op op : {Op::Equal, Op::Less, Op::LessOrEqual, Op::Greater, Op::GreaterOrEqual})
    binary(op, compare, op == Op::Equal);
  for (Op op : {Op::And, Op::Or, Op::Xor}) binary(op, logic, true);
  for (Op op : {Op::Max, Op::Min, Op::Sum, Op::Mean})
    define(t, OpInfo{.op = op,
                     .min_inputs = 1,
                     .max_inputs = -1,
                     .shape_rule = numeric_nary,
                     .elementwise = true,
                     .commutative = true});
  define(t, OpInfo{.op = Op::Where, .min_inputs = 3, .max_inputs = 3, .shape_rule = where, .elementwise = true});
}

}  // namespace refinery::ir::ops
