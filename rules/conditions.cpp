// The named conditions of the rule language (`:when`): builtins.h.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "rules/builtin_args.h"
#include "rules/builtins.h"

namespace refinery::rules {
namespace {

using namespace args;

// A value condition holds of a constant whose elements are all finite and
// satisfy `pred` (never of a class whose value the e-graph does not know):
// verification assumes the same of the symbolic elements.
bool value_check(const Env& env, const ArgVal& a, bool (*pred)(double)) {
  if (env.symbolic_values) return true;
  auto v = values(a);
  return v && std::all_of(v->begin(), v->end(), [&](double x) { return std::isfinite(x) && pred(x); });
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
    {"attention-heads-merged",
     "TTTTT",
     [](const Env&, std::span<const ArgVal> a) {
       // torch's nn.MultiheadAttention, sequence first: x [S, B, H_in], w [H_in, 3 H]; Q and V per head
       // [M, S, d], K^T [M, d, S] with d static and dividing H: each reshape of a [S, B, H] third to
       // [S, M, d] kept S in place, so M = B H / d and row m is batch m / (H / d), head m % (H / d).
       const ir::Shape &x = *shape(a[0]), &w = *shape(a[1]), &q = *shape(a[2]), &k = *shape(a[3]), &v = *shape(a[4]);
       if (x.rank() != 3 || w.rank() != 2 || q.rank() != 3 || k.rank() != 3 || v.rank() != 3) return false;
       const ir::Dim &s = x[0], &d = q[2];
       if (s.is_unknown() || !d.is_static() || d.size() == 0 || !w[1].is_static() || w[1].size() % 3 != 0) return false;
       if ((w[1].size() / 3) % d.size() != 0) return false;
       return q[1] == s && k[1] == d && k[2] == s && v[1] == s && v[2] == d;
     },
     {},
     "x is [S, B, H_in], w [H_in, 3 H]; Q, K^T, V are its heads merged with the batch: [M, S, d], [M, d, S], "
     "[M, S, d] (d static, dividing H)"},
    {"heads-merged",
     "TTTTT",
     [](const Env&, std::span<const ArgVal> a) {
       // a [B, h, S, d] and b [B, h, T, d], each reshaped to [?, S, d] and [?, T, d] (targets s1 and s2
       // whose last two entries are those dims: the leading two merged, B h rows, the heads merged with
       // the batch as torch.baddbmm takes them); y, the product reshaped, [B, h, S, T]: the heads put
       // back, so y is the per-head product. B, h, S, T, d known (a symbol matches only itself).
       const ir::Shape &x = *shape(a[0]), &k = *shape(a[2]), &y = *shape(a[4]);
       auto s1 = as_dims(a[1]), s2 = as_dims(a[3]);
       if (x.rank() != 4 || k.rank() != 4 || y.rank() != 4 || !s1 || !s2 || s1->size() != 3 || s2->size() != 3)
         return false;
       for (const ir::Dim& d : {x[0], x[1], x[2], x[3], k[2]})
         if (d.is_unknown()) return false;
       return (*s1)[1] == x[2] && (*s1)[2] == x[3] && (*s2)[1] == k[2] && (*s2)[2] == k[3] && k[0] == x[0] &&
              k[1] == x[1] && k[3] == x[3] && y[0] == x[0] && y[1] == x[1] && y[2] == x[2] && y[3] == k[2];
     },
     {},
     "a [B, h, S, d] and b [B, h, T, d] reshaped by s1 and s2 to [?, S, d] and [?, T, d] (their leading two "
     "dims merged), and y [B, h, S, T]: a product of heads merged with the batch, put back"},
    {"packed-thirds",
     "TTTTTTTTT",
     [](const Env&, std::span<const ArgVal> a) {
       // three slices of x w [.., 3 H] (x of rank 2 or more; w [H_in, 3 H]) along its last axis, their
       // starts and ends (Q's, K's, V's) and their axes, are its equal thirds in order
       const ir::Shape &x = *shape(a[0]), &w = *shape(a[1]);
       if (x.rank() < 2 || w.rank() != 2 || !w[1].is_static()) return false;
       int64_t n = w[1].size();
       if (n % 3 != 0) return false;
       auto one = [&](size_t i) -> std::optional<int64_t> {
         auto v = as_ints(a[i]);
         if (!v || v->size() != 1) return std::nullopt;
         return v->front();
       };
       auto ax = one(8);
       if (!ax || ir::normalize_axis(*ax, x.rank()) != x.rank() - 1) return false;
       for (int64_t t = 0; t < 3; ++t)
         if (one(2 + 2 * static_cast<size_t>(t)) != t * n / 3 || one(3 + 2 * static_cast<size_t>(t)) != (t + 1) * n / 3)
           return false;
       return true;
     },
     {},
     "x, w [H_in, 3 H], then the starts and ends of three slices of x w along its last axis and their axes: the "
     "slices are [0, H), [H, 2 H), [2 H, 3 H)"},
    {"rows-flattened",
     "TTTT",
     [](const Env&, std::span<const ArgVal> a) {
       // x [d0, .., dk-2, K]; w [K, M]; s a target of two entries (x reshaped to [N, K]: the
       // product by w fixes the second to K, so the rows are x's leading dims flattened); y, the
       // product reshaped, [d0, .., dk-2, ?]: the rows put back, so y is x's own product
       const ir::Shape &x = *shape(a[0]), &w = *shape(a[1]), &s = *shape(a[2]), &y = *shape(a[3]);
       int64_t k = x.rank();
       if (k < 2 || w.rank() != 2 || s.rank() != 1 || !(s[0] == ir::Dim(2)) || y.rank() != k) return false;
       if (x[k - 1].is_unknown() || !(w[0] == x[k - 1])) return false;
       for (int64_t i = 0; i + 1 < k; ++i)
         if (x[i].is_unknown() || !(y[i] == x[i])) return false;
       return true;
     },
     {},
     "x [.., K], w [K, M], a reshape target of two entries, and y [x's leading dims, ?]: x's rows flattened for "
     "a 2-d product by w and put back"},
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
    {"weight",
     "T",
     [](const Env& env, std::span<const ArgVal> a) {
       const TensorFact& t = *a[0].tensor;
       return env.symbolic_values || t.constant != nullptr || t.input_free ||
              (t.channels && std::all_of(t.channels->begin(), t.channels->end(), [](bool b) { return b; }));
     },
     {},
     "the tensor is a constant or a constant expression (every channel independent of the graph's inputs, the tensor "
     "analysis' channel facts: a weight a merge computed, W + s A B; or every element, its input_free fact: a "
     "gathered bias)"},
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
     ValueCond::Zero,
     "every element is 0 (a zero constant, or the tensor analysis' zero fact: a gather of zero filters, a "
     "ConstantOfShape of 0)"},
    {"uniform", "T",
     [](const Env& env, std::span<const ArgVal> a) {
       if (env.symbolic_values) return true;
       auto v = values(a[0]);
       return v && !v->empty() &&
              std::all_of(v->begin(), v->end(), [&](double x) { return std::isfinite(x) && x == v->front(); });
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
       if (env.symbolic_values)
         return t.type.shape.rank() >= 2 && t.type.shape[1].is_static() && t.type.shape[1].size() >= 2;
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
       return g && x.rank() >= 3 && w.rank() == x.rank() && x[1].is_static() && x[1].size() == *g && w[0] == x[1] &&
              w[1] == ir::Dim(1);
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

}  // namespace

const CondDef* find_condition(std::string_view name) {
  for (const CondDef& c : kConditions)
    if (c.name == name) return &c;
  return nullptr;
}

std::span<const CondDef> conditions() { return kConditions; }

}  // namespace refinery::rules
