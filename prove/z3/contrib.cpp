// Symbolic semantics of ONNX Runtime's contrib ops (ir/ops/contrib.cpp),
// each its decomposition into the standard ops' semantics, in the order the
// reference kernel computes it (runtime/kernels/contrib.cpp).
#include <cmath>

#include "prove/z3/semantics.h"

namespace refinery::prove::semantics {
namespace {

// Attention, packed: qkv = x W + bias; per head softmax(Q K^T * scale
// (+ attention_bias)) V; the heads joined again.
Result attention(Ctx& c) {
  const SymTensor &x = c.x(0), &w = c.x(1), &bias = c.x(2);
  int64_t batch = x.shape[0], seq = x.shape[1], in = x.shape[2];
  int64_t packed = w.shape[1], hidden = packed / 3;
  int64_t heads = c.attr_int("num_heads"), head = hidden / heads;
  double scale = c.attr_float("scale");
  if (scale == 0.0) scale = 1.0 / std::sqrt(static_cast<double>(head));
  auto at = [](const SymTensor& t, int64_t i) -> const z3::expr& { return t.elems[static_cast<size_t>(i)]; };
  std::vector<z3::expr> qkv;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < seq; ++s)
      for (int64_t col = 0; col < packed; ++col) {
        std::optional<z3::expr> acc;
        for (int64_t k = 0; k < in; ++k) {
          z3::expr p = c.d.mul(at(x, (b * seq + s) * in + k), at(w, k * packed + col));
          acc = acc ? c.d.add(*acc, p) : p;
        }
        qkv.push_back(c.d.add(acc ? *acc : c.d.num(0), at(bias, col)));
      }
  auto part = [&](int64_t which, int64_t b, int64_t s, int64_t h, int64_t e) -> const z3::expr& {
    return qkv[static_cast<size_t>((b * seq + s) * packed + which * hidden + h * head + e)];
  };
  std::vector<z3::expr> out(static_cast<size_t>(batch * seq * hidden), c.d.num(0));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < seq; ++i) {
        std::vector<z3::expr> scores;
        for (int64_t j = 0; j < seq; ++j) {
          std::optional<z3::expr> acc;
          for (int64_t e = 0; e < head; ++e) {
            z3::expr p = c.d.mul(part(0, b, i, h, e), part(1, b, j, h, e));
            acc = acc ? c.d.add(*acc, p) : p;
          }
          z3::expr v = acc ? *acc : c.d.num(0);
          if (scale != 1.0) v = c.d.mul(v, c.d.num(scale));
          if (c.has(3)) v = c.d.add(v, bcast(c.x(3), {b, h, i, j}));  // attention_bias
          scores.push_back(v);
        }
        std::vector<z3::expr> ex;
        for (const auto& v : scores) ex.push_back(c.d.fn("exp", v));
        z3::expr total = sum_of(c.d, ex);
        for (int64_t e = 0; e < head; ++e) {
          std::optional<z3::expr> acc;
          for (int64_t j = 0; j < seq; ++j) {
            z3::expr p = c.d.mul(c.d.div(ex[static_cast<size_t>(j)], total, false), part(2, b, j, h, e));
            acc = acc ? c.d.add(*acc, p) : p;
          }
          out[static_cast<size_t>((b * seq + i) * hidden + h * head + e)] = acc ? *acc : c.d.num(0);
        }
      }
  return one(make(c.out[0], std::move(out)));
}

}  // namespace

void fill_contrib(Table& t) { define(t, ir::Op::MsAttention, attention); }

}  // namespace refinery::prove::semantics
