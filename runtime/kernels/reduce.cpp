// Reductions (opset 13-17: ReduceSum takes axes as input 1, the others as an
// attribute), ArgMax/ArgMin, CumSum and TopK.
#include <algorithm>
#include <limits>

#include "runtime/aten.h"

namespace refinery::runtime {
namespace {

using ir::Op;

bool integral(const at::Tensor& t) { return at::isIntegralType(t.scalar_type(), true); }

// The axes to reduce, or nullopt when the op is the identity
// (noop_with_empty_axes with no axes).
std::expected<std::optional<std::vector<int64_t>>, std::string> reduce_axes(const KernelCall& c) {
  std::vector<int64_t> axes;
  if (c.has(1))
    axes = int_values(c.in(1));
  else
    axes = c.attrs().get_ints("axes", {});
  int64_t rank = c.in(0).dim();
  if (axes.empty()) {
    if (c.op_attrs().get_int("noop_with_empty_axes") != 0) return std::nullopt;
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
    return axes;
  }
  for (int64_t& a : axes) {
    auto n = normalize_axis(a, rank);
    if (!n) return std::unexpected(fmt::format("axis {} out of range for rank {}", a, rank));
    a = *n;
  }
  return axes;
}

using Reducer = at::Tensor (*)(const at::Tensor& x, at::IntArrayRef dims, bool keep);

at::Tensor sum(const at::Tensor& x, at::IntArrayRef d, bool k) { return at::sum(x, d, k); }
at::Tensor mean(const at::Tensor& x, at::IntArrayRef d, bool k) { return at::mean(x, d, k); }
// ONNX reduces an empty set of values to the operation's identity
// (ReduceMax: minus infinity, or the type's lowest value for integers;
// ReduceMin: plus infinity or the highest value); ATen refuses amax and
// amin over an empty dim, so an input without elements is filled with it.
at::Tensor filled_reduction(const at::Tensor& x, at::IntArrayRef d, bool k, bool lowest) {
  std::vector<int64_t> sizes;
  for (int64_t i = 0; i < x.dim(); ++i) {
    bool reduced = std::find(d.begin(), d.end(), i) != d.end();
    if (!reduced)
      sizes.push_back(x.size(i));
    else if (k)
      sizes.push_back(1);
  }
  at::Scalar fill = lowest ? at::Scalar(-std::numeric_limits<double>::infinity())
                           : at::Scalar(std::numeric_limits<double>::infinity());
  if (integral(x))
    AT_DISPATCH_INTEGRAL_TYPES_AND(at::kBool, x.scalar_type(), "filled_reduction", [&] {
      fill = lowest ? std::numeric_limits<scalar_t>::lowest() : std::numeric_limits<scalar_t>::max();
    });
  return at::full(sizes, fill, x.options());
}
at::Tensor amax(const at::Tensor& x, at::IntArrayRef d, bool k) {
  return x.numel() == 0 ? filled_reduction(x, d, k, true) : at::amax(x, d, k);
}
at::Tensor amin(const at::Tensor& x, at::IntArrayRef d, bool k) {
  return x.numel() == 0 ? filled_reduction(x, d, k, false) : at::amin(x, d, k);
}
at::Tensor l1(const at::Tensor& x, at::IntArrayRef d, bool k) { return at::sum(at::abs(x), d, k); }
at::Tensor l2(const at::Tensor& x, at::IntArrayRef d, bool k) { return at::sqrt(at::sum(x * x, d, k)); }
at::Tensor log_sum(const at::Tensor& x, at::IntArrayRef d, bool k) { return at::log(at::sum(x, d, k)); }
at::Tensor log_sum_exp(const at::Tensor& x, at::IntArrayRef d, bool k) { return at::logsumexp(x, d, k); }
at::Tensor sum_square(const at::Tensor& x, at::IntArrayRef d, bool k) { return at::sum(x * x, d, k); }
at::Tensor prod(const at::Tensor& x, at::IntArrayRef d, bool k) {
  std::vector<int64_t> dims(d.begin(), d.end());
  std::sort(dims.rbegin(), dims.rend());  // highest first, so lower axes keep their place
  at::Tensor r = x;
  for (int64_t a : dims) r = at::prod(r, a, k);
  return r;
}

// `float_math`: integer inputs are reduced in f64 and truncated back, as the
// numpy reference does.
template <Reducer F, bool float_math>
KernelResult reduce(const KernelCall& c) {
  auto axes = reduce_axes(c);
  if (!axes) return kernel_error(axes.error());
  if (!*axes) return one(c.in(0));
  bool keep = c.op_attrs().get_int("keepdims") != 0;
  at::Tensor x = upcast(c.in(0));
  if (float_math && integral(x)) x = x.to(at::kDouble);
  if (x.dim() == 0) return one(restore(F(x.reshape({1}), {0}, false), c.in(0)));
  return one(restore(F(x, **axes, keep), c.in(0)));
}

template <bool is_max>
KernelResult arg_reduce(const KernelCall& c) {
  at::Tensor x = upcast(c.in(0));
  auto axis = normalize_axis(c.op_attrs().get_int("axis"), x.dim());
  if (!axis) return kernel_error("axis out of range");
  bool keep = c.op_attrs().get_int("keepdims") != 0;
  bool last = c.op_attrs().get_int("select_last_index") != 0;
  // ATen returns the first extremum; the last one is the first of the flipped input.
  at::Tensor in = last ? at::flip(x, {*axis}) : x;
  at::Tensor index = is_max ? at::argmax(in, *axis, keep) : at::argmin(in, *axis, keep);
  if (last) index = (x.size(*axis) - 1) - index;
  return one(index);
}

KernelResult cumsum(const KernelCall& c) {
  const at::Tensor& input = c.in(0);
  at::Tensor x = upcast(input);
  auto axis = normalize_axis(int_values(c.in(1)).at(0), x.dim());
  if (!axis) return kernel_error("axis out of range");
  bool reverse = c.op_attrs().get_int("reverse") != 0, exclusive = c.op_attrs().get_int("exclusive") != 0;
  if (reverse) x = at::flip(x, {*axis});
  at::Tensor y = at::cumsum(x, *axis, x.scalar_type());
  int64_t n = y.size(*axis);
  if (exclusive && n > 0)  // shift by one: y[i] = sum of x[0..i)
    y = at::cat({at::zeros_like(y.narrow(*axis, 0, 1)), y.narrow(*axis, 0, n - 1)}, *axis);
  if (reverse) y = at::flip(y, {*axis});
  return one(restore(y, input));
}

// Ties keep the lower index first (ONNX): a stable sort gives exactly that.
KernelResult topk(const KernelCall& c) {
  at::Tensor x = upcast(c.in(0));
  auto axis = normalize_axis(c.op_attrs().get_int("axis"), x.dim());
  if (!axis) return kernel_error("axis out of range");
  int64_t k = int_values(c.in(1)).at(0);
  if (k < 0 || k > x.size(*axis))
    return kernel_error(fmt::format("k = {} is out of range for axis of {}", k, x.size(*axis)));
  bool largest = c.op_attrs().get_int("largest") != 0;
  auto [values, indices] = at::sort(x, true, *axis, largest);
  return std::vector<at::Tensor>{restore(values.narrow(*axis, 0, k), c.in(0)), indices.narrow(*axis, 0, k)};
}

}  // namespace

void register_reduce_kernels(KernelTable& t) {
  auto set = [&](Op op, Kernel k) { t[static_cast<size_t>(op)] = k; };
  set(Op::ReduceSum, reduce<sum, false>);
  set(Op::ReduceMean, reduce<mean, true>);
  set(Op::ReduceMax, reduce<amax, false>);
  set(Op::ReduceMin, reduce<amin, false>);
  set(Op::ReduceProd, reduce<prod, false>);
  set(Op::ReduceL1, reduce<l1, false>);
  set(Op::ReduceL2, reduce<l2, true>);
  set(Op::ReduceLogSum, reduce<log_sum, true>);
  set(Op::ReduceLogSumExp, reduce<log_sum_exp, true>);
  set(Op::ReduceSumSquare, reduce<sum_square, false>);
  set(Op::ArgMax, arg_reduce<true>);
  set(Op::ArgMin, arg_reduce<false>);
  set(Op::CumSum, cumsum);
  set(Op::TopK, topk);
}

}  // namespace refinery::runtime
