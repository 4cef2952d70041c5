#include "egraph/tensor/channels.h"

#include <algorithm>

#include "ir/op.h"

namespace refinery::egraph::tensor {
namespace {

using ir::Op;

const TensorData& kid(const TensorEGraph& g, const TensorNode& n, size_t i) { return g[n.kids[i]].data; }

bool all_zero(const ir::Tensor& t) {
  if (t.dtype() == ir::DType::f32) {
    const float* p = static_cast<const float*>(t.data());
    return std::all_of(p, p + t.numel(), [](float v) { return v == 0; });
  }
  for (int64_t i = 0; i < t.numel(); ++i)
    if (t.as_double(i) != 0) return false;
  return true;
}

// Static channel count of a rank >= 2 type (axis 1), or -1.
int64_t channels_of(const ir::TensorType& t) {
  if (t.shape.rank() < 2 || !t.shape[1].is_static()) return -1;
  return t.shape[1].size();
}

// Every element of the class is independent of the inputs: a constant leaf,
// or every channel constant.
bool input_free(const TensorData& d) {
  if (d.constant || d.input_free) return true;
  return d.channels && std::all_of(d.channels->begin(), d.channels->end(), [](bool b) { return b; });
}

ChannelSet make_set(std::vector<bool> v) {
  if (std::none_of(v.begin(), v.end(), [](bool b) { return b; })) return nullptr;
  return std::make_shared<const std::vector<bool>>(std::move(v));
}

bool is_channelwise_unary(Op op) {
  switch (op) {
    case Op::Relu: case Op::Sigmoid: case Op::Tanh: case Op::LeakyRelu: case Op::HardSigmoid:
    case Op::HardSwish: case Op::ThresholdedRelu: case Op::Clip: case Op::Identity: case Op::Neg:
    case Op::Abs: case Op::Exp: case Op::Erf: case Op::Gelu: case Op::Softplus: case Op::Softsign: case Op::Elu:
    case Op::Selu: case Op::Celu: case Op::Dropout:
      return true;
    default:
      return false;
  }
}

// Whether slice i of a constant along its axis 0 is all 0 (a zero filter of a
// K x C x ... weight).
bool zero_slice(TensorContext& ctx, const ir::TensorRef& t, int64_t i) {
  if (t->dims().size() == 1) return t->as_double(i) == 0;
  const std::vector<bool>& pairs = ctx.zero_pairs(t);
  int64_t c = t->dims()[1];
  for (int64_t j = 0; j < c; ++j)
    if (!pairs[static_cast<size_t>(i * c + j)]) return false;
  return true;
}

}  // namespace

bool zero_fact(const TensorEGraph& g, const TensorNode& n) {
  if (n.op == kConstantOp) return all_zero(*g.analysis().context().constant(n.payload).tensor);
  if (n.is_leaf() || n.kids.empty()) return false;
  const NodeAttrs& na = g.analysis().context().attrs(n.payload);
  switch (n.ir_op()) {
    case Op::Reshape: case Op::Transpose: case Op::Squeeze: case Op::Unsqueeze: case Op::Flatten:
    case Op::Expand: case Op::Identity:
      return kid(g, n, 0).zero;
    case Op::ConstantOfShape: {
      // torch.zeros(b, s, s) at run-time dims: the value attribute (0 when absent)
      const ir::AttrValue* v = na.attrs.find("value");
      if (!v) return true;
      const ir::TensorRef* t = std::get_if<ir::TensorRef>(v);
      return t && *t && all_zero(**t);
    }
    case Op::Gather: {
      const TensorData& data = kid(g, n, 0);
      if (data.zero) return true;
      // the gathered slices of a constant along its axis 0 are zero filters
      const TensorData& idx = kid(g, n, 1);
      if (!data.constant || !idx.constant || ir::OpAttrs(Op::Gather, na.attrs).get_int("axis") != 0) return false;
      const ir::Tensor& t = *data.constant;
      if (t.dims().empty() || t.dims()[0] == 0) return false;
      int64_t k = t.dims()[0];
      for (int64_t i : idx.constant->to_int_vector()) {
        if (i < 0) i += k;
        if (i < 0 || i >= k || !zero_slice(g.analysis().context(), data.constant, i)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

bool input_free_fact(const TensorEGraph& g, const TensorNode& n, const TensorData& d) {
  if (input_free(d)) return true;
  if (n.is_leaf() || n.kids.empty()) return false;
  return std::all_of(n.kids.begin(), n.kids.end(), [&](Id k) { return input_free(g[k].data); });
}

ChannelSet channel_fact(const TensorEGraph& g, const TensorNode& n, const ir::TensorType& out) {
  int64_t c = channels_of(out);
  if (c <= 0 || n.is_leaf() || n.kids.empty()) return nullptr;
  const NodeAttrs& na = g.analysis().context().attrs(n.payload);
  if (na.output != 0 || !na.present.empty()) return nullptr;
  Op op = n.ir_op();
  const TensorData& x = kid(g, n, 0);
  auto same = [&]() -> ChannelSet { return x.channels && channels_of(x.type) == c ? x.channels : nullptr; };
  auto rest_input_free = [&]() {
    for (size_t i = 1; i < n.kids.size(); ++i)
      if (!input_free(kid(g, n, i))) return false;
    return true;
  };
  if (is_channelwise_unary(op)) return rest_input_free() ? same() : nullptr;
  // A node of input-free operands is input-free (a constant expression: a
  // LoRA adapter merged into its weight, W + s A B).
  if (input_free(x) && rest_input_free()) return make_set(std::vector<bool>(static_cast<size_t>(c), true));
  switch (op) {
    case Op::BatchNormalization:
    case Op::MaxPool: case Op::AveragePool: case Op::GlobalAveragePool: case Op::GlobalMaxPool:
      return rest_input_free() ? same() : nullptr;
    case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Max: case Op::Min: case Op::PRelu:
    case Op::Pow: {
      // The channels every operand leaves constant in the result (numpy
      // broadcasting): an input-free operand leaves all of them; one of the
      // result's rank and channel count its own set; one broadcast over the
      // channels (dim 1 there, or fewer dims) none, which ends it without
      // building a set (the common case: no constant channels anywhere).
      const std::vector<bool>* first = nullptr;
      std::vector<bool> s;
      for (size_t i = 0; i < n.kids.size(); ++i) {
        const TensorData& d = kid(g, n, i);
        if (input_free(d)) continue;
        if (!d.channels || d.type.shape.rank() != out.shape.rank() || channels_of(d.type) != c) return nullptr;
        if (!first) {
          first = d.channels.get();
        } else {
          if (s.empty()) s = *first;
          for (size_t k = 0; k < s.size(); ++k) s[k] = s[k] && (*d.channels)[k];
        }
      }
      if (!first) return make_set(std::vector<bool>(static_cast<size_t>(c), true));
      return s.empty() ? make_set(*first) : make_set(std::move(s));
    }
    case Op::Flatten: {
      // N x C x 1 x ... x 1 flattened at axis 1 keeps its channels
      ir::OpAttrs at(op, na.attrs, x.type.shape.rank());
      if (at.get_int("axis") != 1 || channels_of(x.type) != c) return nullptr;
      return same();
    }
    case Op::Gather: {
      const TensorData& idx = kid(g, n, 1);
      ir::OpAttrs at(op, na.attrs, x.type.shape.rank());
      if (!x.channels || !idx.constant || idx.constant->dims().size() != 1 || at.get_int("axis") != 1) return nullptr;
      int64_t cx = static_cast<int64_t>(x.channels->size());
      std::vector<bool> s;
      for (int64_t i : idx.constant->to_int_vector()) {
        if (i < 0) i += cx;
        if (i < 0 || i >= cx) return nullptr;
        s.push_back((*x.channels)[static_cast<size_t>(i)]);
      }
      return make_set(std::move(s));
    }
    case Op::Concat: {
      ir::OpAttrs at(op, na.attrs, x.type.shape.rank());
      if (at.get_int("axis") != 1 && at.get_int("axis") != 1 - out.shape.rank()) return nullptr;
      std::vector<bool> s;
      for (size_t i = 0; i < n.kids.size(); ++i) {
        const TensorData& d = kid(g, n, i);
        int64_t ci = channels_of(d.type);
        if (ci < 0) return nullptr;
        std::vector<bool> o = input_free(d) ? std::vector<bool>(static_cast<size_t>(ci), true)
                              : d.channels ? *d.channels
                                           : std::vector<bool>(static_cast<size_t>(ci), false);
        s.insert(s.end(), o.begin(), o.end());
      }
      return make_set(std::move(s));
    }
    case Op::Conv: {
      // Output channel k reads the input channels of its group; it is
      // constant when each of them is constant or k's filter is zero there.
      // So a depthwise one's channel is constant by its zero filter or by its
      // constant input (a selection of both kinds splits into two constant
      // expressions: gather-channels-depthwise-split); any other grouped one
      // counts its zero filters only, as no rule selects its channels.
      const TensorData& w = kid(g, n, 1);
      if (!w.constant || w.constant->dims().size() < 3 || (n.kids.size() > 2 && !input_free(kid(g, n, 2))))
        return nullptr;
      ir::OpAttrs at(op, na.attrs, x.type.shape.rank());
      int64_t k = w.constant->dims()[0], cpg = w.constant->dims()[1], groups = at.get_int("group");
      if (k != c || groups <= 0 || k % groups != 0) return nullptr;
      const std::vector<bool>& zero = g.analysis().context().zero_pairs(w.constant);
      int64_t kpg = k / groups;
      const bool by_input = groups == 1 || (cpg == 1 && kpg == 1);
      const std::vector<bool>* in =
          by_input && x.channels && channels_of(x.type) == groups * cpg ? x.channels.get() : nullptr;
      std::vector<bool> s(static_cast<size_t>(k), true);
      for (int64_t o = 0; o < k; ++o)
        for (int64_t j = 0; j < cpg && s[static_cast<size_t>(o)]; ++j) {
          int64_t ci = (o / kpg) * cpg + j;
          if (!(in && (*in)[static_cast<size_t>(ci)]) && !zero[static_cast<size_t>(o * cpg + j)])
            s[static_cast<size_t>(o)] = false;
        }
      return make_set(std::move(s));
    }
    default:
      return nullptr;
  }
}

}  // namespace refinery::egraph::tensor
