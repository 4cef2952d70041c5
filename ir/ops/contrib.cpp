// ONNX Runtime's contrib ops (domain com.microsoft) that its CPU provider
// runs with fused kernels. Each is defined by its decomposition into
// standard ops (rules/lib/fused.rules, docs/onnx.md); only the forms Refinery
// can state exactly are accepted here, any other use stays an opaque node.
#include "ir/ops/registry.h"

namespace refinery::ir::ops {
namespace {

// Attention (com.microsoft, version 1): multi-head self-attention with the
// Q, K and V projections packed in one weight.
//   input [B, S, Hin], weights [Hin, 3H], bias [3H], optional attention_bias
//   [B or 1, num_heads or 1, S, S] -> output [B, S, H].
// The IR's inputs are ONNX's 0, 1, 2 and 5 (onnx_inputs): mask_index (3) and
// past (4) are not part of this form, and a node that has them stays opaque.
Result attention(InferContext& c) {
  if (c.num_outputs != 1) return error("the present output is not supported");
  const Shape& x = c.shape(0);
  const Shape& w = c.shape(1);
  if (x.rank() != 3) return error(fmt::format("input must be [batch, sequence, hidden], got rank {}", x.rank()));
  if (w.rank() != 2) return error("weights must be [input hidden, 3 x hidden]");
  if (!w[1].is_static() || w[1].size() % 3 != 0) return error("weights' second dim must be a multiple of 3");
  if (x[2].is_static() && w[0].is_static() && x[2].size() != w[0].size())
    return error(fmt::format("input hidden {} differs from the weights' {}", x[2].size(), w[0].size()));
  OpAttrs a = c.op_attrs();
  int64_t heads = a.get_int("num_heads");
  int64_t hidden = w[1].size() / 3;
  if (heads <= 0 || hidden % heads != 0) return error(fmt::format("num_heads {} does not divide {}", heads, hidden));
  if (a.get_int("unidirectional") != 0) return error("unidirectional is not supported");
  if (!a.get_ints("qkv_hidden_sizes").empty()) return error("qkv_hidden_sizes is not supported");
  if (!c.has_input(2)) return error("the bias input is required");
  const Shape& b = c.shape(2);
  if (b.rank() != 1 || !(b[0] == w[1])) return error("bias must be [3 x hidden]");
  if (auto ok = same_dtype(c, 0, 1, 3); !ok) return ok;
  if (!is_float(c.in(0).dtype)) return error("expects a floating-point input");
  if (c.has_input(3)) {
    const Shape& m = c.shape(3);
    if (m.rank() != 4) return error("attention_bias must be [batch or 1, num_heads or 1, sequence, sequence]");
    // ONNX Runtime reads it as [batch or 1, num_heads or 1, S, S]: the last
    // two dims are not broadcast and must be known to be S; an unknown first
    // or second dim is accepted (ONNX Runtime checks it as it runs, as a
    // broadcasting Add would).
    bool ok = (m[0].is_unknown() || m[0] == Dim(1) || m[0] == x[0]) &&
              (m[1].is_unknown() || m[1] == Dim(1) || m[1] == Dim(heads)) && m[2] == x[1] && m[3] == x[1] &&
              !x[1].is_unknown();
    if (!ok) return error("attention_bias must be [batch or 1, num_heads or 1, S, S]");
    if (auto ok = same_dtype(c, 0, 3, 4); !ok) return ok;
  }
  c.outputs[0] = TensorType{c.in(0).dtype, Shape{x[0], x[1], Dim(hidden)}};
  return {};
}

}  // namespace

void register_contrib(Table& t) {
  define(t, OpInfo{.op = Op::MsAttention,
                   .min_inputs = 3,
                   .max_inputs = 4,
                   .min_outputs = 1,
                   .max_outputs = 1,
                   .attrs = {{"num_heads", AttrKind::Int, AttrUse::Required},
                             float_attr("scale", 0.0f),  // 0: 1 / sqrt(head size)
                             int_attr("unidirectional", 0),
                             {"qkv_hidden_sizes", AttrKind::Ints, AttrUse::Optional,
                              {.rule = AttrDefault::Rule::Value, .value = std::vector<int64_t>{}}}},
                   .onnx_inputs = {0, 1, 2, 5},
                   .shape_rule = attention});
}

}  // namespace refinery::ir::ops
