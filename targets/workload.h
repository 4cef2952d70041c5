// What an op does, in numbers a cost model needs: elements, bytes, FLOPs
// (ir::op_work's, the one count, priced per element for transcendental ops),
// and the GEMM shape of matrix ops (convolutions as implicit GEMMs). Shared
// by the cpu, gpu and tpu models. Symbolic dims count as 1.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "ir/work.h"
#include "targets/cost_model.h"

namespace refinery::targets {

enum class OpClass {
  Free,         // views and shape bookkeeping (reshape, squeeze, identity, shape, ...)
  Matrix,       // matmul, gemm, einsum, conv, conv_transpose
  Elementwise,  // maps elements one to one (activations, arithmetic, cast, clip, batch norm)
  Movement,     // copies data around (transpose, concat, gather, pad, ...)
  Split,        // split and slice: writes of a part (fusable into the producer's epilogue)
  Reduction,    // reductions, pools, normalisations over the data (layer, instance), softmax
  Opaque,
};

OpClass classify(ir::Op op);

// Whether input `i` of `op` is a constant (or computed only from constants).
bool input_constant(const OpDesc& op, std::size_t i);

// A type's sizes when its shape is static.
std::optional<std::vector<int64_t>> static_sizes(const ir::TensorType* t);

// A 1x1 Conv (group 1, unit strides and dilations, no padding) by a
// constant weight: a GEMM of K x C weights over N * spatial columns.
bool conv_1x1(const OpDesc& op);
// The same GEMM as the rule conv-1x1-as-matmul writes it: a MatMul W x with
// only W constant, W [K, C] and x [N, C, S] or [C, S].
bool matmul_is_conv_1x1(const OpDesc& op);

// The family of kernel a GPU runs for a kernel op, as the gpu spec's
// kernel_latency_s names them: "conv" (Conv, ConvTranspose, and a MatMul
// that is a 1x1 Conv's GEMM, so that the two forms cost the same: the cost
// laws), "matmul" (MatMul, Gemm, Einsum), "reduction" (OpClass::Reduction),
// "movement" (OpClass::Movement); empty for the rest (views, fused ops,
// opaque ops).
std::string_view kernel_family(const OpDesc& op);
inline constexpr std::array<std::string_view, 4> kKernelFamilies{"conv", "matmul", "reduction", "movement"};

// ir::counted_elements and ir::counted_bytes (symbolic dims count as 1).
double numel(const ir::TensorType& t);
double bytes(const ir::TensorType& t);

// A (possibly batched, possibly grouped) GEMM: batch x [m, k] x [k, n].
struct Gemm {
  double batch = 1, m = 1, k = 1, n = 1;
};
std::optional<Gemm> gemm_shape(const OpDesc& op);

// An Einsum that is a (batched) MatMul: two operands A [..., m, k] and
// B [..., k, n] (a batch prefix of either, right-aligned, as MatMul
// broadcasts it; an ellipsis only in front) to [..., m, n], no label
// repeated within a term. gemm_shape takes it as that MatMul.
bool einsum_is_matmul(const OpDesc& op);

// The op's FLOPs (ir::op_work) without a matrix op's bias add (its
// epilogue, free), an element of a transcendental op priced at 8 adds and
// one of a division or square root at 4.
double flops(const OpDesc& op);

// Bytes read: all present inputs (ir::op_work).
double input_bytes(const OpDesc& op);

// Whether ONNX Runtime (CPU, graph optimization 'all') fuses this op into
// the kernel of the op that computes its input, so that it runs as that
// kernel's epilogue (docs/targets.md lists the fusions).
bool ort_cpu_fused_epilogue(const OpDesc& op);

// ONNX Runtime's fused Attention (com.microsoft) as the kernels of its
// decomposition, which the CPU models price it by (the analytic model's
// parts, the learned model's trees: no zoo model has the op): the packed
// projection x W (W constant where the op's is), Q K^T per head, the
// softmax and the weighted sum of V; no head split, transposes or bias add
// of their own. The Attention runs as one kernel: it saves the dispatches
// of all parts but one.
struct AttentionParts {
  std::array<ir::TensorType, 4> types;  // packed, q, k^T, scores: the parts point into them
  std::array<OpDesc, 4> parts;
};
// Fills `out` (its pointers point into it and into op's inputs: it must not
// move); false where the op's shapes do not allow it (an unranked input, a
// symbolic weight width).
bool attention_parts(const OpDesc& op, AttentionParts& out);
// The fused Attention's price: its parts' prices (`price`) less the
// dispatches (`dispatch_s`) of all but one, at least one dispatch (also
// where attention_parts cannot describe it).
double attention_cost(const OpDesc& op, double dispatch_s, const std::function<double(const OpDesc&)>& price);

}  // namespace refinery::targets
