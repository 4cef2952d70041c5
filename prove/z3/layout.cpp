// Symbolic semantics of the layout ops (ir/ops/layout.cpp): the reshapes
// (the same elements in the same order), Transpose, Concat, Split, Slice,
// constant Pad, Expand and Gather. Integer inputs (pads, slice bounds) must be
// constants.
#include "prove/z3/semantics.h"

#include <algorithm>

namespace refinery::prove::semantics {
namespace {

Result transpose(Ctx& c) {
  const SymTensor& X = c.x(0);
  size_t r = X.shape.size();
  Shape perm = c.attrs().get_ints("perm");  // absent: the axes reversed (the op table's default)
  const Shape& o = c.out[0];
  std::vector<z3::expr> e;
  for (int64_t i = 0; i < numel(o); ++i) {
    Shape idx = unravel(i, o), src(r);
    for (size_t k = 0; k < r; ++k) src[static_cast<size_t>(perm[k])] = idx[k];
    e.push_back(X.elems[static_cast<size_t>(ravel(src, X.shape))]);
  }
  return one(make(o, std::move(e)));
}

Result concat(Ctx& c) {
  const Shape& o = c.out[0];
  size_t ax = static_cast<size_t>(c.axis(c.attr_int("axis"), o.size()));
  std::vector<z3::expr> e;
  for (int64_t i = 0; i < numel(o); ++i) {
    Shape idx = unravel(i, o);
    int64_t pos = idx[ax];
    for (const SymTensor* t : c.in) {
      if (pos < t->shape[ax]) {
        idx[ax] = pos;
        e.push_back(t->elems[static_cast<size_t>(ravel(idx, t->shape))]);
        break;
      }
      pos -= t->shape[ax];
    }
  }
  return one(make(o, std::move(e)));
}

Result split(Ctx& c) {
  const SymTensor& X = c.x(0);
  size_t ax = static_cast<size_t>(c.axis(c.attr_int("axis"), X.shape.size()));
  std::vector<SymTensor> outs;
  int64_t start = 0;
  for (const Shape& o : c.out) {
    std::vector<z3::expr> e;
    for (int64_t i = 0; i < numel(o); ++i) {
      Shape idx = unravel(i, o);
      idx[ax] += start;
      e.push_back(X.elems[static_cast<size_t>(ravel(idx, X.shape))]);
    }
    start += o[ax];
    outs.push_back(make(o, std::move(e)));
  }
  return outs;
}

Result slice(Ctx& c) {
  const SymTensor& X = c.x(0);
  size_t r = X.shape.size();
  auto starts = c.ints(1), ends = c.ints(2);
  if (!starts || !ends) return fail_sem(c, "slice with unknown bounds");
  std::vector<int64_t> axes, steps(starts->size(), 1);
  if (c.has(3))
    axes = *c.ints(3);
  else
    for (size_t i = 0; i < starts->size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (c.has(4)) steps = *c.ints(4);
  Shape begin(r, 0), step(r, 1);
  for (size_t i = 0; i < axes.size(); ++i) {
    size_t a = static_cast<size_t>(c.axis(axes[i], r));
    int64_t dim = X.shape[a], s = (*starts)[i];
    if (s < 0) s += dim;
    s = steps[i] > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
    begin[a] = s;
    step[a] = steps[i];
  }
  const Shape& o = c.out[0];
  std::vector<z3::expr> e;
  for (int64_t i = 0; i < numel(o); ++i) {
    Shape idx = unravel(i, o);
    for (size_t k = 0; k < r; ++k) idx[k] = begin[k] + idx[k] * step[k];
    e.push_back(X.elems[static_cast<size_t>(ravel(idx, X.shape))]);
  }
  return one(make(o, std::move(e)));
}

Result pad(Ctx& c) {
  if (c.attrs().get_string("mode") != "constant") return fail_sem(c, "pad mode other than constant");
  auto pads = c.ints(1);
  if (!pads) return fail_sem(c, "pad with unknown pads");
  const SymTensor& X = c.x(0);
  size_t r = X.shape.size();
  z3::expr fill = c.has(2) ? c.x(2).elems[0] : c.d.num(0);
  const Shape& o = c.out[0];
  std::vector<z3::expr> e;
  for (int64_t i = 0; i < numel(o); ++i) {
    Shape idx = unravel(i, o);
    bool inside = true;
    for (size_t k = 0; k < r; ++k) {
      idx[k] -= (*pads)[k];
      if (idx[k] < 0 || idx[k] >= X.shape[k]) inside = false;
    }
    e.push_back(inside ? X.elems[static_cast<size_t>(ravel(idx, X.shape))] : fill);
  }
  return one(make(o, std::move(e)));
}

// Gather along an axis with constant indices (negative ones count from the
// end): out[pre, j..., post] = data[pre, indices[j...], post].
Result gather(Ctx& c) {
  const SymTensor& X = c.x(0);
  auto ind = c.ints(1);
  if (!ind) return fail_sem(c, "gather with unknown indices");
  size_t r = X.shape.size();
  size_t ax = static_cast<size_t>(c.axis(c.attr_int("axis"), r));
  const Shape& ishape = c.x(1).shape;
  const Shape& o = c.out[0];
  std::vector<z3::expr> e;
  for (int64_t i = 0; i < numel(o); ++i) {
    Shape idx = unravel(i, o), src;
    src.insert(src.end(), idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(ax));
    Shape j(idx.begin() + static_cast<std::ptrdiff_t>(ax),
            idx.begin() + static_cast<std::ptrdiff_t>(ax + ishape.size()));
    int64_t k = (*ind)[static_cast<size_t>(ravel(j, ishape))];
    if (k < 0) k += X.shape[ax];
    if (k < 0 || k >= X.shape[ax]) return fail_sem(c, "gather index out of range");
    src.push_back(k);
    src.insert(src.end(), idx.begin() + static_cast<std::ptrdiff_t>(ax + ishape.size()), idx.end());
    e.push_back(X.elems[static_cast<size_t>(ravel(src, X.shape))]);
  }
  return one(make(o, std::move(e)));
}

Result expand(Ctx& c) {
  const Shape& o = c.out[0];
  std::vector<z3::expr> e;
  for (int64_t i = 0; i < numel(o); ++i) e.push_back(bcast(c.x(0), unravel(i, o)));
  return one(make(o, std::move(e)));
}

// Shape: the input's dims from start to end, as numbers (an instance's
// shapes are concrete).
Result shape_of(Ctx& c) {
  const Shape& x = c.x(0).shape;
  int64_t r = static_cast<int64_t>(x.size());
  auto at = [&](int64_t a) { return std::clamp<int64_t>(a < 0 ? a + r : a, 0, r); };
  std::vector<z3::expr> e;
  for (int64_t i = at(c.attr_int("start")); i < at(c.attr_int("end")); ++i)
    e.push_back(c.d.num(static_cast<double>(x[static_cast<size_t>(i)])));
  return one(make(c.out[0], std::move(e)));
}

}  // namespace

void fill_layout(Table& t) {
  using ir::Op;
  define(t, Op::Reshape, same_elems);
  define(t, Op::Flatten, same_elems);
  define(t, Op::Squeeze, same_elems);
  define(t, Op::Unsqueeze, same_elems);
  define(t, Op::Transpose, transpose);
  define(t, Op::Concat, concat);
  define(t, Op::Split, split);
  define(t, Op::Slice, slice);
  define(t, Op::Pad, pad);
  define(t, Op::Expand, expand);
  define(t, Op::Gather, gather);
  define(t, Op::Shape, shape_of);
}

}  // namespace refinery::prove::semantics
