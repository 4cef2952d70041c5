// ONNX Runtime's contrib ops (domain com.microsoft), computed by their
// decomposition into standard ops (rules/lib/fused.rules): the reference the
// fused kernels are validated against.
#include <cmath>

#include "runtime/aten.h"

namespace refinery::runtime {
namespace {

using ir::Op;

// Attention: the packed projection x W + b split into Q, K, V; per head
// softmax(Q K^T * scale + attention_bias) V; the heads joined again.
KernelResult attention(const KernelCall& c) {
  at::Tensor x = upcast(c.in(0));
  auto type = x.scalar_type();
  int64_t heads = c.op_attrs().get_int("num_heads");
  int64_t batch = x.size(0), seq = x.size(1);
  int64_t hidden = c.in(1).size(1) / 3, head = hidden / heads;
  float scale = c.op_attrs().get_float("scale");
  double s = scale != 0.0f ? static_cast<double>(scale) : 1.0 / std::sqrt(static_cast<double>(head));
  at::Tensor qkv = at::matmul(x, c.in(1).to(type)) + c.in(2).to(type);
  auto per_head = [&](int64_t i) {
    return qkv.narrow(2, i * hidden, hidden).reshape({batch, seq, heads, head}).permute({0, 2, 1, 3});
  };
  at::Tensor scores = at::matmul(per_head(0), per_head(1).transpose(-1, -2)) * s;
  if (c.has(3)) scores = scores + c.in(3).to(type);  // attention_bias
  at::Tensor context = at::matmul(at::softmax(scores, -1), per_head(2));
  return one(restore(context.permute({0, 2, 1, 3}).reshape({batch, seq, hidden}), c.in(0)));
}

}  // namespace

void register_contrib_kernels(KernelTable& t) { t[static_cast<size_t>(Op::MsAttention)] = attention; }

}  // namespace refinery::runtime
