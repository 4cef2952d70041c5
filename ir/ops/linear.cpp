// MatMul (numpy semantics, batched), Gemm and Einsum.
#include "ir/einsum.h"
#include "ir/ops/registry.h"

namespace refinery::ir::ops {
namespace {

bool dims_compatible(const Dim& a, const Dim& b) { return !(a.is_static() && b.is_static() && a.size() != b.size()); }

Result matmul(InferContext& c) {
  if (auto ok = same_dtype(c, 0, 1, 2); !ok) return ok;
  Shape a = c.shape(0), b = c.shape(1);
  if (a.rank() == 0 || b.rank() == 0) return error("matmul inputs must have rank 1 or more");
  bool a_vec = a.rank() == 1, b_vec = b.rank() == 1;
  if (a_vec) a = Shape({Dim(1), a[0]});
  if (b_vec) b = Shape({b[0], Dim(1)});
  const Dim& k1 = a[a.rank() - 1];
  const Dim& k2 = b[b.rank() - 2];
  if (!dims_compatible(k1, k2))
    return error(fmt::format("inner dimensions differ: {} and {}", c.shape(0).str(), c.shape(1).str()));
  Shape batch_a(std::vector<Dim>(a.dims().begin(), a.dims().end() - 2));
  Shape batch_b(std::vector<Dim>(b.dims().begin(), b.dims().end() - 2));
  auto batch = broadcast(batch_a, batch_b);
  if (!batch) return std::unexpected(batch.error());
  std::vector<Dim> out = batch->dims();
  if (!a_vec) out.push_back(a[a.rank() - 2]);
  if (!b_vec) out.push_back(b[b.rank() - 1]);
  c.outputs[0] = TensorType{c.in(0).dtype, Shape(std::move(out))};
  return {};
}

Result gemm(InferContext& c) {
  if (auto ok = same_dtype(c, 0, 1, 3); !ok) return ok;
  if (c.shape(0).rank() != 2 || c.shape(1).rank() != 2)
    return error(fmt::format("gemm takes 2-d A and B, got {} and {}", c.shape(0).str(), c.shape(1).str()));
  OpAttrs a = c.op_attrs();
  bool ta = a.get_int("transA") != 0, tb = a.get_int("transB") != 0;
  Dim m = c.shape(0)[ta ? 1 : 0], k1 = c.shape(0)[ta ? 0 : 1];
  Dim k2 = c.shape(1)[tb ? 1 : 0], n = c.shape(1)[tb ? 0 : 1];
  if (!dims_compatible(k1, k2))
    return error(fmt::format("inner dimensions differ: {} and {}", c.shape(0).str(), c.shape(1).str()));
  Shape out({m, n});
  if (c.has_input(2)) {
    auto b = broadcast(out, c.shape(2));
    if (!b || b->rank() != 2)
      return error(fmt::format("bias {} does not broadcast to {}", c.shape(2).str(), out.str()));
  }
  c.outputs[0] = TensorType{c.in(0).dtype, out};
  return {};
}

// ONNX Einsum: the equation's meaning is ir/einsum.h's, shared with the
// interpreter and the FLOP count.
Result einsum(InferContext& c) {
  if (auto ok = same_dtype(c, 0, 1, c.inputs.size()); !ok) return ok;
  auto eq = parse_einsum(c.op_attrs().get_string("equation"));
  if (!eq) return error(eq.error());
  std::vector<const Shape*> shapes;
  for (size_t i = 0; i < c.inputs.size(); ++i) shapes.push_back(&c.shape(i));
  auto dims = einsum_dims(*eq, shapes);
  if (!dims) return error(dims.error());
  c.outputs[0] = TensorType{c.in(0).dtype, std::move(dims->output)};
  return {};
}

}  // namespace

void register_linear(Table& t) {
  define(t, OpInfo{.op = Op::MatMul, .min_inputs = 2, .max_inputs = 2, .shape_rule = matmul});
  define(t, OpInfo{.op = Op::Gemm,
                   .min_inputs = 2,
                   .max_inputs = 3,
                   .attrs = {float_attr("alpha", 1.0f), float_attr("beta", 1.0f), int_attr("transA", 0),
                             int_attr("transB", 0)},
                   .shape_rule = gemm});
  define(t, OpInfo{.op = Op::Einsum,
                   .min_inputs = 1,
                   .max_inputs = -1,
                   .attrs = {{"equation", AttrKind::String, AttrUse::Required}},
                   .shape_rule = einsum});
}

}  // namespace refinery::ir::ops
