#include "rules/builtins.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

namespace refinery::rules {
namespace {

const ir::Shape* shape(const ArgVal& a) { return a.tensor ? &a.tensor->type.shape : nullptr; }

std::optional<int64_t> as_int(const ArgVal& a) {
  if (!a.value) return std::nullopt;
  if (auto* i = std::get_if<int64_t>(&*a.value)) return *i;
  if (auto* f = std::get_if<float>(&*a.value)) return static_cast<int64_t>(*f);
  return std::nullopt;
}

std::optional<std::vector<int64_t>> as_ints(const ArgVal& a) {
  if (a.tensor) return a.tensor->ints;
  if (!a.value) return std::nullopt;
  if (auto* v = std::get_if<std::vector<int64_t>>(&*a.value)) return *v;
  return std::nullopt;
}

// The elements of a constant as doubles (nullopt when not a constant).
std::optional<std::vector<double>> values(const ArgVal& a) {
  if (!a.tensor || !a.tensor->constant) return std::nullopt;
  std::vector<double> v(static_cast<size_t>(a.tensor->constant->numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = a.tensor->constant->as_double(static_cast<int64_t>(i));
  return v;
}

// A value condition holds of a constant whose elements are all finite and
// satisfy `pred` (never of a class whose value the e-graph does not know):
// verification assumes the same of the symbolic elements.
bool value_check(const Env& env, const ArgVal& a, bool (*pred)(double)) {
  if (env.symbolic_values) return true;
  auto v = values(a);
  return v && std::all_of(v->begin(), v->end(), [&](double x) { return std::isfinite(x) && pred(x); });
}

std::optional<int64_t> axis_of(const ArgVal& axis, const ArgVal& x) {
  auto a = as_int(axis);
  if (!a || !shape(x)) return std::nullopt;
  return ir::normalize_axis(*a, shape(x)->rank());
}

const CondDef kConditions[] = {
    {"same-shape",
     "TT",
     [](const Env&, std::span<const ArgVal> a) { return *shape(a[0]) == *shape(a[1]); },
     {},
     "the two tensors have the same shape"},
    {"same-type",
     "TT",
     [](const Env&, std::span<const ArgVal> a) { return a[0].tensor->type == a[1].tensor->type; },
     {},
     "the two tensors have the same type"},
    {"rank",
     "TV",
     [](const Env&, std::span<const ArgVal> a) { return as_int(a[1]) == shape(a[0])->rank(); },
     {},
     "the tensor has this rank"},
    {"min-rank",
     "TV",
     [](const Env&, std::span<const ArgVal> a) {
       auto r = as_int(a[1]);
       return r && shape(a[0])->rank() >= *r;
     },
     {},
     "the tensor has at least this rank"},
    {"static",
     "T",
     [](const Env&, std::span<const ArgVal> a) { return shape(a[0])->is_static(); },
     {},
     "every dimension is a known size"},
    {"nonempty",
     "T",
     [](const Env&, std::span<const ArgVal> a) {
       auto n = shape(a[0])->num_elements();
       return n && *n > 0;
     },
     {},
     "every dimension is a known size above 0 (a reduction over it has elements)"},
    {"scalar",
     "T",
     [](const Env&, std::span<const ArgVal> a) { return shape(a[0])->num_elements() == std::optional<int64_t>(1); },
     {},
     "the tensor has one element"},
    {"broadcasts-to",
     "TT",
     [](const Env&, std::span<const ArgVal> a) {
       // a[0] broadcasts to a[1]'s shape (unidirectionally)
       const ir::Shape& s = *shape(a[0]);
       const ir::Shape& t = *shape(a[1]);
       if (s.rank() > t.rank()) return false;
       for (int64_t i = 0; i < s.rank(); ++i) {
         const ir::Dim& d = s[s.rank() - 1 - i];
         if (!(d == ir::Dim(1) || d == t[t.rank() - 1 - i])) return false;
       }
       return true;
     },
     {},
     "the first tensor broadcasts to the second's shape"},
    {"channel-vector",
     "TTV",
     [](const Env&, std::span<const ArgVal> a) {
       // a[0] has shape [C, 1, ..., 1] (rank(x) - axis dims) with C = x.dim(axis): a per-channel operand
       const ir::Shape& b = *shape(a[0]);
       const ir::Shape& x = *shape(a[1]);
       auto axis = as_int(a[2]);
       if (!axis || *axis < 0 || *axis >= x.rank() || b.rank() != x.rank() - *axis) return false;
       if (!(b[0] == x[*axis]) || !b[0].is_static()) return false;
       for (int64_t i = 1; i < b.rank(); ++i)
         if (!(b[i] == ir::Dim(1))) return false;
       return true;
     },
     {},
     "the first tensor is C x 1 x ... x 1 for the second's axis (a per-channel operand)"},
    {"vector-of",
     "TTV",
     [](const Env&, std::span<const ArgVal> a) {
       // a[0] is 1-d with the length of a[1]'s dimension a[2]
       const ir::Shape& b = *shape(a[0]);
       const ir::Shape& x = *shape(a[1]);
       auto axis = as_int(a[2]);
       if (!axis) return false;
       auto n = ir::normalize_axis(*axis, x.rank());
       return n && b.rank() == 1 && b[0] == x[*n] && b[0].is_static();
     },
     {},
     "the first tensor is 1-d, as long as the second's dimension at the axis"},
    {"dim-eq",
     "TVTV",
     [](const Env&, std::span<const ArgVal> a) {
       auto i = axis_of(a[1], a[0]);
       auto j = axis_of(a[3], a[2]);
       return i && j && (*shape(a[0]))[*i] == (*shape(a[2]))[*j] && (*shape(a[0]))[*i].is_static();
     },
     {},
     "dimension i of the first tensor equals dimension j of the second"},
    {"same-except",
     "TTV",
     [](const Env&, std::span<const ArgVal> a) {
       // same rank, same dims except at the axis (concat operands)
       const ir::Shape& s = *shape(a[0]);
       const ir::Shape& t = *shape(a[1]);
       auto ax = axis_of(a[2], a[0]);
       if (!ax || s.rank() != t.rank()) return false;
       for (int64_t i = 0; i < s.rank(); ++i)
         if (i != *ax && !(s[i] == t[i])) return false;
       return true;
     },
     {},
     "same rank and dimensions except at the axis"},
    {"kernel-1x1",
     "T",
     [](const Env&, std::span<const ArgVal> a) {
       const ir::Shape& w = *shape(a[0]);
       if (w.rank() < 3) return false;
       for (int64_t i = 2; i < w.rank(); ++i)
         if (!(w[i] == ir::Dim(1))) return false;
       return true;
     },
     {},
     "a convolution weight whose spatial dims are all 1"},
    {"out-channel-bias",
     "TT",
     [](const Env&, std::span<const ArgVal> a) {
       // a[0] is K x 1 x ... x 1 (rank(w) - 1 dims) or 1 x K x 1 x ... x 1 (rank(w) dims) for a K x C x ...
       // convolution weight a[1]: a per-output-channel operand of the convolution's result
       const ir::Shape& c = *shape(a[0]);
       const ir::Shape& w = *shape(a[1]);
       int64_t r = w.rank();
       if (r < 3 || !w[0].is_static()) return false;
       int64_t k;
       if (c.rank() == r - 1)
         k = 0;
       else if (c.rank() == r && c[0] == ir::Dim(1))
         k = 1;
       else
         return false;
       for (int64_t i = 0; i < c.rank(); ++i)
         if (!(c[i] == (i == k ? w[0] : ir::Dim(1)))) return false;
       return true;
     },
     {},
     "K x 1 x ... x 1 or 1 x K x 1 x ... x 1, broadcast over the channels of a convolution with a K x ... weight"},
    {"attention-heads",
     "TTTT",
     [](const Env&, std::span<const ArgVal> a) {
       // x [B, S, ...]; Q and V per head [B, heads, S, d], K^T [B, heads, d, S], heads and d
       // static: each reshape split x's rows into heads and kept B and S in place. A
       // symbolic dim matches only itself (one name is one value in a graph).
       const ir::Shape &x = *shape(a[0]), &q = *shape(a[1]), &k = *shape(a[2]), &v = *shape(a[3]);
       if (x.rank() != 3 || q.rank() != 4 || k.rank() != 4 || v.rank() != 4) return false;
       auto known = [](const ir::Dim& d) { return !d.is_unknown(); };
       const ir::Dim &b = x[0], &s = x[1], &h = q[1], &d = q[3];
       if (!known(b) || !known(s) || !h.is_static() || !d.is_static()) return false;
       return q[0] == b && q[2] == s && k[0] == b && k[1] == h && k[2] == d && k[3] == s && v[0] == b && v[1] == h &&
              v[2] == s && v[3] == d;
     },
     {},
     "x is [B, S, H]; Q, K^T, V are its heads: [B, h, S, d], [B, h, d, S], [B, h, S, d] (h and d static)"},
    {"different",
     "TT",
     [](const Env& env, std::span<const ArgVal> a) {
       return env.symbolic_values || a[0].tensor->id != a[1].tensor->id;
     },
     {},
     "the two tensors are different e-classes (multi-patterns: two distinct operations)"},
    {"constant",
     "T",
     [](const Env& env, std::span<const ArgVal> a) { return env.symbolic_values || a[0].tensor->constant != nullptr; },
     {},
     "the tensor is a constant (a weight)"},
    {"positive", "T",
     [](const Env& env, std::span<const ArgVal> a) { return value_check(env, a[0], [](double v) { return v > 0; }); },
     ValueCond::Positive, "a constant whose elements are all finite and > 0"},
    {"nonneg", "T",
     [](const Env& env, std::span<const ArgVal> a) { return value_check(env, a[0], [](double v) { return v >= 0; }); },
     ValueCond::NonNegative, "a constant whose elements are all finite and >= 0"},
    {"nonzero", "T",
     [](const Env& env, std::span<const ArgVal> a) { return value_check(env, a[0], [](double v) { return v != 0; }); },
     ValueCond::Nonzero, "a constant whose elements are all finite and != 0"},
    {"zero", "T",
     [](const Env& env, std::span<const ArgVal> a) {
       return env.symbolic_values || a[0].tensor->zero;  // the analysis reads constants once
     },
     ValueCond::Zero, "every element is 0 (a zero constant, or the tensor analysis' zero fact: a gather of zero filters)"},
    {"uniform", "T",
     [](const Env& env, std::span<const ArgVal> a) {
       if (env.symbolic_values) return true;
       auto v = values(a[0]);
       return v && !v->empty() && std::all_of(v->begin(), v->end(), [&](double x) { return std::isfinite(x) && x == v->front(); });
     },
     ValueCond::Uniform, "a constant whose elements are all finite and equal (one delay for a whole population)"},
    {"run-step", "T", [](const Env& env, std::span<const ArgVal>) { return env.symbolic_values; }, ValueCond::Step,
     "every element equals the run's time step dt: a fact of a run, not of the graph, so only verification (which "
     "takes dt as a variable) assumes it and the optimizer never applies a rule that needs it"},
    {"pruned-zero", "T",
     [](const Env& env, std::span<const ArgVal> a) { return env.symbolic_values || a[0].tensor->constant != nullptr; },
     ValueCond::ZeroPruned,
     "a constant (weights, bias, leak) that is 0 at the neurons kept-neurons prunes (which kept-neurons reads from "
     "the values; verification assumes it of the pruned ones)"},
    {"pruned-nonneg", "T",
     [](const Env& env, std::span<const ArgVal> a) { return env.symbolic_values || a[0].tensor->constant != nullptr; },
     ValueCond::NonNegativePruned,
     "a constant (a threshold) that is >= 0 at the neurons kept-neurons prunes (as pruned-zero)"},
    {"pruned-nonpos", "T", [](const Env& env, std::span<const ArgVal>) { return env.symbolic_values; },
     ValueCond::NonPositivePruned,
     "<= 0 at the neurons kept-neurons prunes: assumed in verification, never true in the optimizer (kept-neurons "
     "does not check it), for rules that tests/prove refutes"},
    {"some-constant-channels",
     "T",
     [](const Env& env, std::span<const ArgVal> a) {
       const TensorFact& t = *a[0].tensor;
       if (env.symbolic_values) return t.type.shape.rank() >= 2 && t.type.shape[1].is_static() && t.type.shape[1].size() >= 2;
       if (!t.channels) return false;
       bool some = false, all = true;
       for (bool b : *t.channels) {
         some = some || b;
         all = all && b;
       }
       return some && !all;
     },
     {},
     "some channels (axis 1) are constant and some are not (the tensor analysis' channel facts; in verification, any "
     "tensor of two channels or more)"},
    {"merge-not-wider",
     "TTT",
     [](const Env&, std::span<const ArgVal> a) {
       // w: K x N, a: K x r, b: r x N; the adapter's weights merged into w: K N <= K N + K r + r N
       // multiply-adds per row, always, when the shapes chain
       const ir::Shape &w = *shape(a[0]), &l = *shape(a[1]), &r = *shape(a[2]);
       return w.rank() == 2 && l.rank() == 2 && r.rank() == 2 && w[0] == l[0] && l[1] == r[0] && r[1] == w[1];
     },
     {},
     "K x N, K x r and r x N matrices: x w + (x a) b merged into one product by w + a b does fewer multiply-adds"},
    {"compose-not-wider",
     "TT",
     [](const Env&, std::span<const ArgVal> a) {
       // a: K x r, b: r x N static: (x a) b costs K r + r N multiply-adds per row, x (a b) K N
       const ir::Shape &l = *shape(a[0]), &r = *shape(a[1]);
       if (l.rank() != 2 || r.rank() != 2 || !l.is_static() || !r.is_static()) return false;
       return l[0].size() * r[1].size() <= l[0].size() * l[1].size() + r[0].size() * r[1].size();
     },
     {},
     "K x r and r x N static matrices whose product K x N is not wider than the pair (K N <= K r + r N)"},
    {"depthwise",
     "TTV",
     [](const Env&, std::span<const ArgVal> a) {
       // x: N x C x ..., w: C x 1 x ..., group C: one filter per channel
       const ir::Shape &x = *shape(a[0]), &w = *shape(a[1]);
       auto g = as_int(a[2]);
       return g && x.rank() >= 3 && w.rank() == x.rank() && x[1].is_static() && x[1].size() == *g &&
              w[0] == x[1] && w[1] == ir::Dim(1);
     },
     {},
     "a depthwise convolution: group = the input's channels, one C x 1 x ... filter per channel"},
    {"no-zero",
     "T",
     [](const Env&, std::span<const ArgVal> a) {
       auto v = as_ints(a[0]);
       return v && std::find(v->begin(), v->end(), 0) == v->end();
     },
     {},
     "an integer tensor of known contents with no 0 (a reshape target that copies no dimension)"},
    {"eq",
     "VV",
     [](const Env&, std::span<const ArgVal> a) {
       return a[0].value && a[1].value && literal_equal(*a[0].value, *a[1].value);
     },
     {},
     "the two values are equal"},
    {"ne",
     "VV",
     [](const Env&, std::span<const ArgVal> a) {
       return a[0].value && a[1].value && !literal_equal(*a[0].value, *a[1].value);
     },
     {},
     "the two values differ"},
    {"identity-perm",
     "V",
     [](const Env&, std::span<const ArgVal> a) {
       auto p = as_ints(a[0]);
       if (!p) return false;
       for (size_t i = 0; i < p->size(); ++i)
         if ((*p)[i] != static_cast<int64_t>(i)) return false;
       return true;
     },
     {},
     "a permutation that keeps every axis in place"},
    {"last-axis",
     "VT",
     [](const Env&, std::span<const ArgVal> a) {
       // an axis, or a list of one axis (a reduction's `axes`)
       ArgVal axis = a[0];
       if (auto list = as_ints(a[0]); list && !a[0].tensor) {
         if (list->size() != 1) return false;
         axis.value = Literal((*list)[0]);
       }
       auto ax = axis_of(axis, a[1]);
       return ax && *ax == shape(a[1])->rank() - 1;
     },
     {},
     "the axis (or the one axis of a list) is the last axis of the tensor"},
    {"axis-not-in",
     "VV",
     [](const Env&, std::span<const ArgVal> a) {
       // a[0] (an axis) is not among a[1] (ints), both non-negative
       auto ax = as_int(a[0]);
       auto set = as_ints(a[1]);
       return ax && set && std::find(set->begin(), set->end(), *ax) == set->end();
     },
     {},
     "the axis is not in the list"},
    {"fixes-axis",
     "VV",
     [](const Env&, std::span<const ArgVal> a) {
       // the permutation a[0] keeps axis a[1] (non-negative) in place
       auto p = as_ints(a[0]);
       auto ax = as_int(a[1]);
       return p && ax && *ax >= 0 && *ax < static_cast<int64_t>(p->size()) && (*p)[static_cast<size_t>(*ax)] == *ax;
     },
     {},
     "the permutation keeps the axis in place"},
    {"no-pads",
     "V",
     [](const Env&, std::span<const ArgVal> a) {
       auto p = as_ints(a[0]);
       return p && std::all_of(p->begin(), p->end(), [](int64_t v) { return v == 0; });
     },
     {},
     "every pad is 0"},
    {"all-ones",
     "V",
     [](const Env&, std::span<const ArgVal> a) {
       auto p = as_ints(a[0]);
       return p && std::all_of(p->begin(), p->end(), [](int64_t v) { return v == 1; });
     },
     {},
     "every entry is 1 (strides, dilations)"},
};

std::optional<Literal> ints(std::vector<int64_t> v) { return Literal(std::move(v)); }

// The neurons of a population that a dead-neuron rule keeps
// (docs/spiking.md, "Pruning"). A neuron is pruned when its entries of the
// first three tensors are all 0 (a row of a matrix, an element of a vector:
// its input weights, its bias, its leak potential) and its entry of the
// fourth (its threshold) is >= 0, every one finite: from zero state its
// input is 0, so its membrane stays at 0 and never exceeds the threshold.
// The rule's conditions (`pruned-zero`, `pruned-nonneg`) say the same of
// the pruned neurons, so verification (no values: id -1) prunes the last
// ones (verification_kept_neurons) and assumes that of them. Declines when
// nothing is pruned; keeps one neuron when every one is dead (a population
// is never empty).
std::optional<Literal> kept_neurons(std::span<const ArgVal> a) {
  const ir::Shape& s0 = *shape(a[0]);
  if (s0.rank() < 1 || !s0[0].is_static()) return std::nullopt;
  int64_t n = s0[0].size();
  for (const ArgVal& x : a)
    if (shape(x)->rank() < 1 || shape(x)->rank() > 2 || !((*shape(x))[0] == ir::Dim(n))) return std::nullopt;
  std::vector<int64_t> keep;
  if (a[0].tensor->id == -1) {
    for (int64_t i = 0; i < verification_kept_neurons(n); ++i) keep.push_back(i);
  } else {
    for (const ArgVal& x : a)
      if (!x.tensor->constant) return std::nullopt;
    // whether every element of neuron i's slice satisfies `pred`
    auto slice = [&](const ArgVal& x, int64_t i, auto pred) {
      const ir::Tensor& t = *x.tensor->constant;
      int64_t per = t.dims().size() == 2 ? t.dims()[1] : 1;
      for (int64_t k = i * per; k < (i + 1) * per; ++k) {
        double v = t.as_double(k);
        if (!std::isfinite(v) || !pred(v)) return false;
      }
      return true;
    };
    for (int64_t i = 0; i < n; ++i) {
      bool dead = slice(a[3], i, [](double v) { return v >= 0; });
      for (size_t z = 0; z < 3 && dead; ++z) dead = slice(a[z], i, [](double v) { return v == 0; });
      if (!dead) keep.push_back(i);
    }
    if (keep.empty()) keep.push_back(0);
  }
  if (static_cast<int64_t>(keep.size()) == n) return std::nullopt;
  return ints(std::move(keep));
}

// The channels (axis 1) of a tensor that are constant (`constant`) or not,
// from the tensor analysis' facts. A rule that splits on them holds for every
// partition, so verification (no facts: id -1) takes one of its own: the odd
// channels constant. Declines when a side would be empty.
std::optional<Literal> channel_indices(const TensorFact& t, bool constant) {
  const ir::Shape& s = t.type.shape;
  if (s.rank() < 2 || !s[1].is_static()) return std::nullopt;
  int64_t n = s[1].size();
  std::vector<bool> is_const(static_cast<size_t>(n));
  int64_t live = 0;
  for (int64_t c = 0; c < n; ++c) {
    is_const[static_cast<size_t>(c)] = t.channels ? static_cast<size_t>(c) < t.channels->size() &&
                                                        (*t.channels)[static_cast<size_t>(c)]
                                       : t.id == -1 ? c % 2 == 1
                                                    : false;
    live += is_const[static_cast<size_t>(c)] ? 0 : 1;
  }
  // Where the tensor's channels come in blocks of kChannelBlock, so do the
  // live ones: the first constant channels are computed with them. Kernels
  // that block channels (ONNX Runtime's NCHWc convolutions by 8 or 16, tensor
  // cores by 8) run a count that is not a multiple on a slower path; 40%
  // pruning leaves 19 of 32 channels. Any partition is exact.
  constexpr int64_t kChannelBlock = 16;
  if (n % kChannelBlock == 0)
    for (int64_t c = 0; c < n && live % kChannelBlock != 0; ++c)
      if (is_const[static_cast<size_t>(c)]) {
        is_const[static_cast<size_t>(c)] = false;
        ++live;
      }
  std::vector<int64_t> v;
  for (int64_t c = 0; c < n; ++c)
    if (is_const[static_cast<size_t>(c)] == constant) v.push_back(c);
  if (v.empty() || static_cast<int64_t>(v.size()) == n) return std::nullopt;
  return ints(std::move(v));
}

const LetDef kLets[] = {
    {"compose-perm", "VV",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       // transpose(transpose(x, inner), outer) == transpose(x, inner[outer[i]])
       auto outer = as_ints(a[0]);
       auto inner = as_ints(a[1]);
       if (!outer || !inner || outer->size() != inner->size()) return std::nullopt;
       std::vector<int64_t> p;
       for (int64_t i : *outer) {
         if (i < 0 || i >= static_cast<int64_t>(inner->size())) return std::nullopt;
         p.push_back((*inner)[static_cast<size_t>(i)]);
       }
       return ints(p);
     },
     "the permutation of two transposes in a row (outer, inner)"},
    {"invert-perm", "V",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       auto p = as_ints(a[0]);
       if (!p) return std::nullopt;
       std::vector<int64_t> inv(p->size(), -1);
       for (size_t i = 0; i < p->size(); ++i) {
         int64_t j = (*p)[i];
         if (j < 0 || j >= static_cast<int64_t>(p->size()) || inv[static_cast<size_t>(j)] != -1) return std::nullopt;
         inv[static_cast<size_t>(j)] = static_cast<int64_t>(i);
       }
       return ints(inv);
     },
     "the inverse permutation"},
    {"swap-last2", "T",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       int64_t r = shape(a[0])->rank();
       if (r < 2) return std::nullopt;
       std::vector<int64_t> p(static_cast<size_t>(r));
       std::iota(p.begin(), p.end(), 0);
       std::swap(p[static_cast<size_t>(r - 1)], p[static_cast<size_t>(r - 2)]);
       return ints(p);
     },
     "the permutation that swaps the last two axes of the tensor's rank"},
    {"shape-of", "T",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       const ir::Shape& s = *shape(a[0]);
       if (!s.is_static()) return std::nullopt;
       return ints(s.sizes());
     },
     "the tensor's static shape, as a list"},
    {"dim", "TV",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       auto ax = axis_of(a[1], a[0]);
       if (!ax || !(*shape(a[0]))[*ax].is_static()) return std::nullopt;
       return Literal((*shape(a[0]))[*ax].size());
     },
     "the tensor's size at the axis"},
    {"split-sizes", "TTV",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       auto i = axis_of(a[2], a[0]);
       auto j = axis_of(a[2], a[1]);
       if (!i || !j) return std::nullopt;
       const ir::Dim& x = (*shape(a[0]))[*i];
       const ir::Dim& y = (*shape(a[1]))[*j];
       if (!x.is_static() || !y.is_static()) return std::nullopt;
       return ints({x.size(), y.size()});
     },
     "[a.dim(axis), b.dim(axis)]: the sizes that split a concatenation of a and b again"},
    {"norm-axis", "VT",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       auto ax = axis_of(a[0], a[1]);
       if (!ax) return std::nullopt;
       return Literal(*ax);
     },
     "the axis made non-negative for the tensor's rank"},
    {"permute-axis", "VV",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       // where axis a[1] of transpose(x, perm a[0]) comes from in x: perm[axis]
       auto p = as_ints(a[0]);
       auto ax = as_int(a[1]);
       if (!p || !ax) return std::nullopt;
       int64_t n = static_cast<int64_t>(p->size());
       int64_t k = *ax < 0 ? *ax + n : *ax;
       if (k < 0 || k >= n) return std::nullopt;
       return Literal((*p)[static_cast<size_t>(k)]);
     },
     "the input axis that a transpose's output axis comes from"},
    {"channel-shape", "TT",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       // [C, 1, ..., 1] for a per-channel vector of length C broadcast against x (N x C x ...) at axis 1
       int64_t r = shape(a[1])->rank();
       const ir::Shape& v = *shape(a[0]);
       if (r < 2 || v.rank() != 1 || !v[0].is_static()) return std::nullopt;
       std::vector<int64_t> s{v[0].size()};
       for (int64_t i = 2; i < r; ++i) s.push_back(1);
       return ints(s);
     },
     "[C, 1, ..., 1]: reshapes a length-C vector to broadcast over axis 1 of the second tensor"},
    {"per-out-channel", "T",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       // [K, 1, ..., 1] for a K x ... convolution weight
       const ir::Shape& w = *shape(a[0]);
       if (w.rank() < 2 || !w[0].is_static()) return std::nullopt;
       std::vector<int64_t> s{w[0].size()};
       for (int64_t i = 1; i < w.rank(); ++i) s.push_back(1);
       return ints(s);
     },
     "[K, 1, ..., 1]: a per-output-channel factor of a K x ... weight"},
    {"flatten-spatial", "T",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       // [N, C, D1*D2*...] of an N x C x D1 x ... tensor
       const ir::Shape& x = *shape(a[0]);
       if (x.rank() < 3 || !x.is_static()) return std::nullopt;
       int64_t p = 1;
       for (int64_t i = 2; i < x.rank(); ++i) p *= x[i].size();
       return ints({x[0].size(), x[1].size(), p});
     },
     "[N, C, D1*D2*...] of an N x C x D1 x ... tensor"},
    {"conv-1x1-shape", "TT",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       // [N, K, D1, ...]: the result of a 1x1 convolution of x (N x C x D...) with w (K x C x 1...)
       const ir::Shape& x = *shape(a[0]);
       const ir::Shape& w = *shape(a[1]);
       if (x.rank() < 3 || !x.is_static() || !w[0].is_static()) return std::nullopt;
       std::vector<int64_t> s = x.sizes();
       s[1] = w[0].size();
       return ints(s);
     },
     "[N, K, D1, ...]: the result shape of a 1x1 convolution of x with w"},
    {"flatten-shape", "TV",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       // the 2-d shape flatten(x, axis) gives
       const ir::Shape& x = *shape(a[0]);
       auto ax = as_int(a[1]);
       if (!ax || !x.is_static()) return std::nullopt;
       int64_t k = *ax < 0 ? *ax + x.rank() : *ax;
       if (k < 0 || k > x.rank()) return std::nullopt;
       int64_t p = 1, q = 1;
       for (int64_t i = 0; i < x.rank(); ++i) (i < k ? p : q) *= x[i].size();
       return ints({p, q});
     },
     "the 2-d shape that flatten(x, axis) gives"},
    {"weight-shape-1x1", "T",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       // [K, C] of a K x C x 1 x 1 convolution weight
       const ir::Shape& w = *shape(a[0]);
       if (w.rank() < 3 || !w[0].is_static() || !w[1].is_static()) return std::nullopt;
       return ints({w[0].size(), w[1].size()});
     },
     "[K, C] for a K x C x 1 x ... x 1 convolution weight"},
    {"conv-weight-of", "T",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       // [K, C, 1, 1] for a K x C matrix
       const ir::Shape& w = *shape(a[0]);
       if (w.rank() != 2 || !w.is_static()) return std::nullopt;
       return ints({w[0].size(), w[1].size(), 1, 1});
     },
     "[K, C, 1, 1] for a K x C matrix"},
    {"conv-weight-of-transposed", "T",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       // [K, C, 1, 1] for a C x K matrix (the right operand of a MatMul over channels)
       const ir::Shape& w = *shape(a[0]);
       if (w.rank() != 2 || !w.is_static()) return std::nullopt;
       return ints({w[1].size(), w[0].size(), 1, 1});
     },
     "[K, C, 1, 1] for a C x K matrix"},
    {"pool-weight-shape", "TV",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       // [C, 1, kh, kw]: one filter per channel of a NIR pool's input [C, H, W]
       const ir::Shape& x = *shape(a[0]);
       auto k = as_ints(a[1]);
       if (x.rank() != 3 || !x[0].is_static() || !k || k->size() != 2) return std::nullopt;
       return ints({x[0].size(), 1, (*k)[0], (*k)[1]});
     },
     "[C, 1, kh, kw] for a NIR pool over x [C, H, W] with kernel [kh, kw]: a depthwise filter per channel"},
    {"numel-shape", "T",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       // [n] for a static tensor of n elements: reshapes it to a vector
       auto n = shape(a[0])->num_elements();
       if (!n) return std::nullopt;
       return ints({*n});
     },
     "[n] for a static tensor of n elements (a reshape to 1-d)"},
    {"live-channels", "T",
     [](std::span<const ArgVal> a) { return channel_indices(*a[0].tensor, false); },
     "the indices of the channels (axis 1) that are not constant, with the first constant ones where that makes their "
     "count a multiple of 16 in a tensor of 16k channels (in verification: the even ones)"},
    {"constant-channels", "T",
     [](std::span<const ArgVal> a) { return channel_indices(*a[0].tensor, true); },
     "the indices of the constant channels (axis 1) that live-channels leaves (in verification: the odd ones)"},
    {"scalar-value", "T",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       // a constant of one element, as a float attribute value (an epsilon read into an attribute)
       auto v = values(a[0]);
       if (!v || v->size() != 1 || !std::isfinite((*v)[0])) return std::nullopt;
       float f = static_cast<float>((*v)[0]);
       if (static_cast<double>(f) != (*v)[0]) return std::nullopt;  // not exact as an f32 attribute
       return Literal(f);
     },
     "the value of a constant of one element, as a float (declines unless it is exact in binary32; verification draws "
     "the variable as a constant)",
     true},
    {"reciprocal-value", "T",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       // 1 / a constant of one element, as a float attribute value, only where it is exact in binary32 (a
       // power of two: then x / c and x * (1 / c) are the same binary32 number, both the rounding of one real)
       auto v = values(a[0]);
       if (!v || v->size() != 1 || !std::isfinite((*v)[0]) || (*v)[0] == 0) return std::nullopt;
       float c = static_cast<float>((*v)[0]);
       if (static_cast<double>(c) != (*v)[0]) return std::nullopt;
       int e = 0;
       if (std::frexp(std::fabs(c), &e) != 0.5f) return std::nullopt;  // not a power of two
       float r = 1.0f / c;
       if (!std::isnormal(r) || static_cast<double>(r) * static_cast<double>(c) != 1.0) return std::nullopt;
       return Literal(r);
     },
     "1 / the value of a constant of one element, as a float; declines unless the constant is a power of two whose "
     "reciprocal is a normal binary32 number (so that dividing by it and multiplying by the result agree in binary32; "
     "verification draws the variable as a constant)",
     true},
    {"kept-neurons", "TTTT", kept_neurons,
     "the neurons a dead-neuron rule keeps: all but those whose entries of the first three tensors (rows of a "
     "matrix, elements of a vector) are 0 and of the fourth >= 0 (in verification: the first ceil(n/2)); declines "
     "when none is pruned"},
    {"length", "T",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       const ir::Shape& s = *shape(a[0]);
       if (s.rank() != 1 || !s[0].is_static() || s[0].size() == 0) return std::nullopt;
       return Literal(s[0].size());
     },
     "the length of a non-empty 1-d tensor (a list of indices)"},
    {"zero-pads", "T",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       int64_t r = shape(a[0])->rank();
       if (r < 3) return std::nullopt;
       return ints(std::vector<int64_t>(static_cast<size_t>(2 * (r - 2)), 0));
     },
     "all-zero pads for a convolution of the tensor's rank"},
    {"add-pads", "VV",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       auto p = as_ints(a[0]);
       auto q = as_ints(a[1]);
       if (!p || !q || p->size() != q->size()) return std::nullopt;
       std::vector<int64_t> s(p->size());
       for (size_t i = 0; i < s.size(); ++i) s[i] = (*p)[i] + (*q)[i];
       return ints(s);
     },
     "element-wise sum of two pad lists"},
    {"spatial-pads", "T",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       // the spatial part of a Pad op's pads (begins then ends over N, C, spatial...), when N and C are unpadded
       auto p = as_ints(a[0]);
       if (!p || p->size() % 2 != 0 || p->size() < 6) return std::nullopt;
       size_t r = p->size() / 2;
       if ((*p)[0] != 0 || (*p)[1] != 0 || (*p)[r] != 0 || (*p)[r + 1] != 0) return std::nullopt;
       std::vector<int64_t> s;
       for (size_t i = 2; i < r; ++i) s.push_back((*p)[i]);
       for (size_t i = r + 2; i < 2 * r; ++i) s.push_back((*p)[i]);
       if (std::any_of(s.begin(), s.end(), [](int64_t v) { return v < 0; })) return std::nullopt;
       return ints(s);
     },
     "the spatial pads (begins, ends) of a Pad op's pads when batch and channel are unpadded"},
};

}  // namespace

const CondDef* find_condition(std::string_view name) {
  for (const CondDef& c : kConditions)
    if (c.name == name) return &c;
  return nullptr;
}

const LetDef* find_let(std::string_view name) {
  for (const LetDef& l : kLets)
    if (l.name == name) return &l;
  return nullptr;
}

std::span<const CondDef> conditions() { return kConditions; }
std::span<const LetDef> lets() { return kLets; }

bool int_position(ir::Op op, size_t i) { return ir::op_info(op).takes_int_input(i); }

bool literal_equal(const Literal& a, const Literal& b) {
  auto num = [](const Literal& v) -> std::optional<double> {
    if (auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
    if (auto* f = std::get_if<float>(&v)) return static_cast<double>(*f);
    return std::nullopt;
  };
  if (auto x = num(a), y = num(b); x && y) return *x == *y;
  return ir::attr_equal(a, b);
}

std::string literal_str(const Literal& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>)
          return std::to_string(x);
        else if constexpr (std::is_same_v<T, float>)
          return fmt::format("{}", x);
        else if constexpr (std::is_same_v<T, std::string>)
          return "\"" + x + "\"";
        else if constexpr (std::is_same_v<T, std::vector<int64_t>> || std::is_same_v<T, std::vector<float>>)
          return fmt::format("[{}]", fmt::join(x, " "));
        else
          return "<value>";
      },
      v);
}

ir::Tensor literal_tensor(const Literal& v, bool int_scalar) {
  if (auto* i = std::get_if<int64_t>(&v)) {
    if (int_scalar) return ir::Tensor::from_values<int64_t>(ir::DType::i64, {}, {*i});
    return ir::Tensor::scalar_f32(static_cast<float>(*i));
  }
  if (auto* f = std::get_if<float>(&v)) return ir::Tensor::scalar_f32(*f);
  if (auto* l = std::get_if<std::vector<int64_t>>(&v)) return ir::Tensor::vector_i64(*l);
  if (auto* l = std::get_if<std::vector<float>>(&v))
    return ir::Tensor::from_values<float>(ir::DType::f32, {static_cast<int64_t>(l->size())}, *l);
  return ir::Tensor::scalar_f32(0);
}

std::vector<ArgVal> resolve(const Env& env, std::span<const Arg> args) {
  std::vector<ArgVal> out;
  for (const Arg& a : args) {
    ArgVal v;
    if (!a.is_var) {
      v.value = a.literal;
    } else if (auto t = env.tensors.find(a.var); t != env.tensors.end()) {
      v.tensor = &t->second;
    } else if (auto at = env.attrs.find(a.var); at != env.attrs.end()) {
      v.value = at->second;
    }
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace refinery::rules
