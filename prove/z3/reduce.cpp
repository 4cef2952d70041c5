// Symbolic semantics of the reductions (ir/ops/reduce.cpp): ReduceSum (axes
// as a constant input) and ReduceMean, ReduceMax, ReduceMin, ReduceProd,
// ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp (axes
// as an attribute). Over an empty axis each gives ONNX's value for an empty
// set: the sums 0, the product 1, max -inf, min +inf, the logs -inf, the
// mean NaN (SymDomain::empty_value: over the reals, which have no infinity
// and no NaN, a value the binary32 query compares).
#include <cmath>

#include "prove/z3/semantics.h"

namespace refinery::prove::semantics {
namespace {

std::vector<bool> reduced_axes(Ctx& c, std::optional<std::vector<int64_t>> axes) {
  size_t r = c.x(0).shape.size();
  std::vector<bool> red(r, !axes || axes->empty());
  if (axes)
    for (int64_t a : *axes) red[static_cast<size_t>(c.axis(a, r))] = true;
  return red;
}

Result reduce_sum(Ctx& c) {
  auto axes = c.has(1) ? c.ints(1) : std::optional<std::vector<int64_t>>();
  if (c.has(1) && !axes) return fail_sem(c, "reduce_sum with unknown axes");
  if ((!axes || axes->empty()) && c.attr_int("noop_with_empty_axes")) return same_elems(c);
  return reduce_with(c, reduced_axes(c, axes), [&](const std::vector<z3::expr>& g) { return sum_of(c.d, g); });
}

// The other reductions: the axes are an attribute.
template <class F>
Result reduce_attr(Ctx& c, F combine) {
  auto axes = c.n.attrs.maybe_ints("axes");
  if ((!axes || axes->empty()) && c.attr_int("noop_with_empty_axes")) return same_elems(c);
  return reduce_with(c, reduced_axes(c, axes), combine);
}

Result reduce_mean(Ctx& c) {
  return reduce_attr(c, [&](const std::vector<z3::expr>& g) {
    if (g.empty()) return c.d.empty_value(NAN);  // 0 / 0
    return c.d.div(sum_of(c.d, g), c.d.num(static_cast<double>(g.size())));
  });
}

// max or min, left to right; of nothing, the infinity on the other side.
template <bool is_max>
Result reduce_extremum(Ctx& c) {
  return reduce_attr(c, [&](const std::vector<z3::expr>& g) {
    if (g.empty()) return c.d.empty_value(is_max ? -INFINITY : INFINITY);
    z3::expr acc = g[0];
    for (size_t i = 1; i < g.size(); ++i) acc = is_max ? c.d.max(acc, g[i]) : c.d.min(acc, g[i]);
    return acc;
  });
}

Result reduce_prod(Ctx& c) {
  return reduce_attr(c, [&](const std::vector<z3::expr>& g) {
    z3::expr acc = c.d.num(1);
    for (size_t i = 0; i < g.size(); ++i) acc = i == 0 ? g[0] : c.d.mul(acc, g[i]);
    return acc;
  });
}

// The sum of f(x) over each group.
template <class F>
Result reduce_sum_of(Ctx& c, F f) {
  return reduce_attr(c, [&](const std::vector<z3::expr>& g) {
    std::vector<z3::expr> terms;
    for (const auto& x : g) terms.push_back(f(x));
    return sum_of(c.d, terms);
  });
}

Result reduce_sum_square(Ctx& c) {
  return reduce_sum_of(c, [&](const z3::expr& x) { return c.d.mul(x, x); });
}

Result reduce_l1(Ctx& c) {
  return reduce_sum_of(c, [&](const z3::expr& x) { return c.d.abs(x); });
}

Result reduce_l2(Ctx& c) {
  return reduce_attr(c, [&](const std::vector<z3::expr>& g) {
    std::vector<z3::expr> sq;
    for (const auto& x : g) sq.push_back(c.d.mul(x, x));
    return c.d.sqrt(sum_of(c.d, sq));
  });
}

Result reduce_log_sum(Ctx& c) {
  return reduce_attr(c, [&](const std::vector<z3::expr>& g) {
    return g.empty() ? c.d.empty_value(-INFINITY) : c.d.log(sum_of(c.d, g));  // log 0
  });
}

Result reduce_log_sum_exp(Ctx& c) {
  return reduce_attr(c, [&](const std::vector<z3::expr>& g) {
    if (g.empty()) return c.d.empty_value(-INFINITY);  // log 0
    std::vector<z3::expr> ex;
    for (const auto& x : g) ex.push_back(c.d.fn("exp", x));
    return c.d.log(sum_of(c.d, ex), false);  // total: a sum of exponentials is positive
  });
}

}  // namespace

void fill_reduce(Table& t) {
  using ir::Op;
  define(t, Op::ReduceSum, reduce_sum);
  define(t, Op::ReduceMean, reduce_mean);
  define(t, Op::ReduceMax, reduce_extremum<true>);
  define(t, Op::ReduceMin, reduce_extremum<false>);
  define(t, Op::ReduceProd, reduce_prod);
  define(t, Op::ReduceL1, reduce_l1);
  define(t, Op::ReduceL2, reduce_l2);
  define(t, Op::ReduceSumSquare, reduce_sum_square);
  define(t, Op::ReduceLogSum, reduce_log_sum);
  define(t, Op::ReduceLogSumExp, reduce_log_sum_exp);
}

}  // namespace refinery::prove::semantics
