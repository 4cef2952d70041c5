// The named lets of the rule language (`:let`), C++ appliers that compute
// attributes from a match: builtins.h.
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "rules/builtin_args.h"
#include "rules/builtins.h"

namespace refinery::rules {
namespace {

using namespace args;

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

// Where a tensor's channels come in blocks of kChannelBlock, so do the live
// ones: the first left-out channels (`out`) are computed with them. Kernels
// that block channels (ONNX Runtime's NCHWc convolutions by 8 or 16, tensor
// cores by 8) run a count that is not a multiple on a slower path; 40%
// pruning leaves 19 of 32 channels. Any partition is exact. Counts this
// leaves odd (a tensor of 24 channels, a union of two rounded sets) are
// widened after extraction for a target with a channel block
// (optimize/channel_blocks.h, the cpu spec's `channel_block`).
void round_live_to_blocks(std::vector<bool>& out, int64_t& live) {
  constexpr int64_t kChannelBlock = 16;
  const auto n = static_cast<int64_t>(out.size());
  if (n % kChannelBlock != 0) return;
  for (int64_t c = 0; c < n && live % kChannelBlock != 0; ++c)
    if (out[static_cast<size_t>(c)]) {
      out[static_cast<size_t>(c)] = false;
      ++live;
    }
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
    is_const[static_cast<size_t>(c)] =
        t.channels   ? static_cast<size_t>(c) < t.channels->size() && (*t.channels)[static_cast<size_t>(c)]
        : t.id == -1 ? c % 2 == 1
                     : false;
    live += is_const[static_cast<size_t>(c)] ? 0 : 1;
  }
  round_live_to_blocks(is_const, live);
  std::vector<int64_t> v;
  for (int64_t c = 0; c < n; ++c)
    if (is_const[static_cast<size_t>(c)] == constant) v.push_back(c);
  if (v.empty() || static_cast<int64_t>(v.size()) == n) return std::nullopt;
  return ints(std::move(v));
}

// The filters (rows along axis 0) of a convolution's weights that
// conv-live-filters computes: those with an entry that is not 0, rounded up
// to blocks as live channels are. Verification (no values: id -1) keeps the
// first verification_kept_neurons(n) and assumes the rest zero (the rule's
// `pruned-zero`). Declines when no filter is left out, when every one would
// be (a convolution by zero filters is its bias: conv-zero-weight), and on a
// 1x1 selection (every filter at most one 1 and zeros): the scatter this
// rule writes is one, and computing its live filters would only add
// another.
std::optional<Literal> live_filters(std::span<const ArgVal> a) {
  const ir::Shape& s = *shape(a[0]);
  if (s.rank() < 3 || !s.is_static() || s[0].size() == 0) return std::nullopt;
  const int64_t n = s[0].size(), c = s[1].size();
  std::vector<bool> out(static_cast<size_t>(n), false);
  int64_t live = n;
  if (a[0].tensor->id == -1) {
    for (int64_t i = verification_kept_neurons(n); i < n; ++i, --live) out[static_cast<size_t>(i)] = true;
  } else {
    // The analysis' zero (filter, input channel) pairs, computed once per
    // weight (egraph/tensor/context.h): every convolution with constant
    // weights asks here each iteration.
    const ir::Tensor* w = a[0].tensor->constant;
    const std::vector<bool>* zero = a[0].tensor->zero_pairs;
    if (!w || !zero) return std::nullopt;
    bool selection = *s.num_elements() == n * c;  // 1x1: a pair is one entry
    for (int64_t i = 0; i < n; ++i) {
      int64_t nonzero = 0;
      for (int64_t j = 0; j < c; ++j) {
        if ((*zero)[static_cast<size_t>(i * c + j)]) continue;
        ++nonzero;
        selection = selection && nonzero == 1 && w->as_double(i * c + j) == 1;
        if (!selection) break;  // the filter is live, and the weights no selection
      }
      if (nonzero == 0) {
        out[static_cast<size_t>(i)] = true;
        --live;
      }
    }
    if (selection || live == n) return std::nullopt;
  }
  round_live_to_blocks(out, live);
  if (live == n || live == 0) return std::nullopt;
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < n; ++i)
    if (!out[static_cast<size_t>(i)]) keep.push_back(i);
  return ints(std::move(keep));
}

// The filters `live-filters` kept (the second argument) among the n along
// the first argument's axis 0, when they are indices of them: n and the list.
struct Kept {
  int64_t n = 0;
  std::vector<int64_t> list;
};
std::optional<Kept> kept_filters(std::span<const ArgVal> a) {
  const ir::Shape& s = *shape(a[0]);
  auto kept = as_ints(a[1]);
  if (s.rank() < 3 || !s[0].is_static() || !kept || kept->empty()) return std::nullopt;
  for (int64_t i : *kept)
    if (i < 0 || i >= s[0].size()) return std::nullopt;
  return Kept{s[0].size(), std::move(*kept)};
}

// A depthwise convolution's selection of channels `i` (the third argument)
// split in two: `zero`, the entries whose filter (of the weights, the second
// argument) is all 0, and `input`, the others, each of which must be a
// constant channel of the input (the first argument); `order` puts the
// entries of the two, concatenated, back in the selection's order. Each part
// then becomes a constant expression (a convolution by zero filters is its
// bias; one of constant inputs is a constant expression). Any partition is
// exact, so verification (no facts: id -1) takes one of its own: the even
// positions zero. Declines unless both parts have an entry.
struct DepthwiseSplit {
  std::vector<int64_t> zero, input, order;
};
std::optional<DepthwiseSplit> depthwise_split(std::span<const ArgVal> a) {
  const ir::Shape& w = *shape(a[1]);
  auto sel = as_index_list(a[2]);
  if (!sel || w.rank() < 3 || !w[0].is_static()) return std::nullopt;
  const int64_t n = w[0].size();
  DepthwiseSplit out;
  std::vector<bool> is_zero(sel->size());
  for (size_t j = 0; j < sel->size(); ++j) {
    int64_t c = (*sel)[j] < 0 ? (*sel)[j] + n : (*sel)[j];
    if (c < 0 || c >= n) return std::nullopt;
    if (a[1].tensor->id == -1) {
      is_zero[j] = j % 2 == 0;
    } else {
      const std::vector<bool>* zero = a[1].tensor->zero_pairs;  // [c, 0]: filter c, its one input channel
      const std::vector<bool>* constant = a[0].tensor->channels;
      if (!zero || zero->size() != static_cast<size_t>(n)) return std::nullopt;
      const auto at = static_cast<size_t>(c);
      is_zero[j] = (*zero)[at];
      if (!is_zero[j] && !(constant && at < constant->size() && (*constant)[at])) return std::nullopt;
    }
    (is_zero[j] ? out.zero : out.input).push_back((*sel)[j]);
  }
  if (out.zero.empty() || out.input.empty()) return std::nullopt;
  int64_t z = 0, k = static_cast<int64_t>(out.zero.size());
  for (bool b : is_zero) out.order.push_back(b ? z++ : k++);
  return out;
}

// One of the three lists of depthwise_split, as a let's value.
std::optional<Literal> depthwise_part(std::span<const ArgVal> a, std::vector<int64_t> DepthwiseSplit::*part) {
  auto s = depthwise_split(a);
  return s ? ints(std::move((*s).*part)) : std::nullopt;
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
    {"merged-heads", "TT",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       // heads of a packed projection w [H_in, 3 H] whose per-head tensor [.., .., d] has head dim d
       const ir::Shape &w = *shape(a[0]), &q = *shape(a[1]);
       if (w.rank() != 2 || q.rank() < 1 || !w[1].is_static() || !q[q.rank() - 1].is_static()) return std::nullopt;
       int64_t h3 = w[1].size(), d = q[q.rank() - 1].size();
       if (d == 0 || h3 % 3 != 0 || (h3 / 3) % d != 0 || h3 == 0) return std::nullopt;
       return Literal(h3 / 3 / d);
     },
     "H / d heads for a packed projection [H_in, 3 H] and a per-head tensor whose last dim is d"},
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
    {"live-channels", "T", [](std::span<const ArgVal> a) { return channel_indices(*a[0].tensor, false); },
     "the indices of the channels (axis 1) that are not constant, with the first constant ones where that makes their "
     "count a multiple of 16 in a tensor of 16k channels (in verification: the even ones)"},
    {"constant-channels", "T", [](std::span<const ArgVal> a) { return channel_indices(*a[0].tensor, true); },
     "the indices of the constant channels (axis 1) that live-channels leaves (in verification: the odd ones)"},
    {"depthwise-zero-part", "TTT",
     [](std::span<const ArgVal> a) { return depthwise_part(a, &DepthwiseSplit::zero); },
     "of a depthwise convolution's selected channels (x, w, the indices), those whose filter is all 0; declines unless "
     "every other one is a constant channel of x and both kinds occur (in verification: the even positions)"},
    {"depthwise-input-part", "TTT",
     [](std::span<const ArgVal> a) { return depthwise_part(a, &DepthwiseSplit::input); },
     "the selected channels depthwise-zero-part leaves: constant channels of x (in verification: the odd positions)"},
    {"depthwise-split-order", "TTT",
     [](std::span<const ArgVal> a) { return depthwise_part(a, &DepthwiseSplit::order); },
     "the indices into depthwise-zero-part's channels followed by depthwise-input-part's that give the selection's "
     "order"},
    {"scalar-value", "T",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       // a constant of one element, as a float attribute value (an epsilon read into an attribute)
       if (auto f = exact_f32_scalar(a[0])) return Literal(*f);
       return std::nullopt;
     },
     "the value of a constant of one element, as a float (declines unless it is exact in binary32; verification draws "
     "the variable as a constant)",
     true},
    {"reciprocal-value", "T",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       // 1 / a constant of one element, as a float attribute value, only where it is exact in binary32 (a
       // power of two: then x / c and x * (1 / c) are the same binary32 number, both the rounding of one real)
       auto exact = exact_f32_scalar(a[0]);
       if (!exact || *exact == 0) return std::nullopt;
       float c = *exact;
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
    {"live-filters", "T", live_filters,
     "the filters (rows along axis 0) of a convolution's weights that are not all 0, with the first zero ones where "
     "that makes their count a multiple of 16 in weights of 16k filters (in verification: the first ceil(n/2)); "
     "declines when none or all would be left out, and on a 1x1 selection"},
    {"scatter-weight", "TV",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       // entry [l_j, j] of the n x L selection is 1
       auto k = kept_filters(a);
       if (!k) return std::nullopt;
       const auto l = static_cast<int64_t>(k->list.size());
       std::vector<float> e(static_cast<size_t>(k->n * l), 0.0f);
       for (int64_t j = 0; j < l; ++j) e[static_cast<size_t>(k->list[static_cast<size_t>(j)] * l + j)] = 1.0f;
       return Literal(std::move(e));
     },
     "the n x L selection, flattened, that puts L kept filters (the second argument) back in their places among the "
     "n of the first argument's axis 0"},
    {"scatter-weight-shape", "TV",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       auto k = kept_filters(a);
       if (!k) return std::nullopt;
       std::vector<int64_t> dims{k->n, static_cast<int64_t>(k->list.size())};
       dims.resize(static_cast<size_t>(shape(a[0])->rank()), 1);
       return ints(std::move(dims));
     },
     "[n, L, 1, ...]: the 1x1 convolution weights of scatter-weight, for weights of the first argument's rank"},
    {"pruned-mask", "TV",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       auto k = kept_filters(a);
       if (!k) return std::nullopt;
       std::vector<float> m(static_cast<size_t>(k->n), 1.0f);
       for (int64_t i : k->list) m[static_cast<size_t>(i)] = 0.0f;
       return Literal(std::move(m));
     },
     "1 at the filters of the first argument's axis 0 that the kept ones (the second argument) leave out, 0 at the "
     "kept ones"},
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
    {"unit-spatial", "T",
     [](std::span<const ArgVal> a) -> std::optional<Literal> {
       // [N, C, 1, ..., 1] of a known N x C x D1 x ... shape list (an expand's target)
       auto s = as_ints(a[0]);
       if (!s || s->size() < 3) return std::nullopt;
       std::vector<int64_t> u(s->begin(), s->begin() + 2);
       u.resize(s->size(), 1);
       return ints(u);
     },
     "an N x C x D1 x ... shape list with every spatial dim 1"},
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

const LetDef* find_let(std::string_view name) {
  for (const LetDef& l : kLets)
    if (l.name == name) return &l;
  return nullptr;
}

std::span<const LetDef> lets() { return kLets; }

}  // namespace refinery::rules
