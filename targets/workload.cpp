#include "targets/workload.h"

#include <algorithm>

namespace refinery::targets {

OpClass classify(ir::Op op) {
  using ir::Op;
  switch (op) {
    case Op::Reshape: case Op::Flatten: case Op::Squeeze: case Op::Unsqueeze: case Op::Identity:
    case Op::Dropout: case Op::Shape: case Op::Size: case Op::Constant:
      return OpClass::Free;
    case Op::MatMul: case Op::Gemm: case Op::Conv: case Op::ConvTranspose:
      return OpClass::Matrix;
    case Op::Split: case Op::Slice:
      return OpClass::Split;
    case Op::Transpose: case Op::Concat: case Op::Gather: case Op::GatherElements: case Op::Expand:
    case Op::Tile: case Op::Pad: case Op::DepthToSpace: case Op::SpaceToDepth: case Op::Trilu:
    case Op::ConstantOfShape: case Op::Range: case Op::TopK: case Op::CumSum:
      return OpClass::Movement;
    case Op::MaxPool: case Op::AveragePool: case Op::GlobalAveragePool: case Op::GlobalMaxPool:
    case Op::BatchNormalization: case Op::InstanceNormalization: case Op::LayerNormalization:
    case Op::LRN: case Op::Softmax: case Op::LogSoftmax: case Op::Hardmax:
    case Op::ReduceSum: case Op::ReduceMean: case Op::ReduceMax: case Op::ReduceMin: case Op::ReduceProd:
    case Op::ReduceL1: case Op::ReduceL2: case Op::ReduceLogSum: case Op::ReduceLogSumExp:
    case Op::ReduceSumSquare: case Op::ArgMax: case Op::ArgMin:
      return OpClass::Reduction;
    case Op::Opaque:
      return OpClass::Opaque;
    default:
      break;
  }
  const ir::OpInfo& info = ir::op_info(op);
  if (info.elementwise || op == Op::Cast || op == Op::CastLike || op == Op::Clip || op == Op::Where) return OpClass::Elementwise;
  if (info.stateful) return OpClass::Opaque;
  return OpClass::Movement;
}

double numel(const ir::TensorType& t) {
  if (!t.shape.ranked()) return 1;
  double n = 1;
  for (const ir::Dim& d : t.shape.dims()) n *= d.is_static() ? static_cast<double>(d.size()) : 1.0;
  return n;
}

double bytes(const ir::TensorType& t) { return numel(t) * static_cast<double>(ir::dtype_size(t.dtype)); }

namespace {

double dim(const ir::Shape& s, int64_t i) {
  if (i < 0) i += s.rank();
  if (i < 0 || i >= s.rank()) return 1;
  return s[i].is_static() ? static_cast<double>(s[i].size()) : 1.0;
}

}  // namespace

std::optional<Gemm> gemm_shape(const OpDesc& op) {
  if (op.inputs.size() < 2 || !op.inputs[0] || !op.inputs[1] || !op.output) return std::nullopt;
  const ir::Shape& a = op.inputs[0]->shape;
  const ir::Shape& b = op.inputs[1]->shape;
  const ir::Shape& y = op.output->shape;
  if (!a.ranked() || !b.ranked() || !y.ranked()) return std::nullopt;
  Gemm g;
  switch (op.op) {
    case ir::Op::MatMul: {
      if (a.rank() == 0 || b.rank() == 0) return std::nullopt;
      g.k = dim(a, -1);
      g.m = a.rank() >= 2 ? dim(a, -2) : 1;
      g.n = b.rank() >= 2 ? dim(b, -1) : 1;
      g.batch = numel(*op.output) / std::max(1.0, g.m * g.n);
      return g;
    }
    case ir::Op::Gemm: {
      bool ta = op.attrs && op.attrs->get_int("transA", 0);
      bool tb = op.attrs && op.attrs->get_int("transB", 0);
      g.m = dim(a, ta ? 1 : 0);
      g.k = dim(a, ta ? 0 : 1);
      g.n = dim(b, tb ? 0 : 1);
      return g;
    }
    case ir::Op::Conv: {
      // Implicit GEMM per group: [N*OH*OW, C/g*KH*KW] x [C/g*KH*KW, M/g].
      double groups = op.attrs ? static_cast<double>(op.attrs->get_int("group", 1)) : 1;
      double kernel = 1;
      for (int64_t i = 1; i < b.rank(); ++i) kernel *= dim(b, i);
      double spatial = 1;
      for (int64_t i = 2; i < y.rank(); ++i) spatial *= dim(y, i);
      g.batch = groups;
      g.m = dim(y, 0) * spatial;
      g.k = kernel;
      g.n = dim(b, 0) / std::max(1.0, groups);
      return g;
    }
    case ir::Op::ConvTranspose: {
      double groups = op.attrs ? static_cast<double>(op.attrs->get_int("group", 1)) : 1;
      double spatial = 1;
      for (int64_t i = 2; i < a.rank(); ++i) spatial *= dim(a, i);
      double kernel = 1;
      for (int64_t i = 2; i < b.rank(); ++i) kernel *= dim(b, i);
      g.batch = groups;
      g.m = dim(a, 0) * spatial;
      g.k = dim(b, 0) / std::max(1.0, groups);
      g.n = dim(b, 1) * kernel;
      return g;
    }
    default:
      return std::nullopt;
  }
}

double flops(const OpDesc& op) {
  if (auto g = gemm_shape(op)) return g->flops();
  double out = op.output ? numel(*op.output) : 0;
  double in = op.inputs.empty() || !op.inputs[0] ? out : numel(*op.inputs[0]);
  switch (classify(op.op)) {
    case OpClass::Elementwise:
      switch (op.op) {
        case ir::Op::Exp: case ir::Op::Log: case ir::Op::Erf: case ir::Op::Tanh: case ir::Op::Sigmoid:
        case ir::Op::Pow: case ir::Op::Sin: case ir::Op::Cos: case ir::Op::Softplus:
          return 8 * out;
        case ir::Op::Div: case ir::Op::Sqrt: case ir::Op::Reciprocal:
          return 4 * out;
        default:
          return out;
      }
    case OpClass::Reduction: {
      if (op.op == ir::Op::MaxPool || op.op == ir::Op::AveragePool) {
        double k = 1;
        if (op.attrs)
          for (int64_t s : op.attrs->get_ints("kernel_shape")) k *= static_cast<double>(s);
        return out * k;
      }
      bool heavy = op.op == ir::Op::Softmax || op.op == ir::Op::LogSoftmax || op.op == ir::Op::LayerNormalization;
      return in * (heavy ? 5 : 2);
    }
    default:
      return 0;
  }
}

double input_bytes(const OpDesc& op) {
  double b = 0;
  for (const ir::TensorType* t : op.inputs)
    if (t) b += bytes(*t);
  return b;
}

}  // namespace refinery::targets
