// Layout and indexing: reshape, flatten, transpose, squeeze/unsqueeze,
// concat/split, slice, gather, expand, tile, pad, depth/space, trilu.
#include <algorithm>

#include "ir/ops/registry.h"

namespace refinery::ir::ops {
namespace {

// An error when the product overflows int64: sizes and attributes (repeats,
// blocksize) are the model's word.
std::expected<Dim, InferError> mul_dims(const Dim& a, const Dim& b) {
  if (!a.is_static() || !b.is_static()) return Dim::unknown();
  return size_dim(static_cast<__int128>(a.size()) * b.size(), fmt::format("{} x {}", a.size(), b.size()));
}

// The product of dims [first, last): a single dim stays as it is (symbolic too).
std::expected<Dim, InferError> product(const Shape& x, int64_t first, int64_t last) {
  if (last - first == 1) return x[first];
  Dim p(1);
  for (int64_t i = first; i < last; ++i) {
    auto next = mul_dims(p, x[i]);
    if (!next) return next;
    p = *next;
  }
  return p;
}

Result reshape(InferContext& c) {
  const Shape& x = c.shape(0);
  if (c.shape(1).rank() != 1) return error(fmt::format("shape input must be 1-d, got {}", c.shape(1).str()));
  auto target = c.contents(1);
  if (!target) {
    // A shape input of unknown length (computed at run time) leaves the rank unknown.
    if (!c.shape(1)[0].is_static()) {
      c.outputs[0] = TensorType{c.in(0).dtype, Shape::unranked()};
      return {};
    }
    c.outputs[0] = TensorType{c.in(0).dtype, Shape(std::vector<Dim>(static_cast<size_t>(c.shape(1)[0].size())))};
    return {};
  }
  bool allowzero = c.op_attrs().get_int("allowzero") != 0;
  // A -1 and a size computed at run time (an unknown entry) are both read
  // as a dim to infer. One such entry is the one to infer (a run-time size
  // there must equal the inferred one); with several (x.view(b, s, 4, 16),
  // b and s read from a shape) none can be told apart: each stays unknown.
  auto open = [](const Dim& d) { return d.is_unknown() || d == Dim::integer(-1); };
  auto unknown_entries = std::count_if(target->begin(), target->end(), open);
  std::vector<Dim> out;
  int infer_at = -1;
  for (size_t i = 0; i < target->size(); ++i) {
    const Dim& d = (*target)[i];
    if (open(d)) {
      out.push_back(Dim::unknown());
      if (unknown_entries == 1) infer_at = static_cast<int>(i);
    } else if (d.is_static() && d.size() == 0 && !allowzero) {
      if (static_cast<int64_t>(i) >= x.rank()) return error("a 0 in the shape copies a dimension the input lacks");
      out.push_back(x[static_cast<int64_t>(i)]);
    } else if (d.is_negative()) {
      return error(fmt::format("invalid dimension {}", d.value()));
    } else {
      out.push_back(d);
    }
  }
  // The target's sizes, checked before they are multiplied below.
  if (auto bad = size_error(Shape(out))) {
    c.limitation = bad->limit;
    return error(fmt::format("shape {}", bad->message));
  }
  auto total = x.num_elements();
  if (infer_at >= 0) {
    int64_t known = 1;
    bool all_static = true;
    for (size_t i = 0; i < out.size(); ++i)
      if (static_cast<int>(i) != infer_at) {
        if (out[i].is_static())
          known *= out[i].size();
        else
          all_static = false;
      }
    if (total && all_static) {
      if (known == 0 || *total % known != 0)
        return error(fmt::format("cannot reshape {} to {} elements per group", x.str(), known));
      out[static_cast<size_t>(infer_at)] = Dim(*total / known);
    } else {
      // Symbolic: cancel the symbols both sides share. [N, 64, 256] to
      // [-1, 64, 4, 64] gives N; [N, a, b] to [N, -1] gives a*b.
      std::vector<Dim> x_syms, out_syms;
      int64_t px = 1, po = 1;
      bool ok = true;
      for (const Dim& d : x.dims()) {
        if (d.is_static())
          px *= d.size();
        else if (d.is_symbol())
          x_syms.push_back(d);
        else
          ok = false;
      }
      for (size_t i = 0; i < out.size(); ++i) {
        if (static_cast<int>(i) == infer_at) continue;
        if (out[i].is_static())
          po *= out[i].size();
        else if (out[i].is_symbol())
          out_syms.push_back(out[i]);
        else
          ok = false;
      }
      for (const Dim& d : out_syms) {
        auto it = std::find(x_syms.begin(), x_syms.end(), d);
        if (it == x_syms.end()) {
          ok = false;
          break;
        }
        x_syms.erase(it);
      }
      if (ok && po != 0 && px % po == 0) {
        if (x_syms.empty())
          out[static_cast<size_t>(infer_at)] = Dim(px / po);
        else if (x_syms.size() == 1 && px == po)
          out[static_cast<size_t>(infer_at)] = x_syms[0];
      }
    }
  } else if (total) {
    Shape s(out);
    if (auto n = s.num_elements(); n && *n != *total)
      return error(fmt::format("cannot reshape {} ({} elements) to {} ({} elements)", x.str(), *total, s.str(), *n));
  }
  // Known contents keep their order (torch writes a shape as Reshape(Concat(...), [-1])).
  if (out.size() <= 1 && x.rank() <= 1)
    if (auto v = c.contents(0)) c.known[0] = std::move(v);
  c.outputs[0] = TensorType{c.in(0).dtype, Shape(std::move(out))};
  return {};
}

Result flatten(InferContext& c) {
  const Shape& x = c.shape(0);
  int64_t axis = c.op_attrs().get_int("axis");
  if (axis < 0) axis += x.rank();
  if (axis < 0 || axis > x.rank()) return error("axis out of range");
  auto outer = product(x, 0, axis), inner = product(x, axis, x.rank());
  if (!outer) return std::unexpected(outer.error());
  if (!inner) return std::unexpected(inner.error());
  c.outputs[0] = TensorType{c.in(0).dtype, Shape({*outer, *inner})};
  return {};
}

Result transpose(InferContext& c) {
  const Shape& x = c.shape(0);
  std::vector<int64_t> p = c.op_attrs().get_ints("perm");
  if (static_cast<int64_t>(p.size()) != x.rank())
    return error(fmt::format("perm has {} entries for rank {}", p.size(), x.rank()));
  std::vector<bool> seen(p.size(), false);
  std::vector<Dim> out;
  for (int64_t i : p) {
    if (i < 0 || i >= x.rank() || seen[static_cast<size_t>(i)]) return error("perm is not a permutation");
    seen[static_cast<size_t>(i)] = true;
    out.push_back(x[i]);
  }
  c.outputs[0] = TensorType{c.in(0).dtype, Shape(std::move(out))};
  return {};
}

Result squeeze(InferContext& c) {
  const Shape& x = c.shape(0);
  std::vector<bool> drop(static_cast<size_t>(x.rank()), false);
  if (c.has_input(1)) {
    auto axes = c.ints(1);
    if (!axes) {  // axes computed at run time: the rank is known from their count
      const Shape& a = c.shape(1);
      if (a.rank() != 1 || !a[0].is_static() || a[0].size() > x.rank())
        return error("axes must be constant or of known length");
      c.outputs[0] = TensorType{c.in(0).dtype, Shape(std::vector<Dim>(static_cast<size_t>(x.rank() - a[0].size())))};
      return {};
    }
    for (int64_t a : *axes) {
      auto n = normalize_axis(a, x.rank());
      if (!n) return error(fmt::format("axis {} out of range", a));
      if (x[*n].is_static() && x[*n].size() != 1)
        return error(fmt::format("cannot squeeze dimension {} of size {}", *n, x[*n].size()));
      drop[static_cast<size_t>(*n)] = true;
    }
  } else {
    for (int64_t i = 0; i < x.rank(); ++i) {
      if (!x[i].is_static()) return error("squeeze without axes needs a static shape");
      drop[static_cast<size_t>(i)] = x[i].size() == 1;
    }
  }
  std::vector<Dim> out;
  for (int64_t i = 0; i < x.rank(); ++i)
    if (!drop[static_cast<size_t>(i)]) out.push_back(x[i]);
  c.outputs[0] = TensorType{c.in(0).dtype, Shape(std::move(out))};
  if (auto v = c.contents(0); v && out.size() <= 1) c.known[0] = v;
  return {};
}

Result unsqueeze(InferContext& c) {
  const Shape& x = c.shape(0);
  auto axes = c.ints(1);
  if (!axes) {  // axes computed at run time: the rank is known from their count
    const Shape& a = c.shape(1);
    if (a.rank() != 1 || !a[0].is_static()) return error("axes must be constant or of known length");
    c.outputs[0] = TensorType{c.in(0).dtype, Shape(std::vector<Dim>(static_cast<size_t>(x.rank() + a[0].size())))};
    return {};
  }
  int64_t rank = x.rank() + static_cast<int64_t>(axes->size());
  std::vector<bool> added(static_cast<size_t>(rank), false);
  for (int64_t a : *axes) {
    auto n = normalize_axis(a, rank);
    if (!n || added[static_cast<size_t>(*n)]) return error(fmt::format("axis {} out of range or repeated", a));
    added[static_cast<size_t>(*n)] = true;
  }
  std::vector<Dim> out;
  int64_t j = 0;
  for (int64_t i = 0; i < rank; ++i) out.push_back(added[static_cast<size_t>(i)] ? Dim(1) : x[j++]);
  c.outputs[0] = TensorType{c.in(0).dtype, Shape(out)};
  if (auto v = c.contents(0); v && out.size() <= 1) c.known[0] = v;
  return {};
}

Result concat(InferContext& c) {
  if (auto ok = same_dtype(c, 0, 1, c.inputs.size()); !ok) return ok;
  const Shape& x = c.shape(0);
  auto axis = normalize_axis(c.op_attrs().get_int("axis"), x.rank());
  if (!axis) return error("axis out of range");
  std::vector<Dim> out = x.dims();
  for (size_t i = 1; i < c.inputs.size(); ++i) {
    const Shape& s = c.shape(i);
    if (s.rank() != x.rank()) return error(fmt::format("input {} has rank {}, expected {}", i, s.rank(), x.rank()));
    for (int64_t d = 0; d < x.rank(); ++d) {
      if (d == *axis) continue;
      if (s[d].is_static() && x[d].is_static() && s[d].size() != x[d].size())
        return error(
            fmt::format("input {} has shape {}, which does not fit {} outside axis {}", i, s.str(), x.str(), *axis));
    }
  }
  int64_t total = 0;
  bool known_len = true;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const Dim& d = c.shape(i)[*axis];
    if (d.is_static())
      total += d.size();
    else
      known_len = false;
  }
  out[static_cast<size_t>(*axis)] = known_len ? Dim(total) : (c.inputs.size() == 1 ? x[*axis] : Dim::unknown());
  c.outputs[0] = TensorType{c.in(0).dtype, Shape(out)};
  if (x.rank() == 1) {  // propagate known contents; a part of known length but unknown contents (b * 4 of a
                        // symbolic b) as that many unknown entries
    std::vector<Dim> v;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      auto part = c.contents(i);
      if (!part && !c.shape(i)[0].is_static()) return {};
      if (!part) part = std::vector<Dim>(static_cast<size_t>(c.shape(i)[0].size()), Dim::unknown());
      v.insert(v.end(), part->begin(), part->end());
    }
    c.known[0] = std::move(v);
  }
  return {};
}

Result split(InferContext& c) {
  const Shape& x = c.shape(0);
  auto axis = normalize_axis(c.op_attrs().get_int("axis"), x.rank());
  if (!axis) return error("axis out of range");
  size_t n = static_cast<size_t>(c.num_outputs);
  std::vector<int64_t> sizes;
  if (c.has_input(1)) {
    auto s = c.ints(1);
    if (s) sizes = *s;  // sizes computed at run time leave the split axis unknown
    if (s && sizes.size() != n) return error(fmt::format("{} split sizes for {} outputs", sizes.size(), n));
    if (s && x[*axis].is_static()) {
      int64_t sum = 0;
      for (int64_t v : sizes) sum += v;
      if (sum != x[*axis].size()) return error(fmt::format("split sizes sum to {}, axis has {}", sum, x[*axis].size()));
    }
  } else if (x[*axis].is_static()) {
    if (x[*axis].size() % static_cast<int64_t>(n) != 0) return error("axis does not split evenly");
    sizes.assign(n, x[*axis].size() / static_cast<int64_t>(n));
  }
  for (size_t i = 0; i < n; ++i) {
    Shape s = x;
    s[*axis] = sizes.empty() ? Dim::unknown() : Dim(sizes[i]);
    c.outputs[i] = TensorType{c.in(0).dtype, s};
  }
  return {};
}

// The length of one sliced axis of `dim` from `start` to `end` by `step`,
// where it can be said exactly; unknown otherwise.
Dim slice_length(const Dim& dim, const Dim& start, const Dim& end, int64_t step) {
  if (dim.is_static() && start.is_integer() && end.is_integer()) {
    int64_t n = dim.size(), s = start.value(), e = end.value();
    if (s < 0) s += n;
    if (e < 0) e += n;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
      return Dim(e > s ? (e - s + step - 1) / step : 0);
    }
    s = std::clamp<int64_t>(s, 0, n - 1);
    e = std::clamp<int64_t>(e, -1, n - 1);
    return Dim(s > e ? (s - e - step - 1) / (-step) : 0);
  }
  if (step != 1 || start != Dim(0)) return Dim::unknown();
  if (end == Dim(INT64_MAX) || end == dim) return dim;  // x[:] and x[:s] of an axis of s
  if (dim == Dim(0)) return Dim(0);
  // x[:s] of a static axis of n: min(s, n) (of min(s, m): min(s, min(m, n))).
  if (dim.is_static() && end.is_symbol()) return Dim::min_of(end.name(), dim.size());
  if (dim.is_static() && end.is_min()) return Dim::min_of(end.name(), std::min(end.cap(), dim.size()));
  return Dim::unknown();
}

// A 1-d integer input's entries as dims (negative integers as they are):
// propagated contents, or a constant's values of any length.
std::optional<std::vector<Dim>> entries(const InferContext& c, size_t i) {
  if (auto v = c.contents(i)) return v;
  auto v = c.ints(i);
  if (!v) return std::nullopt;
  std::vector<Dim> out;
  for (int64_t e : *v) out.push_back(Dim::integer(e));
  return out;
}

Result slice(InferContext& c) {
  const Shape& x = c.shape(0);
  auto starts = entries(c, 1), ends = entries(c, 2);
  std::optional<std::vector<int64_t>> axes, steps;
  if (c.has_input(3)) axes = c.ints(3);
  if (c.has_input(4)) steps = c.ints(4);
  Shape out = x;
  if (c.has_input(3) && !axes) {  // any axis may be sliced
    for (int64_t i = 0; i < x.rank(); ++i) out[i] = Dim::unknown();
    c.outputs[0] = TensorType{c.in(0).dtype, out};
    return {};
  }
  // The number of axes sliced: the starts' length, known from their shape
  // when their values are not.
  const Shape& starts_shape = c.shape(1);
  std::optional<size_t> count;
  if (starts) count = starts->size();
  else if (starts_shape.rank() == 1 && starts_shape[0].is_static()) count = static_cast<size_t>(starts_shape[0].size());
  else if (axes) count = axes->size();
  if (!count) {
    for (int64_t i = 0; i < x.rank(); ++i) out[i] = Dim::unknown();
    c.outputs[0] = TensorType{c.in(0).dtype, out};
    return {};
  }
  if ((starts && ends && starts->size() != ends->size()) || (!starts && ends && ends->size() != *count))
    return error("starts and ends differ in length");
  if (!axes) {
    axes.emplace();
    for (size_t i = 0; i < *count; ++i) axes->push_back(static_cast<int64_t>(i));
  }
  if (!c.has_input(4)) steps = std::vector<int64_t>(*count, 1);  // else unknown steps: every sliced axis unknown
  if (axes->size() != *count || (steps && steps->size() != *count))
    return error("axes or steps differ in length from starts");
  for (size_t i = 0; i < *count; ++i) {
    auto a = normalize_axis((*axes)[i], x.rank());
    if (!a) return error(fmt::format("axis {} out of range", (*axes)[i]));
    if (!steps || !starts || !ends) {
      out[*a] = Dim::unknown();
      continue;
    }
    int64_t step = (*steps)[i];
    if (step == 0) return error("step must not be 0");
    out[*a] = slice_length(x[*a], (*starts)[i], (*ends)[i], step);
  }
  c.outputs[0] = TensorType{c.in(0).dtype, out};
  if (x.rank() == 1 && axes->size() == 1 && steps && (*steps)[0] == 1 && out[0].is_static() && starts &&
      (*starts)[0].is_integer())
    if (auto v = c.contents(0)) {
      int64_t dim = static_cast<int64_t>(v->size());
      int64_t s = (*starts)[0].value() < 0 ? (*starts)[0].value() + dim : (*starts)[0].value();
      s = std::clamp<int64_t>(s, 0, dim);
      c.known[0] = std::vector<Dim>(v->begin() + s, v->begin() + s + out[0].size());
    }
  return {};
}

Result gather(InferContext& c) {
  const Shape& x = c.shape(0);
  const Shape& idx = c.shape(1);
  if (c.in(1).dtype != DType::i64 && c.in(1).dtype != DType::i32) return error("indices must be i32 or i64");
  auto axis = normalize_axis(c.op_attrs().get_int("axis"), x.rank());
  if (!axis) return error("axis out of range");
  std::vector<Dim> out(x.dims().begin(), x.dims().begin() + *axis);
  out.insert(out.end(), idx.dims().begin(), idx.dims().end());
  out.insert(out.end(), x.dims().begin() + *axis + 1, x.dims().end());
  c.outputs[0] = TensorType{c.in(0).dtype, Shape(out)};
  if (x.rank() == 1 && idx.rank() <= 1)
    if (auto v = c.contents(0); v)
      if (auto i = c.ints(1)) {
        std::vector<Dim> picked;
        for (int64_t k : *i) {
          int64_t j = k < 0 ? k + static_cast<int64_t>(v->size()) : k;
          if (j < 0 || j >= static_cast<int64_t>(v->size())) return error(fmt::format("index {} out of range", k));
          picked.push_back((*v)[static_cast<size_t>(j)]);
        }
        c.known[0] = std::move(picked);
      }
  return {};
}

Result gather_elements(InferContext& c) {
  if (c.shape(0).rank() != c.shape(1).rank()) return error("data and indices differ in rank");
  c.outputs[0] = TensorType{c.in(0).dtype, c.shape(1)};
  return {};
}

Result expand(InferContext& c) {
  if (c.shape(1).rank() != 1) return error("shape input must be 1-d");
  auto target = c.dims_value(1);
  if (!target) {
    int64_t n = c.shape(1)[0].is_static() ? c.shape(1)[0].size() : 0;
    c.outputs[0] =
        TensorType{c.in(0).dtype, Shape(std::vector<Dim>(static_cast<size_t>(std::max(n, c.shape(0).rank()))))};
    return {};
  }
  auto s = broadcast(c.shape(0), Shape(*target));
  if (!s) return std::unexpected(s.error());
  c.outputs[0] = TensorType{c.in(0).dtype, *s};
  return {};
}

Result tile(InferContext& c) {
  const Shape& x = c.shape(0);
  auto reps = c.ints(1);
  Shape out = x;
  if (!reps) {
    for (int64_t i = 0; i < x.rank(); ++i) out[i] = Dim::unknown();
  } else {
    if (static_cast<int64_t>(reps->size()) != x.rank()) return error("repeats length differs from rank");
    for (int64_t i = 0; i < x.rank(); ++i) {
      int64_t r = (*reps)[static_cast<size_t>(i)];
      if (r < 0) return error(fmt::format("repeats has a negative entry {} (axis {})", r, i));
      if (!x[i].is_static()) {
        out[i] = Dim::unknown();
        continue;
      }
      auto d = size_dim(static_cast<__int128>(x[i].size()) * r, fmt::format("axis {} tiled {} times", i, r));
      if (!d) return std::unexpected(d.error());
      out[i] = *d;
    }
  }
  c.outputs[0] = TensorType{c.in(0).dtype, out};
  return {};
}

Result pad(InferContext& c) {
  const Shape& x = c.shape(0);
  auto pads = c.ints(1);
  Shape out = x;
  if (!pads) {
    for (int64_t i = 0; i < x.rank(); ++i) out[i] = Dim::unknown();
  } else {
    if (static_cast<int64_t>(pads->size()) != 2 * x.rank())
      return error(fmt::format("pads has {} entries for rank {}", pads->size(), x.rank()));
    for (int64_t i = 0; i < x.rank(); ++i)
      if (x[i].is_static()) {
        int64_t begin = (*pads)[static_cast<size_t>(i)], end = (*pads)[static_cast<size_t>(i + x.rank())];
        auto d = size_dim(static_cast<__int128>(x[i].size()) + begin + end,
                          fmt::format("axis {} ({}) padded by {} and {}", i, x[i].size(), begin, end));
        if (!d) return std::unexpected(d.error());
        out[i] = *d;
      }
  }
  c.outputs[0] = TensorType{c.in(0).dtype, out};
  return {};
}

Result depth_to_space(InferContext& c) {
  const Shape& x = c.shape(0);
  if (x.rank() != 4) return error("input must be 4-d");
  int64_t b = c.attrs->get_int("blocksize", 0);
  if (b <= 0) return error("blocksize must be positive");
  if (b > (int64_t{1} << 20)) return error(fmt::format("blocksize {} is past 2^20", b));  // b * b stays a size
  Shape out = x;
  if (x[1].is_static()) {
    if (x[1].size() % (b * b) != 0) return error("channels are not divisible by blocksize^2");
    out[1] = Dim(x[1].size() / (b * b));
  }
  for (int i : {2, 3}) {
    if (!x[i].is_static()) {
      out[i] = Dim::unknown();
      continue;
    }
    auto d = size_dim(static_cast<__int128>(x[i].size()) * b, fmt::format("axis {} times blocksize {}", i, b));
    if (!d) return std::unexpected(d.error());
    out[i] = *d;
  }
  c.outputs[0] = TensorType{c.in(0).dtype, out};
  return {};
}

Result space_to_depth(InferContext& c) {
  const Shape& x = c.shape(0);
  if (x.rank() != 4) return error("input must be 4-d");
  int64_t b = c.attrs->get_int("blocksize", 0);
  if (b <= 0) return error("blocksize must be positive");
  if (b > (int64_t{1} << 20)) return error(fmt::format("blocksize {} is past 2^20", b));  // b * b stays a size
  Shape out = x;
  out[1] = Dim::unknown();
  if (x[1].is_static()) {
    auto d =
        size_dim(static_cast<__int128>(x[1].size()) * b * b, fmt::format("channels times blocksize {} squared", b));
    if (!d) return std::unexpected(d.error());
    out[1] = *d;
  }
  for (int i : {2, 3}) {
    if (!x[i].is_static()) {
      out[i] = Dim::unknown();
      continue;
    }
    if (x[i].size() % b != 0) return error("spatial size is not divisible by blocksize");
    out[i] = Dim(x[i].size() / b);
  }
  c.outputs[0] = TensorType{c.in(0).dtype, out};
  return {};
}

Result trilu(InferContext& c) {
  if (c.shape(0).rank() < 2) return error("input must have rank 2 or more");
  return same_as_first(c);
}

}  // namespace

void register_layout(Table& t) {
  define(t, OpInfo{.op = Op::Reshape,
                   .min_inputs = 2,
                   .max_inputs = 2,
                   .attrs = {int_attr("allowzero", 0)},
                   .int_inputs = {1},
                   .shape_rule = reshape});
  define(
      t,
      OpInfo{
          .op = Op::Flatten, .min_inputs = 1, .max_inputs = 1, .attrs = {int_attr("axis", 1)}, .shape_rule = flatten});
  define(t, OpInfo{.op = Op::Transpose,
                   .min_inputs = 1,
                   .max_inputs = 1,
                   .attrs = {{"perm", AttrKind::Ints, AttrUse::Optional, {.rule = AttrDefault::Rule::ReversedAxes}}},
                   .shape_rule = transpose});
  define(t, OpInfo{.op = Op::Squeeze, .min_inputs = 1, .max_inputs = 2, .int_inputs = {1}, .shape_rule = squeeze});
  define(t, OpInfo{.op = Op::Unsqueeze, .min_inputs = 2, .max_inputs = 2, .int_inputs = {1}, .shape_rule = unsqueeze});
  define(t, OpInfo{.op = Op::Concat,
                   .min_inputs = 1,
                   .max_inputs = -1,
                   .attrs = {{"axis", AttrKind::Int, AttrUse::Required}},
                   .shape_rule = concat});
  define(t, OpInfo{.op = Op::Split,
                   .min_inputs = 1,
                   .max_inputs = 2,
                   .min_outputs = 1,
                   .max_outputs = -1,
                   .attrs = {int_attr("axis", 0)},
                   .int_inputs = {1},
                   .shape_rule = split});
  define(t, OpInfo{.op = Op::Slice, .min_inputs = 3, .max_inputs = 5, .int_inputs = {1, 2, 3, 4}, .shape_rule = slice});
  define(t, OpInfo{.op = Op::Gather,
                   .min_inputs = 2,
                   .max_inputs = 2,
                   .attrs = {int_attr("axis", 0)},
                   .int_inputs = {1},
                   .shape_rule = gather});
  define(t, OpInfo{.op = Op::GatherElements,
                   .min_inputs = 2,
                   .max_inputs = 2,
                   .attrs = {int_attr("axis", 0)},
                   .shape_rule = gather_elements});
  define(t, OpInfo{.op = Op::Expand, .min_inputs = 2, .max_inputs = 2, .int_inputs = {1}, .shape_rule = expand});
  define(t, OpInfo{.op = Op::Tile, .min_inputs = 2, .max_inputs = 2, .int_inputs = {1}, .shape_rule = tile});
  define(t, OpInfo{.op = Op::Pad,
                   .min_inputs = 2,
                   .max_inputs = 3,
                   .attrs = {string_attr("mode", "constant")},
                   .int_inputs = {1},
                   .shape_rule = pad});
  define(t, OpInfo{.op = Op::DepthToSpace,
                   .min_inputs = 1,
                   .max_inputs = 1,
                   .attrs = {{"blocksize", AttrKind::Int, AttrUse::Required}, string_attr("mode", "DCR")},
                   .shape_rule = depth_to_space});
  define(t, OpInfo{.op = Op::SpaceToDepth,
                   .min_inputs = 1,
                   .max_inputs = 1,
                   .attrs = {{"blocksize", AttrKind::Int, AttrUse::Required}},
                   .shape_rule = space_to_depth});
  define(
      t,
      OpInfo{.op = Op::Trilu, .min_inputs = 1, .max_inputs = 2, .attrs = {int_attr("upper", 1)}, .shape_rule = trilu});
}

}  // namespace refinery::ir::ops
