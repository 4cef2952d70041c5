// MatMul, Gemm, Einsum, Conv and ConvTranspose. Padding follows ONNX exactly: auto_pad
// and asymmetric pads are applied explicitly (ATen pads symmetrically only).
#include "ir/einsum.h"
#include "runtime/aten.h"

namespace refinery::runtime {
namespace {

using ir::Op;

KernelResult matmul(const KernelCall& c) {
  at::Tensor a = upcast(c.in(0)), b = upcast(c.in(1));
  return one(restore(at::matmul(a, b), c.in(0)));
}

KernelResult gemm(const KernelCall& c) {
  at::Tensor a = upcast(c.in(0)), b = upcast(c.in(1));
  if (c.op_attrs().get_int("transA") != 0) a = a.t();
  if (c.op_attrs().get_int("transB") != 0) b = b.t();
  float alpha = c.op_attrs().get_float("alpha"), beta = c.op_attrs().get_float("beta");
  at::Tensor y = at::mm(a, b);
  if (alpha != 1.0f) y = y * alpha;
  if (c.has(2)) {
    at::Tensor bias = upcast(c.in(2));
    y = y + (beta != 1.0f ? bias * beta : bias);
  }
  return one(restore(y, c.in(0)));
}

// ATen gets the equation in its explicit form (ir/einsum.h decides the
// implicit output, which ATen and ONNX order alike, and rejects an output
// that drops the ellipsis, which ATen would sum over and ONNX forbids).
KernelResult einsum(const KernelCall& c) {
  auto eq = ir::parse_einsum(c.op_attrs().get_string("equation"));
  if (!eq) return kernel_error(eq.error());
  std::vector<at::Tensor> operands;
  for (size_t i = 0; i < c.num_inputs(); ++i) operands.push_back(upcast(c.in(i)));
  return one(restore(at::einsum(eq->str(), operands), c.in(0)));
}

struct ConvAttrs {
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begins then ends
  std::string auto_pad;
  int64_t group = 1;
};

ConvAttrs read_conv(const KernelCall& c, const at::Tensor& w) {
  ConvAttrs a;
  for (int64_t i = 2; i < w.dim(); ++i) a.kernel.push_back(w.size(i));
  ir::OpAttrs attrs = c.op_attrs();
  a.strides = attrs.get_ints("strides");
  a.dilations = attrs.get_ints("dilations");
  a.pads = attrs.get_ints("pads");
  a.auto_pad = attrs.get_string("auto_pad");
  a.group = attrs.get_int("group");
  return a;
}

// at::constant_pad_nd takes (begin, end) pairs from the last dimension back.
std::vector<int64_t> pad_list(const std::vector<int64_t>& begin, const std::vector<int64_t>& end) {
  std::vector<int64_t> out;
  for (size_t i = begin.size(); i-- > 0;) {
    out.push_back(begin[i]);
    out.push_back(end[i]);
  }
  return out;
}

c10::optional<at::Tensor> bias_of(const KernelCall& c, const at::Tensor& like) {
  if (!c.has(2)) return c10::nullopt;
  return c.in(2).to(like.scalar_type());
}

KernelResult conv(const KernelCall& c) {
  at::Tensor x = upcast(c.in(0));
  at::Tensor w = c.in(1).to(x.scalar_type());
  ConvAttrs a = read_conv(c, w);
  size_t n = a.kernel.size();
  std::vector<int64_t> begin(n), end(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t in = x.size(static_cast<int64_t>(i) + 2);
    int64_t effective = (a.kernel[i] - 1) * a.dilations[i] + 1;
    if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      int64_t out = (in + a.strides[i] - 1) / a.strides[i];
      int64_t total = std::max<int64_t>(0, (out - 1) * a.strides[i] + effective - in);
      begin[i] = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end[i] = total - begin[i];
    } else if (a.auto_pad != "VALID") {
      begin[i] = a.pads[i];
      end[i] = a.pads[i + n];
    }
  }
  std::vector<int64_t> padding = begin;
  if (begin != end) {
    x = at::constant_pad_nd(x, pad_list(begin, end), 0);
    padding.assign(n, 0);
  }
  // (contiguous: ATen's path for an empty batch views the weight, which a
  // transposed weight cannot give)
  at::Tensor y = at::convolution(x.contiguous(), w.contiguous(), bias_of(c, x), a.strides, padding, a.dilations, false,
                                 std::vector<int64_t>(n, 0), a.group);
  return one(restore(y, c.in(0)));
}

// ConvTranspose: compute the full transposed convolution (no padding), then
// cut the ONNX output window out of it; positions past the full result (from
// output_padding or output_shape) are zeros, as ONNX defines.
KernelResult conv_transpose(const KernelCall& c) {
  at::Tensor x = upcast(c.in(0));
  at::Tensor w = c.in(1).to(x.scalar_type());
  ConvAttrs a = read_conv(c, w);
  size_t n = a.kernel.size();
  auto out_pad = c.op_attrs().get_ints("output_padding");
  auto output_shape = c.attrs().get_ints("output_shape", {});
  if (out_pad.size() != n) return kernel_error("output_padding does not match the spatial rank");
  if (!output_shape.empty() && output_shape.size() < n) return kernel_error("output_shape is too short");
  at::Tensor full = at::convolution(x, w, c10::nullopt, a.strides, std::vector<int64_t>(n, 0), a.dilations, true,
                                    std::vector<int64_t>(n, 0), a.group);
  std::vector<int64_t> before(n), after(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t in = x.size(static_cast<int64_t>(i) + 2);
    int64_t full_size = full.size(static_cast<int64_t>(i) + 2);
    int64_t natural = a.strides[i] * (in - 1) + out_pad[i] + (a.kernel[i] - 1) * a.dilations[i] + 1;
    int64_t begin = 0, out = 0;
    bool same = a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER";
    if (!output_shape.empty() || same) {
      out = !output_shape.empty() ? output_shape[output_shape.size() - n + i] : in * a.strides[i];
      int64_t total = std::max<int64_t>(0, natural - out);
      begin = a.auto_pad == "SAME_LOWER" ? total - total / 2 : total / 2;
    } else {
      begin = a.pads[i];
      out = natural - a.pads[i] - a.pads[i + n];
    }
    before[i] = -begin;
    after[i] = out - (full_size - begin);
  }
  at::Tensor y = at::constant_pad_nd(full, pad_list(before, after), 0);
  if (auto b = bias_of(c, y)) {
    std::vector<int64_t> shape(static_cast<size_t>(y.dim()), 1);
    shape[1] = b->numel();
    y = y + b->reshape(shape);
  }
  return one(restore(y, c.in(0)));
}

}  // namespace

void register_linear_kernels(KernelTable& t) {
  t[static_cast<size_t>(Op::MatMul)] = matmul;
  t[static_cast<size_t>(Op::Gemm)] = gemm;
  t[static_cast<size_t>(Op::Einsum)] = einsum;
  t[static_cast<size_t>(Op::Conv)] = conv;
  t[static_cast<size_t>(Op::ConvTranspose)] = conv_transpose;
}

}  // namespace refinery::runtime
