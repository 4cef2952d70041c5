// MaxPool (with its Indices output), AveragePool and the global pools.
// Windowed pooling is a direct loop over the ONNX definition: ATen's pooling
// pads symmetrically, limits padding to half the kernel and has no flattened
// N-d indices, so exact ONNX semantics (asymmetric pads, auto_pad, ceil_mode,
// dilations, count_include_pad, storage_order) are simplest written out.
#include "runtime/aten.h"

namespace refinery::runtime {
namespace {

using ir::Op;

struct Geometry {
  std::vector<int64_t> in, kernel, strides, dilations, begin, end, out;
};

std::expected<Geometry, std::string> geometry(const KernelCall& c, const at::Tensor& x) {
  auto n = static_cast<size_t>(x.dim() - 2);
  Geometry g;
  for (int64_t i = 2; i < x.dim(); ++i) g.in.push_back(x.size(i));
  g.kernel = c.attrs().get_ints("kernel_shape", {});
  ir::OpAttrs attrs = c.op_attrs();
  g.strides = attrs.get_ints("strides");
  g.dilations = attrs.get_ints("dilations");
  auto pads = attrs.get_ints("pads");
  std::string auto_pad = attrs.get_string("auto_pad");
  bool ceil_mode = attrs.get_int("ceil_mode") != 0;
  if (g.kernel.size() != n || g.strides.size() != n || g.dilations.size() != n || pads.size() != 2 * n)
    return std::unexpected("kernel_shape, strides, dilations or pads do not match the spatial rank");
  g.begin.resize(n);
  g.end.resize(n);
  g.out.resize(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t s = g.strides[i], effective = (g.kernel[i] - 1) * g.dilations[i] + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      g.out[i] = (g.in[i] + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (g.out[i] - 1) * s + effective - g.in[i]);
      g.begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.end[i] = total - g.begin[i];
      continue;
    }
    if (auto_pad != "VALID") g.begin[i] = pads[i], g.end[i] = pads[i + n];
    __int128 out = ir::window_count(g.in[i], g.begin[i], g.end[i], effective, s, ceil_mode);
    if (out <= 0) return std::unexpected("the kernel is larger than the padded input");
    g.out[i] = static_cast<int64_t>(out);  // the shape rule bounded it
  }
  return g;
}

// Visits every output position, then every window position, in row-major order.
template <class Fn>
void for_each_window(const Geometry& g, Fn&& fn) {
  size_t n = g.in.size();
  std::vector<int64_t> o(n, 0), k(n, 0), pos(n);
  int64_t total_out = 1, total_k = 1;
  for (size_t i = 0; i < n; ++i) total_out *= g.out[i], total_k *= g.kernel[i];
  for (int64_t oi = 0; oi < total_out; ++oi) {
    std::fill(k.begin(), k.end(), 0);
    for (int64_t ki = 0; ki < total_k; ++ki) {
      for (size_t i = 0; i < n; ++i) pos[i] = o[i] * g.strides[i] - g.begin[i] + k[i] * g.dilations[i];
      fn(oi, ki == 0, pos);
      for (size_t i = n; i-- > 0;) {
        if (++k[i] < g.kernel[i]) break;
        k[i] = 0;
      }
    }
    for (size_t i = n; i-- > 0;) {
      if (++o[i] < g.out[i]) break;
      o[i] = 0;
    }
  }
}

struct Plane {
  int64_t count = 1, size = 1, out_size = 1;
};

Plane plane_of(const at::Tensor& x, const Geometry& g) {
  Plane p;
  p.count = x.size(0) * x.size(1);
  for (int64_t d : g.in) p.size *= d;
  for (int64_t d : g.out) p.out_size *= d;
  return p;
}

std::vector<int64_t> out_sizes(const at::Tensor& x, const Geometry& g) {
  std::vector<int64_t> s{x.size(0), x.size(1)};
  s.insert(s.end(), g.out.begin(), g.out.end());
  return s;
}

KernelResult max_pool(const KernelCall& c) {
  if (c.in(0).dim() < 3) return kernel_error("max_pool input must be N x C x D1...");
  auto g = geometry(c, c.in(0));
  if (!g) return kernel_error(g.error());
  at::Tensor x = c.in(0).to(at::kDouble).contiguous();
  bool column_major = c.op_attrs().get_int("storage_order") != 0;
  size_t n = g->in.size();
  // Flattened index of a spatial position (row-major, or column-major for storage_order 1).
  std::vector<int64_t> index_stride(n), row_stride(n);
  int64_t row = 1, column = 1;
  for (size_t i = n; i-- > 0;) row_stride[i] = row, row *= g->in[i];
  for (size_t i = 0; i < n; ++i) index_stride[i] = column_major ? column : row_stride[i], column *= g->in[i];
  Plane p = plane_of(x, *g);
  at::Tensor y = at::empty(out_sizes(x, *g), x.options());
  at::Tensor idx = at::empty(out_sizes(x, *g), x.options().dtype(at::kLong));
  const double* src = x.data_ptr<double>();
  double* dst = y.data_ptr<double>();
  int64_t* ind = idx.data_ptr<int64_t>();
  for (int64_t plane = 0; plane < p.count; ++plane) {
    const double* in = src + plane * p.size;
    double* out = dst + plane * p.out_size;
    int64_t* out_idx = ind + plane * p.out_size;
    for_each_window(*g, [&](int64_t oi, bool first, const std::vector<int64_t>& pos) {
      if (first) out[oi] = -std::numeric_limits<double>::infinity(), out_idx[oi] = -1;
      int64_t offset = 0, flat = 0;
      for (size_t i = 0; i < n; ++i) {
        if (pos[i] < 0 || pos[i] >= g->in[i]) return;
        offset += pos[i] * row_stride[i];
        flat += pos[i] * index_stride[i];
      }
      if (out_idx[oi] < 0 || in[offset] > out[oi]) out[oi] = in[offset], out_idx[oi] = plane * p.size + flat;
    });
  }
  std::vector<at::Tensor> result{y.to(c.in(0).scalar_type())};
  if (c.num_outputs() > 1) result.push_back(idx);
  return result;
}

KernelResult average_pool(const KernelCall& c) {
  if (c.in(0).dim() < 3) return kernel_error("average_pool input must be N x C x D1...");
  auto g = geometry(c, c.in(0));
  if (!g) return kernel_error(g.error());
  at::Tensor x = c.in(0).to(at::kDouble).contiguous();
  bool include_pad = c.op_attrs().get_int("count_include_pad") != 0;
  size_t n = g->in.size();
  std::vector<int64_t> row_stride(n);
  int64_t row = 1;
  for (size_t i = n; i-- > 0;) row_stride[i] = row, row *= g->in[i];
  Plane p = plane_of(x, *g);
  at::Tensor y = at::empty(out_sizes(x, *g), x.options());
  std::vector<int64_t> counts(static_cast<size_t>(p.out_size));
  const double* src = x.data_ptr<double>();
  double* dst = y.data_ptr<double>();
  for (int64_t plane = 0; plane < p.count; ++plane) {
    const double* in = src + plane * p.size;
    double* out = dst + plane * p.out_size;
    for_each_window(*g, [&](int64_t oi, bool first, const std::vector<int64_t>& pos) {
      if (first) out[oi] = 0, counts[static_cast<size_t>(oi)] = 0;
      bool inside = true, in_padding = true;
      int64_t offset = 0;
      for (size_t i = 0; i < n; ++i) {
        if (pos[i] < 0 || pos[i] >= g->in[i]) inside = false;
        // count_include_pad counts explicit padding, not the ceil-mode overhang.
        if (pos[i] < -g->begin[i] || pos[i] >= g->in[i] + g->end[i]) in_padding = false;
        offset += pos[i] * row_stride[i];
      }
      if (inside) out[oi] += in[offset];
      if (inside || (include_pad && in_padding)) ++counts[static_cast<size_t>(oi)];
    });
    for (int64_t oi = 0; oi < p.out_size; ++oi)
      out[oi] = counts[static_cast<size_t>(oi)] > 0 ? out[oi] / static_cast<double>(counts[static_cast<size_t>(oi)])
                                                    : std::numeric_limits<double>::quiet_NaN();
  }
  return one(y.to(c.in(0).scalar_type()));
}

std::vector<int64_t> spatial_dims(const at::Tensor& x) {
  std::vector<int64_t> d;
  for (int64_t i = 2; i < x.dim(); ++i) d.push_back(i);
  return d;
}

KernelResult global_average_pool(const KernelCall& c) {
  at::Tensor x = upcast(c.in(0));
  return one(restore(at::mean(x, spatial_dims(x), true), c.in(0)));
}

KernelResult global_max_pool(const KernelCall& c) {
  at::Tensor x = upcast(c.in(0));
  return one(restore(at::amax(x, spatial_dims(x), true), c.in(0)));
}

}  // namespace

void register_pool_kernels(KernelTable& t) {
  t[static_cast<size_t>(Op::MaxPool)] = max_pool;
  t[static_cast<size_t>(Op::AveragePool)] = average_pool;
  t[static_cast<size_t>(Op::GlobalAveragePool)] = global_average_pool;
  t[static_cast<size_t>(Op::GlobalMaxPool)] = global_max_pool;
}

}  // namespace refinery::runtime
