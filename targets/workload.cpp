#include "targets/workload.h"

#include <algorithm>
#include <set>

#include "ir/einsum.h"

namespace refinery::targets {

OpClass classify(ir::Op op) {
  using ir::Op;
  switch (op) {
    case Op::Reshape:
    case Op::Flatten:
    case Op::Squeeze:
    case Op::Unsqueeze:
    case Op::Identity:
    case Op::Dropout:
    case Op::Shape:
    case Op::Size:
    case Op::Constant: return OpClass::Free;
    case Op::MatMul:
    case Op::Gemm:
    case Op::Einsum:
    case Op::Conv:
    case Op::ConvTranspose: return OpClass::Matrix;
    case Op::Split:
    case Op::Slice: return OpClass::Split;
    // At inference a per-channel affine map, as its form after the rule
    // bn-as-affine (a Mul and an Add): runtimes fuse it like one.
    case Op::BatchNormalization: return OpClass::Elementwise;
    case Op::Transpose:
    case Op::Concat:
    case Op::Gather:
    case Op::GatherElements:
    case Op::Expand:
    case Op::Tile:
    case Op::Pad:
    case Op::DepthToSpace:
    case Op::SpaceToDepth:
    case Op::Trilu:
    case Op::ConstantOfShape:
    case Op::Range:
    case Op::TopK:
    case Op::CumSum: return OpClass::Movement;
    case Op::MaxPool:
    case Op::AveragePool:
    case Op::GlobalAveragePool:
    case Op::GlobalMaxPool:
    case Op::InstanceNormalization:
    case Op::LayerNormalization:
    case Op::LRN:
    case Op::Softmax:
    case Op::LogSoftmax:
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
    case Op::ArgMin: return OpClass::Reduction;
    case Op::Opaque: return OpClass::Opaque;
    default: break;
  }
  const ir::OpInfo& info = ir::op_info(op);
  if (info.elementwise || op == Op::Cast || op == Op::CastLike || op == Op::Clip || op == Op::Where)
    return OpClass::Elementwise;
  if (info.stateful) return OpClass::Opaque;
  return OpClass::Movement;
}

std::optional<std::vector<int64_t>> static_sizes(const ir::TensorType* t) {
  if (!t || !t->shape.ranked() || !t->shape.is_static()) return std::nullopt;
  return t->shape.sizes();
}

bool input_constant(const OpDesc& op, std::size_t i) { return i < op.input_constant.size() && op.input_constant[i]; }

bool conv_1x1(const OpDesc& op) {
  if (op.op != ir::Op::Conv || op.inputs.size() < 2 || !input_constant(op, 1)) return false;
  auto x = static_sizes(op.inputs[0]), w = static_sizes(op.inputs[1]);
  if (!x || !w || x->size() < 3 || w->size() != x->size()) return false;
  if (std::any_of(w->begin() + 2, w->end(), [](int64_t d) { return d != 1; })) return false;
  ir::OpAttrs a(op.op, op.attributes(), static_cast<int64_t>(x->size()));
  auto all = [](const std::vector<int64_t>& v, int64_t k) {
    return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e == k; });
  };
  return a.get_int("group") == 1 && all(a.get_ints("strides"), 1) && all(a.get_ints("dilations"), 1) &&
         all(a.get_ints("pads"), 0) && a.get_string("auto_pad") == "NOTSET";
}

bool matmul_is_conv_1x1(const OpDesc& op) {
  if (op.op != ir::Op::MatMul || op.inputs.size() != 2 || !input_constant(op, 0) || input_constant(op, 1)) return false;
  auto w = static_sizes(op.inputs[0]), x = static_sizes(op.inputs[1]);
  return w && x && w->size() == 2 && (x->size() == 2 || x->size() == 3) && (*w)[1] == (*x)[x->size() - 2];
}

std::string_view kernel_family(const OpDesc& op) {
  if (op.op == ir::Op::Conv || op.op == ir::Op::ConvTranspose || matmul_is_conv_1x1(op)) return "conv";
  switch (classify(op.op)) {
    case OpClass::Matrix: return "matmul";
    case OpClass::Reduction: return "reduction";
    case OpClass::Movement: return "movement";
    default: return "";
  }
}

double numel(const ir::TensorType& t) { return ir::counted_elements(t); }
double bytes(const ir::TensorType& t) { return ir::counted_bytes(t); }

namespace {

ir::OpAttrs attrs(const OpDesc& op) {
  const ir::TensorType* x = op.inputs.empty() ? nullptr : op.inputs[0];
  return ir::OpAttrs(op.op, op.attributes(), x && x->shape.ranked() ? x->shape.rank() : -1);
}

ir::Work work(const OpDesc& op) {
  static const ir::TensorType kNoOutput{ir::DType::f32, ir::Shape({ir::Dim(0)})};
  return ir::op_work(op.op, op.attributes(), op.inputs, op.output ? *op.output : kNoOutput);
}

// What one element of an elementwise op costs against an add on these
// targets: transcendental functions take a sequence of instructions, a
// division or square root several cycles. A price, not more arithmetic:
// ir::op_work counts each as one FLOP.
double element_cost(ir::Op op) {
  switch (op) {
    case ir::Op::Exp:
    case ir::Op::Log:
    case ir::Op::Erf:
    case ir::Op::Gelu:
    case ir::Op::Tanh:
    case ir::Op::Sigmoid:
    case ir::Op::Pow:
    case ir::Op::Sin:
    case ir::Op::Cos:
    case ir::Op::Softplus: return 8;
    case ir::Op::Div:
    case ir::Op::Sqrt:
    case ir::Op::Reciprocal: return 4;
    default: return 1;
  }
}

double dim(const ir::Shape& s, int64_t i) {
  if (i < 0) i += s.rank();
  if (i < 0 || i >= s.rank()) return 1;
  return s[i].is_static() ? static_cast<double>(s[i].size()) : 1.0;
}

}  // namespace

bool einsum_is_matmul(const OpDesc& op) {
  if (op.op != ir::Op::Einsum || op.inputs.size() != 2 || !op.inputs[0] || !op.inputs[1]) return false;
  auto eq = ir::parse_einsum(op.attributes().get_string("equation", ""));
  if (!eq || eq->inputs.size() != 2) return false;
  const std::string &a = eq->inputs[0].labels, &b = eq->inputs[1].labels, &y = eq->output.labels;
  for (const ir::EinsumTerm* t : {&eq->inputs[0], &eq->inputs[1], &eq->output})
    if (t->ellipsis > 0 || std::set<char>(t->labels.begin(), t->labels.end()).size() != t->labels.size()) return false;
  const bool ellipsis = eq->inputs[0].has_ellipsis() || eq->inputs[1].has_ellipsis();
  if (eq->output.has_ellipsis() != ellipsis || a.size() < 2 || b.size() < 2) return false;
  const char m = a[a.size() - 2], k = a.back(), n = b.back();
  if (b[b.size() - 2] != k || m == n) return false;
  const std::string pa = a.substr(0, a.size() - 2), pb = b.substr(0, b.size() - 2);
  const std::string& longer = pa.size() >= pb.size() ? pa : pb;
  const std::string& shorter = pa.size() >= pb.size() ? pb : pa;
  return longer.ends_with(shorter) && y == longer + m + n;
}

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
      bool ta = attrs(op).get_int("transA") != 0, tb = attrs(op).get_int("transB") != 0;
      g.m = dim(a, ta ? 1 : 0);
      g.k = dim(a, ta ? 0 : 1);
      g.n = dim(b, tb ? 0 : 1);
      return g;
    }
    case ir::Op::Einsum: {
      // The MatMul it is, as that MatMul (its batch dims as the MatMul's).
      if (einsum_is_matmul(op)) {
        OpDesc matmul = op;
        matmul.op = ir::Op::MatMul;
        matmul.attrs = nullptr;
        return gemm_shape(matmul);
      }
      // Output labels in both operands (and the ellipsis) are the batch,
      // those of operand 0 alone M, the others N; the summed labels are K.
      auto eq = ir::parse_einsum(attrs(op).get_string("equation"));
      std::vector<const ir::Shape*> shapes;
      for (const ir::TensorType* t : op.inputs) {
        if (!t || !t->shape.ranked()) return std::nullopt;
        shapes.push_back(&t->shape);
      }
      if (!eq) return std::nullopt;
      auto d = ir::einsum_dims(*eq, shapes);
      if (!d) return std::nullopt;
      auto size = [](const ir::Dim& x) { return x.is_static() ? static_cast<double>(x.size()) : 1.0; };
      g.m = g.n = g.k = g.batch = 1;
      for (const ir::Dim& x : d->ellipsis) g.batch *= size(x);
      for (char c : eq->output.labels) {
        bool in0 = eq->inputs[0].labels.find(c) != std::string::npos;
        bool in1 = eq->inputs.size() > 1 && eq->inputs[1].labels.find(c) != std::string::npos;
        (in0 && in1 ? g.batch : in0 ? g.m : g.n) *= size(d->labels.at(c));
      }
      for (char c : d->summed) g.k *= size(d->labels.at(c));
      return g;
    }
    case ir::Op::Conv: {
      // Implicit GEMM per group: [N*OH*OW, C/g*KH*KW] x [C/g*KH*KW, M/g].
      double groups = static_cast<double>(attrs(op).get_int("group"));
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
      double groups = static_cast<double>(attrs(op).get_int("group"));
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
    default: return std::nullopt;
  }
}

// A matrix op's bias add is its GEMM epilogue, which these models take as
// free, as they take an Add fused into a MatMul (a Gemm with C and MatMul +
// Add are the same work, ARCHITECTURE.md decision 11).
double flops(const OpDesc& op) {
  ir::Work w = work(op);
  return (w.flops - w.epilogue_flops) * element_cost(op.op);
}

double input_bytes(const OpDesc& op) { return work(op).bytes_read; }

// What ONNX Runtime's graph optimizer (level 'all', CPU) folds into the
// op that computes this op's input, so that it costs nothing of its own:
// an activation after a Conv or Gemm (ConvActivationFusion,
// GemmActivationFusion), a BatchNorm, a per-channel constant Add or Mul
// (or a scalar Mul), or a computed same-shape residual Add after a Conv
// (ConvBNFusion, ConvAddFusion, ConvMulFusion, the NCHWc Conv's Sum
// input), a bias Add after a 2-D MatMul (MatMulAddFusion to Gemm), a scalar
// Mul or Div after a MatMul (MatMulScaleFusion).
bool ort_cpu_fused_epilogue(const OpDesc& op) {
  using ir::Op;
  auto scalar_constant = [&](std::size_t i) {
    return i < op.inputs.size() && op.inputs[i] && i < op.input_constant.size() && op.input_constant[i] &&
           numel(*op.inputs[i]) == 1;
  };
  auto constant = [&](std::size_t i) {
    return i < op.inputs.size() && op.inputs[i] && i < op.input_constant.size() && op.input_constant[i];
  };
  // ConvAddFusion and ConvMulFusion take a constant of shape [1, C, 1, 1]
  // or [C, 1, 1] (for a 2-D Conv; C its output channels), ConvMulFusion
  // also a rank-0 scalar, and neither when the Add or Mul's result is a
  // graph output; any other constant, a [1, C, H, W] one included, stays a
  // kernel of its own (docs/targets.md).
  auto per_channel = [&](std::size_t i) {
    if (!constant(i) || op.graph_output || !op.output || !op.inputs[i]->shape.ranked() ||
        !op.output->shape.ranked())
      return false;
    const ir::Shape& c = op.inputs[i]->shape;
    const ir::Shape& y = op.output->shape;
    if (y.rank() < 3 || (c.rank() != y.rank() && c.rank() != y.rank() - 1)) return false;
    int64_t axis = c.rank() == y.rank() ? 1 : 0;
    for (int64_t d = 0; d < c.rank(); ++d)
      if (dim(c, d) != (d == axis ? dim(y, 1) : 1.0)) return false;
    return true;
  };
  auto rank0 = [&](std::size_t i) {
    return constant(i) && !op.graph_output && op.inputs[i]->shape.ranked() && op.inputs[i]->shape.rank() == 0;
  };
  Op p0 = op.producer(0);
  switch (op.op) {
    case Op::Relu:
    case Op::Clip:
    case Op::LeakyRelu:
    case Op::Sigmoid:
    case Op::Tanh:
    case Op::HardSigmoid: return p0 == Op::Conv || p0 == Op::Gemm;
    case Op::BatchNormalization: return p0 == Op::Conv;
    case Op::Add:
    case Op::Mul:
    case Op::Div:
      for (std::size_t i : {0, 1}) {
        Op p = op.producer(i);
        std::size_t other = 1 - i;
        if (p == Op::Conv && ((op.op != Op::Div && per_channel(other)) || (op.op == Op::Mul && rank0(other)) ||
                              (op.op == Op::Add && !constant(other) && op.inputs[other] && op.output &&
                               *op.inputs[other] == *op.output)))
          return true;
        if (p == Op::MatMul && op.op != Op::Add && scalar_constant(other)) return op.op == Op::Mul || i == 0;
        if (p == Op::MatMul && op.op == Op::Add && constant(other) && op.output && op.output->shape.rank() == 2)
          return true;
      }
      return false;
    default: return false;
  }
}


bool attention_parts(const OpDesc& op, AttentionParts& out) {
  using ir::Dim;
  using ir::Op;
  if (op.inputs.size() < 2 || !op.inputs[0] || !op.inputs[1]) return false;
  const ir::TensorType &x = *op.inputs[0], &w = *op.inputs[1];
  if (!x.shape.ranked() || x.shape.rank() != 3 || !w.shape.ranked() || w.shape.rank() != 2 || !w.shape[1].is_static())
    return false;
  int64_t heads = ir::OpAttrs(Op::MsAttention, op.attributes(), 3).get_int("num_heads");
  int64_t hidden = w.shape[1].size() / 3;
  if (heads < 1 || hidden < heads) return false;
  Dim b = x.shape[0], s = x.shape[1];
  const int64_t head = hidden / heads;
  auto type = [&](std::vector<Dim> dims) { return ir::TensorType{x.dtype, ir::Shape(std::move(dims))}; };
  auto& [packed, q, kt, scores] = out.types;
  packed = type({b, s, w.shape[1]});
  q = type({b, Dim(heads), s, Dim(head)});
  kt = type({b, Dim(heads), Dim(head), s});
  scores = type({b, Dim(heads), s, s});
  auto part = [](Op o, std::vector<const ir::TensorType*> in, const ir::TensorType* result) {
    OpDesc d;
    d.op = o;
    d.inputs = std::move(in);
    d.input_constant.assign(d.inputs.size(), false);
    d.output = result;
    return d;
  };
  out.parts = {part(Op::MatMul, {&x, &w}, &packed), part(Op::MatMul, {&q, &kt}, &scores),
               part(Op::Softmax, {&scores}, &scores), part(Op::MatMul, {&scores, &q}, &q)};
  out.parts[0].input_constant = {op.input_constant.size() > 0 && op.input_constant[0],
                                 op.input_constant.size() > 1 && op.input_constant[1]};
  return true;
}

double attention_cost(const OpDesc& op, double dispatch_s, const std::function<double(const OpDesc&)>& price) {
  AttentionParts a;
  if (!attention_parts(op, a)) return dispatch_s;
  double parts = 0;
  for (const OpDesc& p : a.parts) parts += price(p);
  return std::max(dispatch_s, parts - static_cast<double>(a.parts.size() - 1) * dispatch_s);
}

}  // namespace refinery::targets
