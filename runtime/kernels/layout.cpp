// Layout and indexing: Reshape, Flatten, Transpose, Squeeze, Unsqueeze,
// Concat, Split, Slice, Gather, GatherElements, Expand, Tile, Pad,
// DepthToSpace, SpaceToDepth, Trilu.
#include "runtime/aten.h"

namespace refinery::runtime {
namespace {

using ir::Op;

KernelResult reshape(const KernelCall& c) {
  const at::Tensor& x = c.in(0);
  std::vector<int64_t> shape = int_values(c.in(1));
  bool allowzero = c.op_attrs().get_int("allowzero") != 0;
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 0 && !allowzero) {
      if (static_cast<int64_t>(i) >= x.dim())
        return kernel_error("a 0 in the shape copies a dimension the input lacks");
      shape[i] = x.size(static_cast<int64_t>(i));
    }
  return one(x.reshape(shape));
}

KernelResult flatten(const KernelCall& c) {
  const at::Tensor& x = c.in(0);
  int64_t axis = c.op_attrs().get_int("axis");
  if (axis < 0) axis += x.dim();
  if (axis < 0 || axis > x.dim()) return kernel_error("axis out of range");
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < x.dim(); ++i) (i < axis ? outer : inner) *= x.size(i);
  return one(x.reshape({outer, inner}));
}

KernelResult transpose(const KernelCall& c) {
  const at::Tensor& x = c.in(0);
  return one(x.permute(c.op_attrs().get_ints("perm")));
}

KernelResult squeeze(const KernelCall& c) {
  const at::Tensor& x = c.in(0);
  std::vector<bool> drop(static_cast<size_t>(x.dim()), false);
  if (c.has(1)) {
    for (int64_t a : int_values(c.in(1))) {
      auto n = normalize_axis(a, x.dim());
      if (!n) return kernel_error(fmt::format("axis {} out of range", a));
      if (x.size(*n) != 1) return kernel_error(fmt::format("cannot squeeze dimension {} of size {}", *n, x.size(*n)));
      drop[static_cast<size_t>(*n)] = true;
    }
  } else {
    for (int64_t i = 0; i < x.dim(); ++i) drop[static_cast<size_t>(i)] = x.size(i) == 1;
  }
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < x.dim(); ++i)
    if (!drop[static_cast<size_t>(i)]) shape.push_back(x.size(i));
  return one(x.reshape(shape));
}

KernelResult unsqueeze(const KernelCall& c) {
  const at::Tensor& x = c.in(0);
  std::vector<int64_t> axes = int_values(c.in(1));
  int64_t rank = x.dim() + static_cast<int64_t>(axes.size());
  std::vector<bool> added(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    auto n = normalize_axis(a, rank);
    if (!n || added[static_cast<size_t>(*n)]) return kernel_error(fmt::format("axis {} out of range or repeated", a));
    added[static_cast<size_t>(*n)] = true;
  }
  std::vector<int64_t> shape;
  for (int64_t i = 0, j = 0; i < rank; ++i) shape.push_back(added[static_cast<size_t>(i)] ? 1 : x.size(j++));
  return one(x.reshape(shape));
}

KernelResult concat(const KernelCall& c) {
  auto axis = normalize_axis(c.attrs().get_int("axis", 0), c.in(0).dim());  // required
  if (!axis) return kernel_error("axis out of range");
  std::vector<at::Tensor> parts(c.inputs.begin(), c.inputs.end());
  return one(at::cat(parts, *axis));
}

KernelResult split(const KernelCall& c) {
  const at::Tensor& x = c.in(0);
  auto axis = normalize_axis(c.op_attrs().get_int("axis"), x.dim());
  if (!axis) return kernel_error("axis out of range");
  std::vector<int64_t> sizes;
  auto n = static_cast<int64_t>(c.num_outputs());
  if (c.has(1)) {
    sizes = int_values(c.in(1));
  } else {  // equal parts; the last is smaller when the axis does not divide
    int64_t dim = x.size(*axis), chunk = (dim + n - 1) / n;
    for (int64_t i = 0; i < n; ++i) sizes.push_back(std::clamp<int64_t>(dim - i * chunk, 0, chunk));
  }
  if (static_cast<int64_t>(sizes.size()) != n)
    return kernel_error(fmt::format("{} split sizes for {} outputs", sizes.size(), n));
  auto parts = at::split_with_sizes(x, sizes, *axis);
  return std::vector<at::Tensor>(parts.begin(), parts.end());
}

KernelResult slice(const KernelCall& c) {
  at::Tensor x = c.in(0);
  std::vector<int64_t> starts = int_values(c.in(1)), ends = int_values(c.in(2));
  std::vector<int64_t> axes, steps;
  if (c.has(3))
    axes = int_values(c.in(3));
  else
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  steps = c.has(4) ? int_values(c.in(4)) : std::vector<int64_t>(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return kernel_error("starts, ends, axes and steps differ in length");
  for (size_t i = 0; i < starts.size(); ++i) {
    auto axis = normalize_axis(axes[i], x.dim());
    if (!axis) return kernel_error(fmt::format("axis {} out of range", axes[i]));
    int64_t dim = x.size(*axis), step = steps[i];
    if (step == 0) return kernel_error("step must not be 0");
    int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      x = x.slice(*axis, s, std::max(s, e), step);
    } else {  // ATen slices forward only: pick the indices s, s + step, ... > e
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      int64_t count = s > e ? (s - e - step - 1) / (-step) : 0;
      at::Tensor index = at::arange(count, at::kLong) * step + s;
      x = at::index_select(x, *axis, index);
    }
  }
  return one(x);
}

// Negative indices count from the end of the axis. An index outside
// [-dim, dim) is an error here, with the index, before ATen reads anything.
std::expected<at::Tensor, std::string> wrap_indices(const at::Tensor& indices, int64_t dim, int64_t axis) {
  at::Tensor i = indices.to(at::kLong);
  if (i.numel() > 0) {
    const int64_t lo = i.min().item<int64_t>(), hi = i.max().item<int64_t>();
    if (lo < -dim || hi >= dim)
      return std::unexpected(
          fmt::format("index {} is out of range for axis {} of size {}", lo < -dim ? lo : hi, axis, dim));
  }
  return at::where(i < 0, i + dim, i);
}

KernelResult gather(const KernelCall& c) {
  const at::Tensor& x = c.in(0);
  auto axis = normalize_axis(c.op_attrs().get_int("axis"), x.dim());
  if (!axis) return kernel_error("axis out of range");
  auto index = wrap_indices(c.in(1), x.size(*axis), *axis);
  if (!index) return kernel_error(index.error());
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().begin() + *axis);
  shape.insert(shape.end(), index->sizes().begin(), index->sizes().end());
  shape.insert(shape.end(), x.sizes().begin() + *axis + 1, x.sizes().end());
  return one(at::index_select(x, *axis, index->reshape({-1})).reshape(shape));
}

KernelResult gather_elements(const KernelCall& c) {
  const at::Tensor& x = c.in(0);
  auto axis = normalize_axis(c.op_attrs().get_int("axis"), x.dim());
  if (!axis) return kernel_error("axis out of range");
  auto index = wrap_indices(c.in(1), x.size(*axis), *axis);
  if (!index) return kernel_error(index.error());
  return one(at::gather(x, *axis, *index));
}

// Bidirectional (numpy) broadcast of the input against the shape.
KernelResult expand(const KernelCall& c) {
  const at::Tensor& x = c.in(0);
  std::vector<int64_t> target = int_values(c.in(1));
  auto rank = static_cast<int64_t>(std::max<size_t>(target.size(), static_cast<size_t>(x.dim())));
  std::vector<int64_t> in(static_cast<size_t>(rank), 1), out(static_cast<size_t>(rank), 1);
  for (int64_t i = 0; i < x.dim(); ++i) in[static_cast<size_t>(rank - x.dim() + i)] = x.size(i);
  for (size_t i = 0; i < target.size(); ++i) out[static_cast<size_t>(rank) - target.size() + i] = target[i];
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != out[i] && in[i] != 1 && out[i] != 1)
      return kernel_error(fmt::format("cannot expand dimension {} of size {} to {}", i, in[i], out[i]));
    out[i] = in[i] == 1 ? out[i] : in[i];
  }
  return one(x.reshape(in).expand(out));
}

KernelResult tile(const KernelCall& c) { return one(c.in(0).repeat(int_values(c.in(1)))); }

// Index map for edge / reflect padding of one axis.
at::Tensor pad_index(int64_t n, int64_t before, int64_t after, bool reflect) {
  std::vector<int64_t> idx;
  for (int64_t j = -before; j < n + after; ++j) {
    int64_t p = j;
    if (!reflect || n == 1) {
      p = std::clamp<int64_t>(p, 0, n - 1);
    } else {
      int64_t period = 2 * (n - 1);
      p = ((p % period) + period) % period;
      if (p >= n) p = period - p;
    }
    idx.push_back(p);
  }
  return at::tensor(idx, at::kLong);
}

KernelResult pad(const KernelCall& c) {
  at::Tensor x = c.in(0);
  std::vector<int64_t> pads = int_values(c.in(1));
  int64_t r = x.dim();
  if (static_cast<int64_t>(pads.size()) != 2 * r)
    return kernel_error(fmt::format("pads has {} entries for rank {}", pads.size(), r));
  std::string mode = c.op_attrs().get_string("mode");
  if (mode == "constant") {
    std::vector<int64_t> list;
    for (int64_t i = r; i-- > 0;) {
      list.push_back(pads[static_cast<size_t>(i)]);
      list.push_back(pads[static_cast<size_t>(i + r)]);
    }
    at::Scalar value = 0;
    if (c.has(2) && c.in(2).numel() > 0) value = upcast(c.in(2)).reshape({-1})[0].item();
    if (is_low_precision(x)) return one(restore(at::constant_pad_nd(upcast(x), list, value), x));
    return one(at::constant_pad_nd(x, list, value));
  }
  if (mode != "edge" && mode != "reflect") return kernel_error(fmt::format("unsupported pad mode '{}'", mode));
  for (int64_t i = 0; i < r; ++i) {
    int64_t before = pads[static_cast<size_t>(i)], after = pads[static_cast<size_t>(i + r)];
    if (before < 0) x = x.narrow(i, -before, x.size(i) + before), before = 0;  // negative pads crop
    if (after < 0) x = x.narrow(i, 0, x.size(i) + after), after = 0;
    if (before == 0 && after == 0) continue;
    if (x.size(i) == 0) return kernel_error(fmt::format("cannot {}-pad an empty axis", mode));
    if (mode == "reflect" && (before >= x.size(i) || after >= x.size(i)) && x.size(i) > 1)
      return kernel_error("reflect padding must be smaller than the axis");
    x = at::index_select(x, i, pad_index(x.size(i), before, after, mode == "reflect"));
  }
  return one(x);
}

KernelResult depth_to_space(const KernelCall& c) {
  const at::Tensor& x = c.in(0);
  if (x.dim() != 4) return kernel_error("input must be 4-d");
  int64_t b = c.attrs().get_int("blocksize", 0);
  int64_t n = x.size(0), ch = x.size(1), h = x.size(2), w = x.size(3);
  if (b <= 0 || ch % (b * b) != 0) return kernel_error("channels are not divisible by blocksize^2");
  int64_t oc = ch / (b * b);
  at::Tensor y = c.op_attrs().get_string("mode") == "CRD" ? x.reshape({n, oc, b, b, h, w}).permute({0, 1, 4, 2, 5, 3})
                                                          : x.reshape({n, b, b, oc, h, w}).permute({0, 3, 4, 1, 5, 2});
  return one(y.reshape({n, oc, h * b, w * b}));
}

KernelResult space_to_depth(const KernelCall& c) {
  const at::Tensor& x = c.in(0);
  if (x.dim() != 4) return kernel_error("input must be 4-d");
  int64_t b = c.attrs().get_int("blocksize", 0);
  int64_t n = x.size(0), ch = x.size(1), h = x.size(2), w = x.size(3);
  if (b <= 0 || h % b != 0 || w % b != 0) return kernel_error("spatial size is not divisible by blocksize");
  at::Tensor y = x.reshape({n, ch, h / b, b, w / b, b}).permute({0, 3, 5, 1, 2, 4});
  return one(y.reshape({n, ch * b * b, h / b, w / b}));
}

KernelResult trilu(const KernelCall& c) {
  int64_t k = c.has(1) ? int_values(c.in(1)).at(0) : 0;
  bool upper = c.op_attrs().get_int("upper") != 0;
  return one(upper ? at::triu(c.in(0), k) : at::tril(c.in(0), k));
}

}  // namespace

void register_layout_kernels(KernelTable& t) {
  auto set = [&](Op op, Kernel k) { t[static_cast<size_t>(op)] = k; };
  set(Op::Reshape, reshape);
  set(Op::Flatten, flatten);
  set(Op::Transpose, transpose);
  set(Op::Squeeze, squeeze);
  set(Op::Unsqueeze, unsqueeze);
  set(Op::Concat, concat);
  set(Op::Split, split);
  set(Op::Slice, slice);
  set(Op::Gather, gather);
  set(Op::GatherElements, gather_elements);
  set(Op::Expand, expand);
  set(Op::Tile, tile);
  set(Op::Pad, pad);
  set(Op::DepthToSpace, depth_to_space);
  set(Op::SpaceToDepth, space_to_depth);
  set(Op::Trilu, trilu);
}

}  // namespace refinery::runtime
