#include "ir/stats.h"

namespace refinery::ir {

int64_t node_flops(const Graph& g, const Node& n) {
  if (n.op == Op::Opaque || n.outputs.empty()) return -1;
  auto numel = [&](ValueId v) -> int64_t {
    if (v == kNoValue) return 0;
    return g.value(v).type.shape.num_elements().value_or(-1);
  };
  const Shape& out = g.value(n.outputs[0]).type.shape;
  int64_t out_n = numel(n.outputs[0]);
  if (out_n < 0) return -1;
  const OpInfo& info = op_info(n.op);
  switch (n.op) {
    case Op::MatMul: {
      const Shape& a = g.value(n.inputs[0]).type.shape;
      if (!a.is_static()) return -1;
      return 2 * out_n * a[a.rank() - 1].size();
    }
    case Op::Gemm: {
      const Shape& a = g.value(n.inputs[0]).type.shape;
      if (!a.is_static()) return -1;
      int64_t k = a[n.attrs.get_int("transA", 0) ? 0 : 1].size();
      return 2 * out_n * k + (n.inputs.size() > 2 ? out_n : 0);
    }
    case Op::Conv:
    case Op::ConvTranspose: {
      const Shape& w = g.value(n.inputs[1]).type.shape;
      if (!w.is_static()) return -1;
      int64_t per_out = 1;  // kernel elements per output (for conv: C/group * kernel)
      for (int64_t i = 1; i < w.rank(); ++i) per_out *= w[i].size();
      if (n.op == Op::ConvTranspose) {
        int64_t in_n = numel(n.inputs[0]);
        if (in_n < 0) return -1;
        int64_t k = 1;
        for (int64_t i = 1; i < w.rank(); ++i) k *= w[i].size();
        return 2 * in_n * k;
      }
      return 2 * out_n * per_out + (n.inputs.size() > 2 ? out_n : 0);
    }
    case Op::MaxPool:
    case Op::AveragePool: {
      int64_t k = 1;
      for (int64_t s : n.attrs.get_ints("kernel_shape")) k *= s;
      return out_n * k;
    }
    case Op::GlobalAveragePool:
    case Op::GlobalMaxPool:
    case Op::ReduceSum: case Op::ReduceMean: case Op::ReduceMax: case Op::ReduceMin:
    case Op::ReduceProd: case Op::ReduceL1: case Op::ReduceL2: case Op::ReduceLogSum:
    case Op::ReduceLogSumExp: case Op::ReduceSumSquare: case Op::ArgMax: case Op::ArgMin:
    case Op::Softmax: case Op::LogSoftmax: case Op::LayerNormalization:
    case Op::BatchNormalization: case Op::InstanceNormalization: case Op::LRN: {
      int64_t in_n = numel(n.inputs[0]);
      return in_n < 0 ? -1 : in_n * (n.op == Op::Softmax || n.op == Op::LayerNormalization ? 5 : 2);
    }
    // NIR ops: the work of one time step. A synapse (a weight of an affine,
    // linear or convolution) is one multiply-add; a neuron counts the
    // arithmetic of its euler update and threshold (docs/spiking.md).
    case Op::Affine:
    case Op::Linear: {
      int64_t w = numel(n.inputs[1]);
      return w < 0 ? -1 : 2 * w;
    }
    case Op::NirConv1d:
    case Op::NirConv2d: {
      const Shape& w = g.value(n.inputs[1]).type.shape;
      if (!w.is_static()) return -1;
      int64_t fan_in = 1;
      for (int64_t i = 1; i < w.rank(); ++i) fan_in *= w[i].size();
      return 2 * out_n * fan_in;
    }
    case Op::SumPool2d:
    case Op::AvgPool2d: {
      int64_t k = 1;
      for (int64_t s : n.attrs.get_ints("kernel_shape")) k *= s;
      return out_n * k;
    }
    case Op::Scale: case Op::Threshold: return out_n;
    case Op::NirFlatten: case Op::Delay: return 0;
    case Op::Integrator: return 3 * out_n;  // v + dt (r I)
    case Op::IF: return 4 * out_n;          // and v > v_threshold
    case Op::LI: return 5 * out_n;          // v + k ((v_leak - v) + r I)
    case Op::LIF: return 6 * out_n;
    case Op::CubaLI: return 9 * out_n;      // i + k_syn (w_in I - i), then as LI
    case Op::CubaLIF: return 10 * out_n;
    default:
      (void)out;
      return info.elementwise ? out_n : 0;  // layout and shape ops move data, no arithmetic
  }
}

GraphStats compute_stats(const Graph& g) {
  GraphStats s;
  for (ValueId v : g.constants()) {
    s.num_parameters += g.value(v).constant->numel();
    s.parameter_bytes += static_cast<int64_t>(g.value(v).constant->bytes().size());
  }
  for (const Node& n : g.nodes()) {
    ++s.num_nodes;
    ++s.op_histogram[n.op == Op::Opaque ? (n.domain.empty() ? n.op_type : n.domain + "::" + n.op_type)
                                        : std::string(op_info(n.op).onnx_name)];
    int64_t f = node_flops(g, n);
    if (f < 0) ++s.nodes_without_flops;
    else s.flops += f;
  }
  return s;
}

}  // namespace refinery::ir
