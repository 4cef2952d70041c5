// Symbolic semantics of the reductions (ir/ops/reduce.cpp): ReduceSum (axes
// as a constant input) and ReduceMean, ReduceMax, ReduceMin,
// ReduceSumSquare (axes as an attribute).
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

// ReduceMean, ReduceMax, ReduceMin, ReduceSumSquare: the axes are an attribute.
template <class F>
Result reduce_attr(Ctx& c, F combine) {
  return reduce_with(c, reduced_axes(c, c.n.attrs.maybe_ints("axes")), combine);
}

Result reduce_mean(Ctx& c) {
  return reduce_attr(c, [&](const std::vector<z3::expr>& g) {
    return c.d.div(sum_of(c.d, g), c.d.num(static_cast<double>(g.size())));
  });
}

Result reduce_max(Ctx& c) {
  return reduce_attr(c, [&](const std::vector<z3::expr>& g) {
    z3::expr acc = g[0];
    for (size_t i = 1; i < g.size(); ++i) acc = c.d.max(acc, g[i]);
    return acc;
  });
}

Result reduce_min(Ctx& c) {
  return reduce_attr(c, [&](const std::vector<z3::expr>& g) {
    z3::expr acc = g[0];
    for (size_t i = 1; i < g.size(); ++i) acc = c.d.min(acc, g[i]);
    return acc;
  });
}

Result reduce_sum_square(Ctx& c) {
  return reduce_attr(c, [&](const std::vector<z3::expr>& g) {
    std::vector<z3::expr> sq;
    for (const auto& x : g) sq.push_back(c.d.mul(x, x));
    return sum_of(c.d, sq);
  });
}

}  // namespace

void fill_reduce(Table& t) {
  using ir::Op;
  define(t, Op::ReduceSum, reduce_sum);
  define(t, Op::ReduceMean, reduce_mean);
  define(t, Op::ReduceMax, reduce_max);
  define(t, Op::ReduceMin, reduce_min);
  define(t, Op::ReduceSumSquare, reduce_sum_square);
}

}  // namespace refinery::prove::semantics
