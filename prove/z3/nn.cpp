// Symbolic semantics of the neural-network ops (ir/ops/nn.cpp): Conv
// (explicit pads), inference-mode BatchNormalization and Dropout, layer
// normalisation, softmax and its log, pooling (MaxPool, AveragePool and the
// global pools).
#include "prove/z3/semantics.h"

namespace refinery::prove::semantics {
namespace {

Result conv(Ctx& c) {
  if (c.attrs().get_string("auto_pad") != "NOTSET") return fail_sem(c, "conv with auto_pad");
  const SymTensor& X = c.x(0);
  const SymTensor& W = c.x(1);
  size_t sp = X.shape.size() - 2;
  auto strides = c.attrs().get_ints("strides");
  auto dil = c.attrs().get_ints("dilations");
  auto pads = c.attrs().get_ints("pads");
  int64_t group = c.attr_int("group");
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
        z3::expr p =
            c.d.mul(X.elems[static_cast<size_t>(ravel(xi, X.shape))], W.elems[static_cast<size_t>(ravel(wi, W.shape))]);
        acc = acc ? c.d.add(*acc, p) : p;
      }
    z3::expr v = acc ? *acc : c.d.num(0);
    if (c.has(2)) v = c.d.add(v, c.x(2).elems[static_cast<size_t>(m)]);
    e.push_back(v);
  }
  return one(make(o, std::move(e)));
}

Result batch_norm(Ctx& c) {
  if (c.attr_int("training_mode") != 0 || c.n.outputs.size() > 1) return fail_sem(c, "batch_norm in training mode");
  double eps = c.attr_float("epsilon");
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
  return along_axis(c, c.attr_int("axis"), [&](const z3::expr& x, const std::vector<z3::expr>& g) {
    std::vector<z3::expr> ex;
    for (const auto& y : g) ex.push_back(c.d.fn("exp", y));
    return c.d.div(c.d.fn("exp", x), sum_of(c.d, ex), false);  // total: a sum of exponentials is positive
  });
}

Result log_softmax(Ctx& c) {
  return along_axis(c, c.attr_int("axis"), [&](const z3::expr& x, const std::vector<z3::expr>& g) {
    std::vector<z3::expr> ex;
    for (const auto& y : g) ex.push_back(c.d.fn("exp", y));
    return c.d.log(c.d.div(c.d.fn("exp", x), sum_of(c.d, ex), false), false);  // total, as softmax
  });
}

Result layer_norm(Ctx& c) {
  if (c.n.outputs.size() > 1) return fail_sem(c, "layer_norm with statistics outputs");
  const SymTensor& X = c.x(0);
  size_t r = X.shape.size();
  size_t ax = static_cast<size_t>(c.axis(c.attr_int("axis"), r));
  double eps = c.attr_float("epsilon");
  Shape inner(X.shape.begin() + static_cast<int64_t>(ax), X.shape.end());
  int64_t m = numel(inner);
  if (numel(X.shape) == 0) return one(make(X.shape, {}));  // an empty input: an empty result
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

Result global_average_pool(Ctx& c) {
  std::vector<bool> red(c.x(0).shape.size(), true);
  red[0] = red[1] = false;
  return reduce_with(c, red, [&](const std::vector<z3::expr>& g) {
    return c.d.div(sum_of(c.d, g), c.d.num(static_cast<double>(g.size())));
  });
}

Result global_max_pool(Ctx& c) {
  std::vector<bool> red(c.x(0).shape.size(), true);
  red[0] = red[1] = false;
  return reduce_with(c, red, [&](const std::vector<z3::expr>& g) {
    z3::expr acc = g[0];
    for (size_t i = 1; i < g.size(); ++i) acc = c.d.max(acc, g[i]);
    return acc;
  });
}

// Windowed pooling per output element, as ONNX (and runtime/kernels/pool.cpp)
// define it: the window's positions are o * stride - pad_begin + k * dilation;
// those inside the input are pooled; AveragePool divides by their count, or
// with count_include_pad by the positions inside the explicit padding too
// (not ceil_mode's overhang). The output shape (ceil_mode included) is the
// shape rule's.
template <class Pool>
Result window_pool(Ctx& c, Pool pool) {
  const SymTensor& X = c.x(0);
  size_t sp = X.shape.size() - 2;
  ir::OpAttrs a = c.attrs();
  auto kernel = c.n.attrs.maybe_ints("kernel_shape");
  if (!kernel || kernel->size() != sp) return fail_sem(c, "pool without a kernel_shape of the spatial rank");
  auto strides = a.get_ints("strides"), dil = a.get_ints("dilations"), pads = a.get_ints("pads");
  std::string auto_pad = a.get_string("auto_pad");
  const Shape& o = c.out[0];
  Shape begin(sp, 0), end(sp, 0);
  for (size_t i = 0; i < sp; ++i) {
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      int64_t effective = ((*kernel)[i] - 1) * dil[i] + 1;
      int64_t total = std::max<int64_t>(0, (o[2 + i] - 1) * strides[i] + effective - X.shape[2 + i]);
      begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end[i] = total - begin[i];
    } else if (auto_pad != "VALID") {
      begin[i] = pads[i], end[i] = pads[i + sp];
    }
  }
  Shape ksz(kernel->begin(), kernel->end());
  std::vector<z3::expr> e;
  for (int64_t i = 0; i < numel(o); ++i) {
    Shape idx = unravel(i, o);
    std::vector<z3::expr> window;
    int64_t padded = 0;  // positions inside the input or the explicit padding
    for (int64_t ki = 0; ki < numel(ksz); ++ki) {
      Shape kidx = unravel(ki, ksz);
      Shape xi{idx[0], idx[1]};
      bool inside = true, in_padding = true;
      for (size_t s = 0; s < sp; ++s) {
        int64_t pos = idx[2 + s] * strides[s] - begin[s] + kidx[s] * dil[s];
        if (pos < 0 || pos >= X.shape[2 + s]) inside = false;
        if (pos < -begin[s] || pos >= X.shape[2 + s] + end[s]) in_padding = false;
        xi.push_back(pos);
      }
      if (in_padding) ++padded;
      if (inside) window.push_back(X.elems[static_cast<size_t>(ravel(xi, X.shape))]);
    }
    if (window.empty()) return fail_sem(c, "a pooling window with no input element");
    e.push_back(pool(window, padded));
  }
  return one(make(o, std::move(e)));
}

Result max_pool(Ctx& c) {
  if (c.n.outputs.size() > 1) return fail_sem(c, "max_pool with an indices output");
  return window_pool(c, [&](const std::vector<z3::expr>& w, int64_t) {
    z3::expr acc = w[0];
    for (size_t i = 1; i < w.size(); ++i) acc = c.d.max(acc, w[i]);
    return acc;
  });
}

Result average_pool(Ctx& c) {
  bool include_pad = c.attr_int("count_include_pad") != 0;
  return window_pool(c, [&](const std::vector<z3::expr>& w, int64_t padded) {
    auto count = static_cast<double>(include_pad ? padded : static_cast<int64_t>(w.size()));
    return c.d.div(sum_of(c.d, w), c.d.num(count));
  });
}

Result dropout(Ctx& c) {
  if (c.n.outputs.size() > 1) return fail_sem(c, "dropout with a mask output");
  return same_elems(c);
}

}  // namespace

void fill_nn(Table& t) {
  using ir::Op;
  define(t, Op::Dropout, dropout);
  define(t, Op::Conv, conv);
  define(t, Op::BatchNormalization, batch_norm);
  define(t, Op::LayerNormalization, layer_norm);
  define(t, Op::Softmax, softmax);
  define(t, Op::LogSoftmax, log_softmax);
  define(t, Op::GlobalAveragePool, global_average_pool);
  define(t, Op::GlobalMaxPool, global_max_pool);
  define(t, Op::MaxPool, max_pool);
  define(t, Op::AveragePool, average_pool);
}

}  // namespace refinery::prove::semantics
