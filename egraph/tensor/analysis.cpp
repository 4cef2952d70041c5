#include "egraph/tensor/analysis.h"

#include <fmt/format.h>

#include "egraph/tensor/channels.h"

namespace refinery::egraph::tensor {

namespace {

std::optional<std::vector<ir::Dim>> small_int_contents(const ir::Tensor& t) {
  if (!ir::is_integer(t.dtype()) || t.dims().size() > 1 || t.numel() > 64) return std::nullopt;
  std::vector<ir::Dim> v;
  for (int64_t x : t.to_int_vector()) v.push_back(ir::Dim::integer(x));
  return v;
}

}  // namespace

std::expected<TensorData, std::string> TensorAnalysis::infer(const TensorEGraph& g, const TensorNode& node) const {
  auto d = infer_type(g, node);
  if (d) {
    d->zero = zero_fact(g, node);
    d->channels = channel_fact(g, node, d->type);
    d->input_free = input_free_fact(g, node, *d);
  }
  return d;
}

std::expected<TensorData, std::string> TensorAnalysis::infer_type(const TensorEGraph& g,
                                                                  const TensorNode& node) const {
  if (node.op == kInputOp) return TensorData{ctx_->input(node.payload).type, std::nullopt, nullptr, false, nullptr};
  if (node.op == kConstantOp) {
    const ir::TensorRef& t = ctx_->constant(node.payload).tensor;
    return TensorData{ir::TensorType{t->dtype(), ir::Shape::of(t->dims())}, small_int_contents(*t), t, false, nullptr};
  }
  const NodeAttrs& na = ctx_->attrs(node.payload);
  if (na.declared) return TensorData{*na.declared, std::nullopt, nullptr, false, nullptr};
  ir::Op op = node.ir_op();
  if (op == ir::Op::Opaque) return std::unexpected(std::string("an opaque node needs a declared type"));

  // Children fill the present input positions in order.
  size_t positions = na.present.empty() ? node.kids.size() : na.present.size();
  std::vector<ir::InferInput> ins(positions);
  size_t k = 0;
  for (size_t i = 0; i < positions; ++i) {
    if (!na.present.empty() && !na.present[i]) continue;
    if (k >= node.kids.size()) return std::unexpected(std::string("fewer children than present inputs"));
    const TensorData& d = g[node.kids[k++]].data;
    ins[i].type = &d.type;
    ins[i].constant = d.constant.get();
    if (d.known) ins[i].known = &*d.known;
  }
  const ir::OpInfo& info = ir::op_info(op);
  int n = static_cast<int>(positions);
  if (n < info.min_inputs || (info.max_inputs >= 0 && n > info.max_inputs))
    return std::unexpected(
        fmt::format("{} takes {}..{} inputs, got {}", info.name, info.min_inputs, info.max_inputs, n));
  ir::InferContext ctx;
  ctx.op = op;
  ctx.inputs = ins;
  ctx.attrs = &na.attrs;
  ctx.num_outputs = na.num_outputs;
  ctx.outputs.resize(na.num_outputs);
  ctx.known.resize(na.num_outputs);
  if (auto ok = info.infer(ctx); !ok) return std::unexpected(ok.error());
  return TensorData{std::move(ctx.outputs[na.output]), std::move(ctx.known[na.output]), nullptr, false, nullptr};
}

TensorData TensorAnalysis::make(const TensorEGraph& g, const TensorNode& node) const {
  auto d = infer(g, node);
  if (!d) throw TypeMismatch(fmt::format("e-node {} does not type-check: {}", node.op_string(), d.error()));
  return std::move(*d);
}

// Two classes that are one value describe one tensor: the merged type is
// the more precise of the two (ir::refine: "seq" over ?, 16 over "seq"), so
// a rule whose right side knows less cannot lose a symbolic dim.
DidMerge TensorAnalysis::merge(Data& a, Data&& b) const {
  auto type = ir::refine(a.type, b.type);
  if (!type) throw TypeMismatch(fmt::format("union of e-classes with different types: {}", type.error()));
  TensorData m{std::move(*type), a.known ? a.known : b.known, a.constant ? a.constant : b.constant,
               a.zero || b.zero, a.channels ? a.channels : b.channels, a.input_free || b.input_free};
  // One value: a channel constant by either class's nodes is constant.
  if (a.channels && b.channels && a.channels->size() == b.channels->size() && *a.channels != *b.channels) {
    std::vector<bool> u(a.channels->size());
    for (size_t i = 0; i < u.size(); ++i) u[i] = (*a.channels)[i] || (*b.channels)[i];
    m.channels = std::make_shared<const std::vector<bool>>(std::move(u));
  }
  if (a.known && b.known && a.known->size() == b.known->size())
    for (size_t i = 0; i < m.known->size(); ++i)
      if (auto d = ir::refine((*a.known)[i], (*b.known)[i])) (*m.known)[i] = std::move(*d);
  DidMerge did{.a_changed = !(m == a), .b_changed = !(m == b)};
  a = std::move(m);
  return did;
}

}  // namespace refinery::egraph::tensor
