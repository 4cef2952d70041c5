// Shape arithmetic and constants: Shape, Size, Constant, ConstantOfShape, Range.
#include <cmath>

#include "runtime/aten.h"

namespace refinery::runtime {
namespace {

using ir::Op;

at::Tensor longs(const std::vector<int64_t>& v) {
  return at::tensor(v, at::kLong).reshape({static_cast<int64_t>(v.size())});
}

KernelResult shape(const KernelCall& c) {
  int64_t r = c.in(0).dim();
  int64_t start = c.op_attrs().get_int("start"), end = c.op_attrs().get_int("end");
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, start, r);
  auto sizes = c.in(0).sizes();
  return one(longs(std::vector<int64_t>(sizes.begin() + start, sizes.begin() + end)));
}

KernelResult size(const KernelCall& c) { return one(at::scalar_tensor(c.in(0).numel(), at::kLong)); }

KernelResult constant(const KernelCall& c) {
  const ir::Attributes& a = c.attrs();
  if (ir::TensorRef t = a.get_tensor("value")) return one(to_aten(t));  // shares the attribute's bytes
  if (a.has("value_float")) return one(at::scalar_tensor(a.get_float("value_float", 0), at::kFloat));
  if (a.has("value_floats")) {
    auto v = a.get_floats("value_floats");
    return one(at::tensor(v, at::kFloat).reshape({static_cast<int64_t>(v.size())}));
  }
  if (a.has("value_int")) return one(at::scalar_tensor(a.get_int("value_int", 0), at::kLong));
  if (auto v = a.maybe_ints("value_ints")) return one(longs(*v));
  return kernel_error("constant has no value the interpreter supports (strings are not)");
}

KernelResult constant_of_shape(const KernelCall& c) {
  std::vector<int64_t> shape = int_values(c.in(0));
  ir::TensorRef value = c.op_attrs().get_tensor("value");
  if (value->numel() != 1) return kernel_error("value must hold one element");
  at::Tensor v = to_aten(value).reshape({});
  return one(at::full(shape, v.item(), v.options()));
}

// out[i] = start + i * delta for i < max(ceil((limit - start) / delta), 0).
KernelResult range(const KernelCall& c) {
  const at::Tensor& start = c.in(0);
  bool integral = at::isIntegralType(start.scalar_type(), false);
  int64_t n = 0;
  at::Tensor out;
  if (integral) {
    int64_t s = start.item<int64_t>(), l = c.in(1).item<int64_t>(), d = c.in(2).item<int64_t>();
    if (d == 0) return kernel_error("delta must not be 0");
    n = std::max<int64_t>(0, (l - s + d + (d > 0 ? -1 : 1)) / d);
    out = at::arange(n, at::kLong) * d + s;
  } else {
    double s = start.item<double>(), l = c.in(1).item<double>(), d = c.in(2).item<double>();
    if (d == 0) return kernel_error("delta must not be 0");
    n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((l - s) / d)));
    at::Tensor typed = upcast(start);
    out = at::arange(n, typed.options()) * upcast(c.in(2)) + typed;
  }
  return one(out.to(start.scalar_type()));
}

}  // namespace

void register_shape_kernels(KernelTable& t) {
  t[static_cast<size_t>(Op::Shape)] = shape;
  t[static_cast<size_t>(Op::Size)] = size;
  t[static_cast<size_t>(Op::Constant)] = constant;
  t[static_cast<size_t>(Op::ConstantOfShape)] = constant_of_shape;
  t[static_cast<size_t>(Op::Range)] = range;
}

}  // namespace refinery::runtime
