// Normalisation (BatchNormalization, InstanceNormalization,
// LayerNormalization, LRN), Dropout in inference, and the softmax family
// (opset-13 semantics: one axis). Statistics are computed in f32 or wider.
#include "runtime/aten.h"

namespace refinery::runtime {
namespace {

using ir::Op;

// [C] -> [1, C, 1, ...] for an input of rank `rank`.
at::Tensor per_channel(const at::Tensor& v, int64_t rank, at::ScalarType type) {
  std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
  shape[1] = v.numel();
  return v.to(type).reshape(shape);
}

std::vector<int64_t> all_but_channel(int64_t rank) {
  std::vector<int64_t> d{0};
  for (int64_t i = 2; i < rank; ++i) d.push_back(i);
  return d;
}

KernelResult batch_norm(const KernelCall& c) {
  at::Tensor x = upcast(c.in(0));
  auto type = x.scalar_type();
  int64_t r = x.dim();
  float eps = c.op_attrs().get_float("epsilon");
  at::Tensor scale = per_channel(c.in(1), r, type), bias = per_channel(c.in(2), r, type);
  at::Tensor mean = per_channel(c.in(3), r, type), var = per_channel(c.in(4), r, type);
  if (c.op_attrs().get_int("training_mode") == 0) {
    at::Tensor y = (x - mean) / at::sqrt(var + eps) * scale + bias;
    return one(restore(y, c.in(0)));
  }
  // Training mode: normalise with the batch statistics and update the running ones.
  float momentum = c.op_attrs().get_float("momentum");
  auto dims = all_but_channel(r);
  at::Tensor batch_mean = at::mean(x, dims, true);
  at::Tensor batch_var = at::mean(at::square(x - batch_mean), dims, true);
  at::Tensor y = (x - batch_mean) / at::sqrt(batch_var + eps) * scale + bias;
  std::vector<at::Tensor> out{restore(y, c.in(0))};
  auto stat_type = c.in(3).scalar_type();
  if (c.num_outputs() > 1) out.push_back((mean * momentum + batch_mean * (1 - momentum)).reshape({-1}).to(stat_type));
  if (c.num_outputs() > 2) out.push_back((var * momentum + batch_var * (1 - momentum)).reshape({-1}).to(stat_type));
  return out;
}

KernelResult instance_norm(const KernelCall& c) {
  at::Tensor x = upcast(c.in(0));
  int64_t r = x.dim();
  float eps = c.op_attrs().get_float("epsilon");
  std::vector<int64_t> dims;
  for (int64_t i = 2; i < r; ++i) dims.push_back(i);
  at::Tensor mean = at::mean(x, dims, true);
  at::Tensor var = at::mean(at::square(x - mean), dims, true);
  at::Tensor y = (x - mean) / at::sqrt(var + eps) * per_channel(c.in(1), r, x.scalar_type()) +
                 per_channel(c.in(2), r, x.scalar_type());
  return one(restore(y, c.in(0)));
}

KernelResult layer_norm(const KernelCall& c) {
  const at::Tensor& input = c.in(0);
  auto axis = normalize_axis(c.op_attrs().get_int("axis"), input.dim());
  if (!axis) return kernel_error("axis out of range");
  bool stash_f32 = c.op_attrs().get_int("stash_type") == 1;
  at::Tensor x = stash_f32 && input.scalar_type() != at::kDouble ? input.to(at::kFloat) : input;
  float eps = c.op_attrs().get_float("epsilon");
  std::vector<int64_t> dims;
  for (int64_t i = *axis; i < x.dim(); ++i) dims.push_back(i);
  at::Tensor mean = at::mean(x, dims, true);
  at::Tensor inv_std = at::rsqrt(at::mean(at::square(x - mean), dims, true) + eps);
  at::Tensor y = (x - mean) * inv_std * c.in(1).to(x.scalar_type());
  if (c.has(2)) y = y + c.in(2).to(x.scalar_type());
  std::vector<at::Tensor> out{y.to(input.scalar_type())};
  if (c.num_outputs() > 1) out.push_back(mean);
  if (c.num_outputs() > 2) out.push_back(inv_std);
  return out;
}

// y = x / (bias + alpha / size * sum of x^2 over a window of `size` channels)^beta
KernelResult lrn(const KernelCall& c) {
  at::Tensor x = upcast(c.in(0));
  int64_t size = c.attrs().get_int("size", 1);
  float alpha = c.op_attrs().get_float("alpha"), beta = c.op_attrs().get_float("beta"),
        bias = c.op_attrs().get_float("bias");
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  std::vector<int64_t> pad(static_cast<size_t>(2 * (x.dim() - 1)), 0);
  // constant_pad_nd lists dims from the last; the channel dim is the last pair.
  pad[pad.size() - 2] = before;
  pad[pad.size() - 1] = after;
  at::Tensor sq = at::constant_pad_nd(at::square(x), pad, 0);
  at::Tensor sum = sq.unfold(1, size, 1).sum(-1);
  at::Tensor y = x / at::pow(sum * (alpha / static_cast<float>(size)) + bias, beta);
  return one(restore(y, c.in(0)));
}

KernelResult dropout(const KernelCall& c) {
  bool training = c.has(2) && c.in(2).reshape({}).item<bool>();
  double ratio = c.has(1) ? c.in(1).reshape({}).item<double>() : 0.5;
  if (training && ratio > 0)
    return kernel_error("dropout in training mode is random; the interpreter runs inference only");
  std::vector<at::Tensor> out{c.in(0)};
  if (c.num_outputs() > 1) out.push_back(at::ones(c.in(0).sizes(), c.in(0).options().dtype(at::kBool)));
  return out;
}

std::expected<int64_t, std::string> softmax_axis(const KernelCall& c) {
  auto axis = normalize_axis(c.op_attrs().get_int("axis"), c.in(0).dim());
  if (!axis) return std::unexpected(std::string("axis out of range"));
  return *axis;
}

KernelResult softmax(const KernelCall& c) {
  auto axis = softmax_axis(c);
  if (!axis) return kernel_error(axis.error());
  return one(restore(at::softmax(upcast(c.in(0)), *axis), c.in(0)));
}

KernelResult log_softmax(const KernelCall& c) {
  auto axis = softmax_axis(c);
  if (!axis) return kernel_error(axis.error());
  return one(restore(at::log_softmax(upcast(c.in(0)), *axis), c.in(0)));
}

// One at the first maximum along the axis, zero elsewhere.
KernelResult hardmax(const KernelCall& c) {
  auto axis = softmax_axis(c);
  if (!axis) return kernel_error(axis.error());
  at::Tensor x = upcast(c.in(0));
  if (x.numel() == 0) return one(c.in(0));
  at::Tensor index = at::argmax(x, *axis, true);
  at::Tensor y = at::zeros_like(x).scatter(*axis, index, 1.0);
  return one(restore(y, c.in(0)));
}

}  // namespace

void register_norm_kernels(KernelTable& t) {
  t[static_cast<size_t>(Op::BatchNormalization)] = batch_norm;
  t[static_cast<size_t>(Op::InstanceNormalization)] = instance_norm;
  t[static_cast<size_t>(Op::LayerNormalization)] = layer_norm;
  t[static_cast<size_t>(Op::LRN)] = lrn;
  t[static_cast<size_t>(Op::Dropout)] = dropout;
  t[static_cast<size_t>(Op::Softmax)] = softmax;
  t[static_cast<size_t>(Op::LogSoftmax)] = log_softmax;
  t[static_cast<size_t>(Op::Hardmax)] = hardmax;
}

}  // namespace refinery::runtime
