#include "prove/z3/symbolic.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <numeric>
#include <optional>

#include <fmt/format.h>

namespace refinery::prove {


namespace {

using Shape = std::vector<int64_t>;

int64_t numel(const Shape& s) { return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>()); }

Shape unravel(int64_t i, const Shape& s) {
  Shape idx(s.size());
  for (size_t k = s.size(); k-- > 0;) {
    idx[k] = s[k] == 0 ? 0 : i % s[k];
    i = s[k] == 0 ? 0 : i / s[k];
  }
  return idx;
}

int64_t ravel(const Shape& idx, const Shape& s) {
  int64_t i = 0;
  for (size_t k = 0; k < s.size(); ++k) i = i * s[k] + idx[k];
  return i;
}

// The element of `t` that broadcasts to output index `idx`.
const z3::expr& bcast(const SymTensor& t, const Shape& idx) {
  size_t off = idx.size() - t.shape.size();
  int64_t i = 0;
  for (size_t k = 0; k < t.shape.size(); ++k) i = i * t.shape[k] + (t.shape[k] == 1 ? 0 : idx[off + k]);
  return t.elems[static_cast<size_t>(i)];
}

struct Ctx {
  const ir::Node& n;
  SymDomain& d;
  std::vector<const SymTensor*> in;  // nullptr for an absent optional input
  std::vector<Shape> out;            // output shapes
  std::string error;

  const SymTensor& x(size_t i) const { return *in[i]; }
  bool has(size_t i) const { return i < in.size() && in[i] != nullptr; }
  int64_t attr_int(std::string_view name, int64_t fallback) const { return n.attrs.get_int(name, fallback); }
  double attr_float(std::string_view name, double fallback) const {
    return static_cast<double>(n.attrs.get_float(name, static_cast<float>(fallback)));
  }
  std::optional<std::vector<int64_t>> ints(size_t i) const {
    if (!has(i) || !in[i]->concrete) return std::nullopt;
    return in[i]->concrete->to_int_vector();
  }
  int64_t axis(int64_t a, size_t rank) const { return a < 0 ? a + static_cast<int64_t>(rank) : a; }
};

using Result = std::optional<std::vector<SymTensor>>;
using SemFn = Result (*)(Ctx&);

SymTensor make(const Shape& s, std::vector<z3::expr> e) { return SymTensor{s, std::move(e), nullptr}; }

Result one(SymTensor t) {
  std::vector<SymTensor> v;
  v.push_back(std::move(t));
  return v;
}

Result fail_sem(Ctx& c, std::string msg) {
  c.error = std::move(msg);
  return std::nullopt;
}

template <class F>
Result map_unary(Ctx& c, F f) {
  std::vector<z3::expr> e;
  for (const auto& x : c.x(0).elems) e.push_back(f(x));
  return one(make(c.x(0).shape, std::move(e)));
}

template <class F>
Result map_nary(Ctx& c, F f) {
  const Shape& s = c.out[0];
  std::vector<z3::expr> e;
  for (int64_t i = 0; i < numel(s); ++i) {
    Shape idx = unravel(i, s);
    z3::expr acc = bcast(c.x(0), idx);
    for (size_t k = 1; k < c.in.size(); ++k)
      if (c.has(k)) acc = f(acc, bcast(c.x(k), idx));
    e.push_back(acc);
  }
  return one(make(s, std::move(e)));
}

Result same_elems(Ctx& c) { return one(make(c.out[0], c.x(0).elems)); }

Result relu(Ctx& c) {
  auto& d = c.d;
  return map_unary(c, [&](const z3::expr& x) { return z3::ite(d.lt(x, d.num(0)), d.num(0), x); });
}

Result matmul(Ctx& c) {
  Shape a = c.x(0).shape, b = c.x(1).shape;
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  Shape ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  size_t r = std::max(ba.size(), bb.size());
  Shape batch(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t x = i + ba.size() >= r ? ba[i + ba.size() - r] : 1;
    int64_t y = i + bb.size() >= r ? bb[i + bb.size() - r] : 1;
    batch[i] = std::max(x, y);
  }
  SymTensor A{a, c.x(0).elems}, B{b, c.x(1).elems};
  std::vector<z3::expr> e;
  for (int64_t bi = 0; bi < numel(batch); ++bi) {
    Shape bidx = unravel(bi, batch);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        std::optional<z3::expr> acc;
        for (int64_t kk = 0; kk < k; ++kk) {
          Shape ia = bidx, ib = bidx;
          ia.push_back(i);
          ia.push_back(kk);
          ib.push_back(kk);
          ib.push_back(j);
          z3::expr p = c.d.mul(bcast(A, ia), bcast(B, ib));
          acc = acc ? c.d.add(*acc, p) : p;
        }
        e.push_back(acc ? *acc : c.d.num(0));
      }
  }
  return one(make(c.out[0], std::move(e)));
}

Result gemm(Ctx& c) {
  bool ta = c.attr_int("transA", 0) != 0, tb = c.attr_int("transB", 0) != 0;
  double alpha = c.attr_float("alpha", 1.0), beta = c.attr_float("beta", 1.0);
  const SymTensor& A = c.x(0);
  const SymTensor& B = c.x(1);
  int64_t m = c.out[0][0], n = c.out[0][1];
  int64_t k = ta ? A.shape[0] : A.shape[1];
  std::vector<z3::expr> e;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      std::optional<z3::expr> acc;
      for (int64_t kk = 0; kk < k; ++kk) {
        const z3::expr& x = A.elems[static_cast<size_t>(ta ? kk * A.shape[1] + i : i * A.shape[1] + kk)];
        const z3::expr& y = B.elems[static_cast<size_t>(tb ? j * B.shape[1] + kk : kk * B.shape[1] + j)];
        z3::expr p = c.d.mul(x, y);
        acc = acc ? c.d.add(*acc, p) : p;
      }
      z3::expr v = acc ? *acc : c.d.num(0);
      if (alpha != 1.0) v = c.d.mul(c.d.num(alpha), v);
      if (c.has(2)) {
        z3::expr bias = bcast(c.x(2), {i, j});
        if (beta != 1.0) bias = c.d.mul(c.d.num(beta), bias);
        v = c.d.add(v, bias);
      }
      e.push_back(v);
    }
  return one(make(c.out[0], std::move(e)));
}

Result conv(Ctx& c) {
  if (c.n.attrs.get_string("auto_pad", "NOTSET") != "NOTSET") return fail_sem(c, "conv with auto_pad");
  const SymTensor& X = c.x(0);
  const SymTensor& W = c.x(1);
  size_t sp = X.shape.size() - 2;
  auto strides = c.n.attrs.get_ints("strides", Shape(sp, 1));
  auto dil = c.n.attrs.get_ints("dilations", Shape(sp, 1));
  auto pads = c.n.attrs.get_ints("pads", Shape(2 * sp, 0));
  int64_t group = c.attr_int("group", 1);
  const Shape& o = c.out[0];
  int64_t cg = W.shape[1], mg = W.shape[0] / group;
  Shape ksz(W.shape.begin() + 2, W.shape.end());
  std::vector<z3::expr> e;
  for (int64_t i = 0; i < numel(o); ++i) {
    Shape idx = unravel(i, o);
    int64_t nb = idx[0], m = idx[1], g = m / mg;
    std::optional<z3::expr> acc;
    for (int64_t ci = 0; ci < cg; ++ci)
      for (int64_t ki = 0; ki < numel(ksz); ++ki) {
        Shape kidx = unravel(ki, ksz);
        Shape xi{nb, g * cg + ci};
        bool inside = true;
        for (size_t s = 0; s < sp; ++s) {
          int64_t pos = idx[2 + s] * strides[s] - pads[s] + kidx[s] * dil[s];
          if (pos < 0 || pos >= X.shape[2 + s]) inside = false;
          xi.push_back(pos);
        }
        if (!inside) continue;
        Shape wi{m, ci};
        wi.insert(wi.end(), kidx.begin(), kidx.end());
        z3::expr p = c.d.mul(X.elems[static_cast<size_t>(ravel(xi, X.shape))], W.elems[static_cast<size_t>(ravel(wi, W.shape))]);
        acc = acc ? c.d.add(*acc, p) : p;
      }
    z3::expr v = acc ? *acc : c.d.num(0);
    if (c.has(2)) v = c.d.add(v, c.x(2).elems[static_cast<size_t>(m)]);
    e.push_back(v);
  }
  return one(make(o, std::move(e)));
}

Result batch_norm(Ctx& c) {
  if (c.attr_int("training_mode", 0) != 0 || c.n.outputs.size() > 1) return fail_sem(c, "batch_norm in training mode");
  double eps = c.attr_float("epsilon", 1e-5);
  const SymTensor& X = c.x(0);
  std::vector<z3::expr> e;
  for (int64_t i = 0; i < numel(X.shape); ++i) {
    size_t ch = static_cast<size_t>(unravel(i, X.shape)[1]);
    z3::expr denom = c.d.sqrt(c.d.add(c.x(4).elems[ch], c.d.num(eps)));
    z3::expr norm = c.d.div(c.d.sub(X.elems[static_cast<size_t>(i)], c.x(3).elems[ch]), denom);
    e.push_back(c.d.add(c.d.mul(norm, c.x(1).elems[ch]), c.x(2).elems[ch]));
  }
  return one(make(X.shape, std::move(e)));
}

// Groups of elements that reduce together: for each output index, the input indexes.
template <class F>
Result reduce_with(Ctx& c, const std::vector<bool>& reduced, F combine) {
  const SymTensor& X = c.x(0);
  Shape kept;
  for (size_t k = 0; k < X.shape.size(); ++k) kept.push_back(reduced[k] ? 1 : X.shape[k]);
  std::vector<std::vector<z3::expr>> groups(static_cast<size_t>(numel(kept)));
  for (int64_t i = 0; i < numel(X.shape); ++i) {
    Shape idx = unravel(i, X.shape);
    for (size_t k = 0; k < idx.size(); ++k)
      if (reduced[k]) idx[k] = 0;
    groups[static_cast<size_t>(ravel(idx, kept))].push_back(X.elems[static_cast<size_t>(i)]);
  }
  std::vector<z3::expr> e;
  for (auto& g : groups) e.push_back(combine(g));
  return one(make(c.out[0], std::move(e)));
}

std::vector<bool> reduced_axes(Ctx& c, std::optional<std::vector<int64_t>> axes) {
  size_t r = c.x(0).shape.size();
  std::vector<bool> red(r, !axes || axes->empty());
  if (axes)
    for (int64_t a : *axes) red[static_cast<size_t>(c.axis(a, r))] = true;
  return red;
}

z3::expr sum_of(SymDomain& d, const std::vector<z3::expr>& g) {
  z3::expr acc = g[0];
  for (size_t i = 1; i < g.size(); ++i) acc = d.add(acc, g[i]);
  return acc;
}

Result reduce_sum(Ctx& c) {
  auto axes = c.has(1) ? c.ints(1) : std::optional<std::vector<int64_t>>();
  if (c.has(1) && !axes) return fail_sem(c, "reduce_sum with unknown axes");
  if ((!axes || axes->empty()) && c.attr_int("noop_with_empty_axes", 0)) return same_elems(c);
  return reduce_with(c, reduced_axes(c, axes), [&](const std::vector<z3::expr>& g) { return sum_of(c.d, g); });
}

Result reduce_attr(Ctx& c) {
  auto axes = c.n.attrs.maybe_ints("axes");
  auto red = reduced_axes(c, axes);
  switch (c.n.op) {
    case ir::Op::ReduceMean:
      return reduce_with(c, red, [&](const std::vector<z3::expr>& g) {
        return c.d.div(sum_of(c.d, g), c.d.num(static_cast<double>(g.size())));
      });
    case ir::Op::ReduceMax:
      return reduce_with(c, red, [&](const std::vector<z3::expr>& g) {
        z3::expr acc = g[0];
        for (size_t i = 1; i < g.size(); ++i) acc = c.d.max(acc, g[i]);
        return acc;
      });
    case ir::Op::ReduceMin:
      return reduce_with(c, red, [&](const std::vector<z3::expr>& g) {
        z3::expr acc = g[0];
        for (size_t i = 1; i < g.size(); ++i) acc = c.d.min(acc, g[i]);
        return acc;
      });
    case ir::Op::ReduceSumSquare:
      return reduce_with(c, red, [&](const std::vector<z3::expr>& g) {
        std::vector<z3::expr> sq;
        for (const auto& x : g) sq.push_back(c.d.mul(x, x));
        return sum_of(c.d, sq);
      });
    default: return fail_sem(c, "reduction");
  }
}

// Softmax-like ops over one axis: f(group) per element.
template <class F>
Result along_axis(Ctx& c, int64_t axis_attr, F f) {
  const SymTensor& X = c.x(0);
  size_t r = X.shape.size();
  int64_t ax = c.axis(axis_attr, r);
  std::vector<bool> red(r, false);
  red[static_cast<size_t>(ax)] = true;
  std::vector<z3::expr> e;
  for (int64_t i = 0; i < numel(X.shape); ++i) {
    Shape idx = unravel(i, X.shape);
    std::vector<z3::expr> group;
    for (int64_t j = 0; j < X.shape[static_cast<size_t>(ax)]; ++j) {
      Shape jdx = idx;
      jdx[static_cast<size_t>(ax)] = j;
      group.push_back(X.elems[static_cast<size_t>(ravel(jdx, X.shape))]);
    }
    e.push_back(f(X.elems[static_cast<size_t>(i)], group));
  }
  return one(make(X.shape, std::move(e)));
}

Result softmax(Ctx& c) {
  return along_axis(c, c.attr_int("axis", -1), [&](const z3::expr& x, const std::vector<z3::expr>& g) {
    std::vector<z3::expr> ex;
    for (const auto& y : g) ex.push_back(c.d.fn("exp", y));
    return c.d.div(c.d.fn("exp", x), sum_of(c.d, ex));
  });
}

Result log_softmax(Ctx& c) {
  return along_axis(c, c.attr_int("axis", -1), [&](const z3::expr& x, const std::vector<z3::expr>& g) {
    std::vector<z3::expr> ex;
    for (const auto& y : g) ex.push_back(c.d.fn("exp", y));
    return c.d.fn("log", c.d.div(c.d.fn("exp", x), sum_of(c.d, ex)));
  });
}

Result layer_norm(Ctx& c) {
  if (c.n.outputs.size() > 1) return fail_sem(c, "layer_norm with statistics outputs");
  const SymTensor& X = c.x(0);
  size_t r = X.shape.size();
  size_t ax = static_cast<size_t>(c.axis(c.attr_int("axis", -1), r));
  double eps = c.attr_float("epsilon", 1e-5);
  Shape inner(X.shape.begin() + static_cast<int64_t>(ax), X.shape.end());
  int64_t m = numel(inner);
  std::vector<z3::expr> e;
  for (int64_t o = 0; o < numel(X.shape) / m; ++o) {
    std::vector<z3::expr> g(X.elems.begin() + o * m, X.elems.begin() + (o + 1) * m);
    z3::expr mean = c.d.div(sum_of(c.d, g), c.d.num(static_cast<double>(m)));
    std::vector<z3::expr> sq;
    for (const auto& x : g) sq.push_back(c.d.mul(c.d.sub(x, mean), c.d.sub(x, mean)));
    z3::expr var = c.d.div(sum_of(c.d, sq), c.d.num(static_cast<double>(m)));
    z3::expr denom = c.d.sqrt(c.d.add(var, c.d.num(eps)));
    for (int64_t j = 0; j < m; ++j) {
      Shape jdx = unravel(j, inner);
      z3::expr y = c.d.mul(c.d.div(c.d.sub(g[static_cast<size_t>(j)], mean), denom), bcast(c.x(1), jdx));
      if (c.has(2)) y = c.d.add(y, bcast(c.x(2), jdx));
      e.push_back(y);
    }
  }
  return one(make(X.shape, std::move(e)));
}

Result transpose(Ctx& c) {
  const SymTensor& X = c.x(0);
  size_t r = X.shape.size();
  Shape perm = c.n.attrs.get_ints("perm", {});
  if (perm.empty())
    for (size_t i = r; i-- > 0;) perm.push_back(static_cast<int64_t>(i));
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
  size_t ax = static_cast<size_t>(c.axis(c.attr_int("axis", 0), o.size()));
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
  size_t ax = static_cast<size_t>(c.axis(c.attr_int("axis", 0), X.shape.size()));
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
  if (c.has(3)) axes = *c.ints(3);
  else for (size_t i = 0; i < starts->size(); ++i) axes.push_back(static_cast<int64_t>(i));
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
  if (c.n.attrs.get_string("mode", "constant") != "constant") return fail_sem(c, "pad mode other than constant");
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

Result expand(Ctx& c) {
  const Shape& o = c.out[0];
  std::vector<z3::expr> e;
  for (int64_t i = 0; i < numel(o); ++i) e.push_back(bcast(c.x(0), unravel(i, o)));
  return one(make(o, std::move(e)));
}

Result global_average_pool(Ctx& c) {
  std::vector<bool> red(c.x(0).shape.size(), true);
  red[0] = red[1] = false;
  return reduce_with(c, red, [&](const std::vector<z3::expr>& g) {
    return c.d.div(sum_of(c.d, g), c.d.num(static_cast<double>(g.size())));
  });
}

Result pow_op(Ctx& c) {
  auto& d = c.d;
  if (!c.x(1).concrete || c.x(1).concrete->numel() != 1) return fail_sem(c, "pow with a non-constant exponent");
  double p = c.x(1).concrete->as_double(0);
  if (p == 2) return map_unary(c, [&](const z3::expr& x) { return d.mul(x, x); });
  if (p == 3) return map_unary(c, [&](const z3::expr& x) { return d.mul(d.mul(x, x), x); });
  if (p == 1) return same_elems(c);
  if (p == 0.5) return map_unary(c, [&](const z3::expr& x) { return d.sqrt(x); });
  if (p == -1) return map_unary(c, [&](const z3::expr& x) { return d.div(d.num(1), x); });
  return fail_sem(c, fmt::format("pow with exponent {}", p));
}

Result semantics(Ctx& c) {
  using ir::Op;
  SymDomain& d = c.d;
  switch (c.n.op) {
    case Op::Identity:
    case Op::Reshape:
    case Op::Flatten:
    case Op::Squeeze:
    case Op::Unsqueeze: return same_elems(c);
    case Op::Dropout:
      if (c.n.outputs.size() > 1) return fail_sem(c, "dropout with a mask output");
      return same_elems(c);
    case Op::Neg: return map_unary(c, [&](const z3::expr& x) { return d.neg(x); });
    case Op::Abs: return map_unary(c, [&](const z3::expr& x) { return z3::ite(d.lt(x, d.num(0)), d.neg(x), x); });
    case Op::Sign:
      return map_unary(c, [&](const z3::expr& x) {
        return z3::ite(d.lt(x, d.num(0)), d.num(-1), z3::ite(d.lt(d.num(0), x), d.num(1), d.num(0)));
      });
    case Op::Relu: return relu(c);
    case Op::Reciprocal: return map_unary(c, [&](const z3::expr& x) { return d.div(d.num(1), x); });
    case Op::Sqrt: return map_unary(c, [&](const z3::expr& x) { return d.sqrt(x); });
    case Op::Exp: return map_unary(c, [&](const z3::expr& x) { return d.fn("exp", x); });
    case Op::Log: return map_unary(c, [&](const z3::expr& x) { return d.fn("log", x); });
    case Op::Tanh: return map_unary(c, [&](const z3::expr& x) { return d.fn("tanh", x); });
    case Op::Sigmoid: return map_unary(c, [&](const z3::expr& x) { return d.fn("sigmoid", x); });
    case Op::Erf: return map_unary(c, [&](const z3::expr& x) { return d.fn("erf", x); });
    case Op::Softplus: return map_unary(c, [&](const z3::expr& x) { return d.fn("softplus", x); });
    case Op::Sin: return map_unary(c, [&](const z3::expr& x) { return d.fn("sin", x); });
    case Op::Cos: return map_unary(c, [&](const z3::expr& x) { return d.fn("cos", x); });
    case Op::Softsign:
      return map_unary(c, [&](const z3::expr& x) {
        return d.div(x, d.add(d.num(1), z3::ite(d.lt(x, d.num(0)), d.neg(x), x)));
      });
    case Op::LeakyRelu: {
      double a = c.attr_float("alpha", 0.01);
      return map_unary(c, [&](const z3::expr& x) { return z3::ite(d.lt(x, d.num(0)), d.mul(d.num(a), x), x); });
    }
    case Op::Elu: {
      double a = c.attr_float("alpha", 1.0);
      return map_unary(c, [&](const z3::expr& x) {
        return z3::ite(d.lt(x, d.num(0)), d.mul(d.num(a), d.sub(d.fn("exp", x), d.num(1))), x);
      });
    }
    case Op::HardSigmoid: {
      double a = c.attr_float("alpha", 0.2), b = c.attr_float("beta", 0.5);
      return map_unary(c, [&](const z3::expr& x) {
        return d.max(d.num(0), d.min(d.num(1), d.add(d.mul(d.num(a), x), d.num(b))));
      });
    }
    case Op::HardSwish:
      return map_unary(c, [&](const z3::expr& x) {
        return d.mul(x, d.max(d.num(0), d.min(d.num(1), d.add(d.mul(d.num(static_cast<double>(1.0f / 6.0f)), x), d.num(0.5)))));
      });
    case Op::Clip: {
      std::optional<z3::expr> lo, hi;
      if (c.has(1)) lo = c.x(1).elems[0];
      if (c.has(2)) hi = c.x(2).elems[0];
      return map_unary(c, [&](const z3::expr& x) {
        z3::expr y = x;
        if (lo) y = d.max(*lo, y);
        if (hi) y = d.min(*hi, y);
        return y;
      });
    }
    case Op::PRelu:
      return map_nary(c, [&](const z3::expr& x, const z3::expr& s) { return z3::ite(d.lt(x, d.num(0)), d.mul(s, x), x); });
    case Op::Add:
    case Op::Sum: return map_nary(c, [&](const z3::expr& a, const z3::expr& b) { return d.add(a, b); });
    case Op::Sub: return map_nary(c, [&](const z3::expr& a, const z3::expr& b) { return d.sub(a, b); });
    case Op::Mul: return map_nary(c, [&](const z3::expr& a, const z3::expr& b) { return d.mul(a, b); });
    case Op::Div: return map_nary(c, [&](const z3::expr& a, const z3::expr& b) { return d.div(a, b); });
    case Op::Max: return map_nary(c, [&](const z3::expr& a, const z3::expr& b) { return d.max(a, b); });
    case Op::Min: return map_nary(c, [&](const z3::expr& a, const z3::expr& b) { return d.min(a, b); });
    case Op::Mean: {
      auto r = map_nary(c, [&](const z3::expr& a, const z3::expr& b) { return d.add(a, b); });
      if (!r) return r;
      for (auto& x : (*r)[0].elems) x = d.div(x, d.num(static_cast<double>(c.in.size())));
      return r;
    }
    case Op::Pow: return pow_op(c);
    case Op::MatMul: return matmul(c);
    case Op::Gemm: return gemm(c);
    case Op::Conv: return conv(c);
    case Op::BatchNormalization: return batch_norm(c);
    case Op::LayerNormalization: return layer_norm(c);
    case Op::Softmax: return softmax(c);
    case Op::LogSoftmax: return log_softmax(c);
    case Op::ReduceSum: return reduce_sum(c);
    case Op::ReduceMean:
    case Op::ReduceMax:
    case Op::ReduceMin:
    case Op::ReduceSumSquare: return reduce_attr(c);
    case Op::GlobalAveragePool: return global_average_pool(c);
    case Op::Transpose: return transpose(c);
    case Op::Concat: return concat(c);
    case Op::Split: return split(c);
    case Op::Slice: return slice(c);
    case Op::Pad: return pad(c);
    case Op::Expand: return expand(c);
    default: return fail_sem(c, fmt::format("{} has no symbolic semantics", ir::op_name(c.n.op)));
  }
}

}  // namespace

bool has_semantics(ir::Op op) {
  using ir::Op;
  switch (op) {
    case Op::Identity: case Op::Reshape: case Op::Flatten: case Op::Squeeze: case Op::Unsqueeze: case Op::Dropout:
    case Op::Neg: case Op::Abs: case Op::Sign: case Op::Relu: case Op::Reciprocal: case Op::Sqrt: case Op::Exp:
    case Op::Log: case Op::Tanh: case Op::Sigmoid: case Op::Erf: case Op::Softplus: case Op::Sin: case Op::Cos:
    case Op::Softsign: case Op::LeakyRelu: case Op::Elu: case Op::HardSigmoid: case Op::HardSwish: case Op::Clip:
    case Op::PRelu: case Op::Add: case Op::Sum: case Op::Sub: case Op::Mul: case Op::Div: case Op::Max: case Op::Min:
    case Op::Mean: case Op::Pow: case Op::MatMul: case Op::Gemm: case Op::Conv: case Op::BatchNormalization:
    case Op::LayerNormalization: case Op::Softmax: case Op::LogSoftmax: case Op::ReduceSum: case Op::ReduceMean:
    case Op::ReduceMax: case Op::ReduceMin: case Op::ReduceSumSquare: case Op::GlobalAveragePool: case Op::Transpose:
    case Op::Concat: case Op::Split: case Op::Slice: case Op::Pad: case Op::Expand:
      return true;
    default: return false;
  }
}

Expected<std::vector<SymTensor>> eval_symbolic(const ir::Graph& g, const std::vector<SymTensor>& inputs, SymDomain& d) {
  std::vector<std::optional<SymTensor>> val(g.num_values());
  for (size_t i = 0; i < g.inputs().size(); ++i) val[ir::index(g.inputs()[i])] = inputs[i];
  for (ir::ValueId v : g.constants()) {
    const ir::Tensor& t = *g.value(v).constant;
    SymTensor s;
    s.shape = t.dims();
    s.concrete = g.value(v).constant.get();
    for (int64_t i = 0; i < t.numel(); ++i) s.elems.push_back(d.num(t.as_double(i)));
    val[ir::index(v)] = std::move(s);
  }
  for (size_t n = 0; n < g.num_nodes(); ++n) {
    const ir::Node& node = g.nodes()[n];
    Ctx c{node, d, {}, {}, {}};
    for (ir::ValueId in : node.inputs) c.in.push_back(in == ir::kNoValue ? nullptr : &*val[ir::index(in)]);
    for (ir::ValueId o : node.outputs) c.out.push_back(g.value(o).type.shape.sizes());
    auto r = semantics(c);
    if (!r) return fail(c.error, fmt::format("node '{}'", g.node_label(ir::NodeId{static_cast<uint32_t>(n)})));
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      (*r)[o].shape = c.out[o];
      val[ir::index(node.outputs[o])] = std::move((*r)[o]);
    }
  }
  std::vector<SymTensor> out;
  for (ir::ValueId v : g.outputs()) out.push_back(*val[ir::index(v)]);
  return out;
}

}  // namespace refinery::prove
