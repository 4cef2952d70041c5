#include "ir/work.h"

#include "ir/einsum.h"

namespace refinery::ir {

double counted_elements(const TensorType& t) {
  if (!t.shape.ranked()) return 1;
  double n = 1;
  for (const Dim& d : t.shape.dims()) n *= d.is_static() ? static_cast<double>(d.size()) : 1.0;
  return n;
}

double counted_bytes(const TensorType& t) { return counted_elements(t) * static_cast<double>(dtype_size(t.dtype)); }

namespace {

// Reads the dims the FLOPs depend on, noting any that is not static.
struct DimReader {
  bool exact = true;

  double elements(const TensorType* t) {
    if (t == nullptr) return 0;
    if (!t->shape.is_static()) exact = false;
    return counted_elements(*t);
  }
  // Elements of a shape's dims [from, rank).
  double product(const TensorType* t, int64_t from) {
    if (!t->shape.is_static()) exact = false;
    double n = 1;
    for (int64_t i = from; i < t->shape.rank(); ++i)
      n *= t->shape[i].is_static() ? static_cast<double>(t->shape[i].size()) : 1.0;
    return n;
  }
  double dim(const TensorType* t, int64_t i) {
    if (!t->shape.is_static()) exact = false;
    if (i < 0) i += t->shape.rank();
    if (i < 0 || i >= t->shape.rank() || !t->shape[i].is_static()) return 1;
    return static_cast<double>(t->shape[i].size());
  }
};

double kernel_elements(const OpAttrs& a) {
  double k = 1;
  for (int64_t s : a.maybe_ints("kernel_shape").value_or(std::vector<int64_t>{})) k *= static_cast<double>(s);
  return k;
}

// The FLOPs of a matrix op's multiply-adds, without its bias.
double matrix_flops(Op op, const OpAttrs& a, std::span<const TensorType* const> in, double out, DimReader& r) {
  switch (op) {
    case Op::MatMul: return 2 * out * r.dim(in[0], -1);
    case Op::Gemm: return 2 * out * r.dim(in[0], a.get_int("transA") != 0 ? 0 : 1);
    case Op::Conv:  // per output: C/group * kernel multiply-adds
      return 2 * out * r.product(in[1], 1);
    case Op::ConvTranspose:  // per input element: its C_out/group * kernel contributions
      return 2 * r.elements(in[0]) * r.product(in[1], 1);
    default: return 0;
  }
}

// Einsum over its iteration space, the product of every distinct label's
// size and the ellipsis dims: a contraction (a label summed over) of two or
// more inputs is one multiply-add per point, as MatMul's 2*M*N*K is; one
// input summed over is one add per point; a product without a sum (an outer
// or elementwise product) is one multiply per point per extra input; a
// permutation or diagonal of one input moves data only.
double einsum_flops(const OpAttrs& a, std::span<const TensorType* const> in, DimReader& r) {
  auto eq = parse_einsum(a.get_string("equation"));
  std::vector<const Shape*> shapes;
  for (const TensorType* t : in) {
    if (t == nullptr || !t->shape.ranked()) {
      r.exact = false;
      return 0;
    }
    if (!t->shape.is_static()) r.exact = false;
    shapes.push_back(&t->shape);
  }
  std::expected<EinsumDims, std::string> dims = std::unexpected(std::string());
  if (eq) dims = einsum_dims(*eq, shapes);
  if (!dims) {
    r.exact = false;  // not a well-formed einsum
    return 0;
  }
  auto size = [](const Dim& d) { return d.is_static() ? static_cast<double>(d.size()) : 1.0; };
  double space = 1;
  for (const auto& [label, d] : dims->labels) space *= size(d);
  for (const Dim& d : dims->ellipsis) space *= size(d);
  bool contracts = !dims->summed.empty();
  double extra_inputs = static_cast<double>(in.size()) - 1;
  if (extra_inputs >= 1) return contracts ? 2 * space : extra_inputs * space;
  return contracts ? space : 0;
}

double flops(Op op, const OpAttrs& a, std::span<const TensorType* const> in, const TensorType& output, DimReader& r) {
  auto input = [&](size_t i) -> const TensorType* { return i < in.size() ? in[i] : nullptr; };
  double out = r.elements(&output);
  switch (op) {
    case Op::MaxPool:
    case Op::AveragePool: return out * kernel_elements(a);
    case Op::Softmax:
    case Op::LogSoftmax:
    case Op::LayerNormalization: return 5 * r.elements(input(0));
    case Op::GlobalAveragePool:
    case Op::GlobalMaxPool:
    case Op::Hardmax:
    case Op::ReduceSum:
    case Op::ReduceMean:
    case Op::ReduceMax:
    case Op::ReduceMin:
    case Op::ReduceProd:
    case Op::ReduceL1:
    case Op::ReduceL2:
    case Op::ReduceLogSum:
    case Op::ReduceLogSumExp:
    case Op::ReduceSumSquare:
    case Op::ArgMax:
    case Op::ArgMin:
    case Op::BatchNormalization:
    case Op::InstanceNormalization:
    case Op::LRN: return 2 * r.elements(input(0));
    case Op::Einsum: return einsum_flops(a, in, r);
    case Op::MsAttention: {
      // Its decomposition's count (rules/lib/fused.rules): the packed projection
      // and its bias, Q K^T, the scale, the attention bias, softmax (5 per
      // element, as Softmax) and the weighted sum of V.
      double tokens = r.dim(input(0), 0) * r.dim(input(0), 1);
      double seq = r.dim(input(0), 1);
      double packed = r.dim(input(1), 1);
      double hidden = packed / 3;
      double scores = tokens * seq * static_cast<double>(a.get_int("num_heads"));
      double projection = 2 * tokens * r.dim(input(1), 0) * packed + tokens * packed;
      return projection + 2 * tokens * seq * hidden * 2 + scores * (input(3) != nullptr ? 7 : 6);
    }
    case Op::Identity:
      return 0;  // a copy
    // NIR ops: the work of one time step. A synapse (a weight of an affine,
    // linear or convolution) is one multiply-add; a neuron counts the
    // arithmetic of its euler update and threshold (docs/spiking.md).
    case Op::Affine:
    case Op::Linear: return 2 * r.elements(input(1));
    case Op::NirConv1d:
    case Op::NirConv2d: return 2 * out * r.product(input(1), 1);
    case Op::SumPool2d:
    case Op::AvgPool2d: return out * kernel_elements(a);
    case Op::Scale:
    case Op::Threshold: return out;
    case Op::NirFlatten:
    case Op::Delay: return 0;
    case Op::Integrator: return 3 * out;  // v + dt (r I)
    case Op::IF: return 4 * out;          // and v > v_threshold
    case Op::LI: return 5 * out;          // v + k ((v_leak - v) + r I)
    case Op::LIF: return 6 * out;
    case Op::CubaLI: return 9 * out;  // i + k_syn (w_in I - i), then as LI
    case Op::CubaLIF: return 10 * out;
    default: return op_info(op).elementwise ? out : 0;  // layout and shape ops move data, no arithmetic
  }
}

}  // namespace

Work op_work(Op op, const Attributes& attrs, std::span<const TensorType* const> inputs, const TensorType& output) {
  Work w;
  for (const TensorType* t : inputs)
    if (t != nullptr) w.bytes_read += counted_bytes(*t);
  w.bytes_written = counted_bytes(output);
  if (op == Op::Opaque) {
    w.exact = false;  // unknown arithmetic
    return w;
  }
  DimReader r;
  OpAttrs a(op, attrs, inputs.empty() || inputs[0] == nullptr ? -1 : inputs[0]->shape.rank());
  if (op == Op::MatMul || op == Op::Gemm || op == Op::Conv || op == Op::ConvTranspose) {
    if (inputs.size() < 2 || inputs[0] == nullptr || inputs[1] == nullptr) {
      w.exact = false;  // not a well-formed matrix op
      return w;
    }
    double out = r.elements(&output);
    w.epilogue_flops = inputs.size() > 2 && inputs[2] != nullptr ? out : 0;
    w.flops = matrix_flops(op, a, inputs, out, r) + w.epilogue_flops;
  } else {
    w.flops = flops(op, a, inputs, output, r);
  }
  w.exact = r.exact;
  return w;
}

Work node_work(const Graph& g, const Node& n) {
  if (n.outputs.empty()) return Work{.exact = false};
  std::vector<const TensorType*> inputs;
  for (ValueId v : n.inputs) inputs.push_back(v == kNoValue ? nullptr : &g.value(v).type);
  Work w = op_work(n.op, n.attrs, inputs, g.value(n.outputs[0]).type);
  for (size_t i = 1; i < n.outputs.size(); ++i) w.bytes_written += counted_bytes(g.value(n.outputs[i]).type);
  return w;
}

}  // namespace refinery::ir
