// Reductions, arg-reductions, CumSum and TopK.
#include <algorithm>

#include "ir/ops/registry.h"

namespace refinery::ir::ops {
namespace {

// Opset 13-17: ReduceSum takes axes as input 1; the others as an attribute.
Result reduce(InferContext& c) {
  const Shape& x = c.shape(0);
  OpAttrs at = c.op_attrs();
  std::optional<std::vector<int64_t>> axes = at.maybe_ints("axes");
  if (c.has_input(1)) {
    axes = c.ints(1);
    if (!axes) {                          // axes not known: the rank is, when keepdims
      if (at.get_int("keepdims") == 0) {  // the rank follows from the number of axes
        const Shape& a = c.shape(1);
        if (a.rank() != 1 || !a[0].is_static() || a[0].size() > x.rank())
          return error("axes must be constant or of known length when keepdims = 0");
        if (a[0].size() == 0 && at.get_int("noop_with_empty_axes") != 0) return same_as_first(c);
        int64_t rank = a[0].size() == 0 ? 0 : x.rank() - a[0].size();
        c.outputs[0] = TensorType{c.in(0).dtype, Shape(std::vector<Dim>(static_cast<size_t>(rank)))};
        return {};
      }
      std::vector<Dim> out(static_cast<size_t>(x.rank()), Dim::unknown());
      c.outputs[0] = TensorType{c.in(0).dtype, Shape(std::move(out))};
      return {};
    }
  }
  bool keep = at.get_int("keepdims") != 0;
  bool noop = at.get_int("noop_with_empty_axes") != 0;
  std::vector<bool> reduced(static_cast<size_t>(x.rank()), false);
  if (!axes || axes->empty()) {
    if (noop) return same_as_first(c);
    std::fill(reduced.begin(), reduced.end(), true);
  } else {
    for (int64_t a : *axes) {
      auto n = normalize_axis(a, x.rank());
      if (!n) return error(fmt::format("axis {} out of range for rank {}", a, x.rank()));
      reduced[static_cast<size_t>(*n)] = true;
    }
  }
  std::vector<Dim> out;
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (!reduced[static_cast<size_t>(i)])
      out.push_back(x[i]);
    else if (keep)
      out.emplace_back(1);
  }
  c.outputs[0] = TensorType{c.in(0).dtype, Shape(std::move(out))};
  return {};
}

Result arg_reduce(InferContext& c) {
  const Shape& x = c.shape(0);
  OpAttrs a = c.op_attrs();
  auto axis = normalize_axis(a.get_int("axis"), x.rank());
  if (!axis) return error("axis out of range");
  std::vector<Dim> out;
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (i != *axis)
      out.push_back(x[i]);
    else if (a.get_int("keepdims") != 0)
      out.emplace_back(1);
  }
  c.outputs[0] = TensorType{DType::i64, Shape(std::move(out))};
  return {};
}

Result cumsum(InferContext& c) {
  if (c.shape(1).rank() > 1) return error("axis must be a scalar");
  if (auto axis = c.ints(1); axis && axis->size() == 1 && !normalize_axis((*axis)[0], c.shape(0).rank()))
    return error(fmt::format("axis {} out of range for rank {}", (*axis)[0], c.shape(0).rank()));
  return same_as_first(c);
}

Result topk(InferContext& c) {
  const Shape& x = c.shape(0);
  auto axis = normalize_axis(c.op_attrs().get_int("axis"), x.rank());
  if (!axis) return error("axis out of range");
  Shape out = x;
  auto k = c.ints(1);
  out[*axis] = k && k->size() == 1 ? Dim((*k)[0]) : Dim::unknown();
  c.outputs[0] = TensorType{c.in(0).dtype, out};
  c.outputs[1] = TensorType{DType::i64, out};
  return {};
}

}  // namespace

void register_reduce(Table& t) {
  // absent axes: all of them (or none, with noop_with_empty_axes)
  const std::vector<AttrSpec> attrs{
      {"axes", AttrKind::Ints}, int_attr("keepdims", 1), int_attr("noop_with_empty_axes", 0)};
  for (Op op : {Op::ReduceMean, Op::ReduceMax, Op::ReduceMin, Op::ReduceProd, Op::ReduceL1, Op::ReduceL2,
                Op::ReduceLogSum, Op::ReduceLogSumExp, Op::ReduceSumSquare})
    define(t, OpInfo{.op = op, .min_inputs = 1, .max_inputs = 1, .attrs = attrs, .shape_rule = reduce});
  define(t, OpInfo{.op = Op::ReduceSum,
                   .min_inputs = 1,
                   .max_inputs = 2,
                   .attrs = {int_attr("keepdims", 1), int_attr("noop_with_empty_axes", 0)},
                   .int_inputs = {1},
                   .shape_rule = reduce});
  for (Op op : {Op::ArgMax, Op::ArgMin})
    define(t, OpInfo{.op = op,
                     .min_inputs = 1,
                     .max_inputs = 1,
                     .attrs = {int_attr("axis", 0), int_attr("keepdims", 1), int_attr("select_last_index", 0)},
                     .shape_rule = arg_reduce});
  define(t, OpInfo{.op = Op::CumSum,
                   .min_inputs = 2,
                   .max_inputs = 2,
                   .attrs = {int_attr("exclusive", 0), int_attr("reverse", 0)},
                   .int_inputs = {1},
                   .shape_rule = cumsum});
  define(t, OpInfo{.op = Op::TopK,
                   .min_inputs = 2,
                   .max_inputs = 2,
                   .min_outputs = 2,
                   .max_outputs = 2,
                   .attrs = {int_attr("axis", -1), int_attr("largest", 1), int_attr("sorted", 1)},
                   .int_inputs = {1},
                   .shape_rule = topk});
}

}  // namespace refinery::ir::ops
