// Ops that compute on shapes and make constants: Shape, Size, Constant,
// ConstantOfShape, Range.
#include <algorithm>
#include <cmath>

#include "ir/ops/registry.h"

namespace refinery::ir::ops {
namespace {

Result shape(InferContext& c) {
  const Shape& x = c.shape(0);
  OpAttrs a = c.op_attrs();
  int64_t start = a.get_int("start"), end = a.get_int("end");
  if (start < 0) start += x.rank();
  if (end < 0) end += x.rank();
  start = std::clamp<int64_t>(start, 0, x.rank());
  end = std::clamp<int64_t>(end, start, x.rank());
  c.outputs[0] = TensorType{DType::i64, Shape({Dim(end - start)})};
  c.known[0] = std::vector<Dim>(x.dims().begin() + start, x.dims().begin() + end);
  return {};
}

Result size(InferContext& c) {
  c.outputs[0] = TensorType{DType::i64, Shape()};
  if (auto n = c.shape(0).num_elements()) c.known[0] = std::vector<Dim>{Dim(*n)};
  return {};
}

Result constant(InferContext& c) {
  const Attributes& a = *c.attrs;
  if (a.size() != 1) return error("constant takes exactly one value attribute");
  if (TensorRef t = a.get_tensor("value")) {
    c.outputs[0] = TensorType{t->dtype(), Shape::of(t->dims())};
    if (is_integer(t->dtype()) && t->dims().size() <= 1 && t->numel() <= 64) {
      std::vector<Dim> v;
      for (int64_t x : t->to_int_vector()) v.push_back(Dim::integer(x));
      c.known[0] = std::move(v);
    }
  } else if (a.has("value_float")) {
    c.outputs[0] = TensorType{DType::f32, Shape()};
  } else if (auto f = a.find("value_floats")) {
    c.outputs[0] = TensorType{DType::f32, Shape({Dim(static_cast<int64_t>(std::get<std::vector<float>>(*f).size()))})};
  } else if (a.has("value_int")) {
    c.outputs[0] = TensorType{DType::i64, Shape()};
    c.known[0] = std::vector<Dim>{Dim::integer(a.get_int("value_int", 0))};
  } else if (auto ints = a.maybe_ints("value_ints")) {
    c.outputs[0] = TensorType{DType::i64, Shape({Dim(static_cast<int64_t>(ints->size()))})};
    std::vector<Dim> v;
    for (int64_t x : *ints) v.push_back(Dim::integer(x));
    c.known[0] = std::move(v);
  } else {
    return error("constant has no supported value attribute");
  }
  return {};
}

Result constant_of_shape(InferContext& c) {
  TensorRef v = c.op_attrs().get_tensor("value");
  if (v == nullptr || v->numel() != 1) return error("value must hold one element");
  DType dt = v->dtype();
  if (c.shape(0).rank() != 1) return error("shape input must be 1-d");
  if (auto dims = c.dims_value(0)) {
    c.outputs[0] = TensorType{dt, Shape(*dims)};
    // Small integer contents are known: torch's expand(-1, ...) compares its
    // target with ConstantOfShape(Shape(target)) * -1.
    auto n = c.outputs[0].shape.num_elements();
    if (is_integer(dt) && dims->size() <= 1 && n && *n <= 64)
      c.known[0] = std::vector<Dim>(static_cast<size_t>(*n), Dim::integer(v->to_int_vector()[0]));
  } else {
    int64_t n = c.shape(0)[0].is_static() ? c.shape(0)[0].size() : 0;
    c.outputs[0] = TensorType{dt, Shape(std::vector<Dim>(static_cast<size_t>(n)))};
  }
  return {};
}

Result range(InferContext& c) {
  if (auto ok = same_dtype(c, 0, 1, 3); !ok) return ok;
  for (size_t i = 0; i < 3; ++i)
    if (c.shape(i).rank() != 0) return error("start, limit and delta must be scalars");
  // The count, in double: converted to a size only once it is known to fit.
  std::optional<double> count;
  if (c.inputs[0].constant && c.inputs[1].constant && c.inputs[2].constant) {
    double s = c.inputs[0].constant->as_double(0), l = c.inputs[1].constant->as_double(0),
           d = c.inputs[2].constant->as_double(0);
    if (d == 0) return error("delta must not be 0");
    count = std::ceil((l - s) / d);
  } else if (auto s = c.ints(0), l = c.ints(1), d = c.ints(2); s && l && d && is_integer(c.in(0).dtype)) {
    if ((*d)[0] == 0) return error("delta must not be 0");
    count = std::ceil((static_cast<double>((*l)[0]) - static_cast<double>((*s)[0])) / static_cast<double>((*d)[0]));
  }
  Dim n = Dim::unknown();
  // Range(0, s, 1) of a size s known as a symbol (a Shape's entry): s elements.
  if (!count && is_integer(c.in(0).dtype))
    if (auto s = c.ints(0), d = c.ints(2); s && d && (*s)[0] == 0 && (*d)[0] == 1)
      if (auto l = c.contents(1); l && l->size() == 1 && ((*l)[0].is_symbol() || (*l)[0].is_min())) n = (*l)[0];
  if (count) {
    if (std::isnan(*count)) return error("start, limit and delta give no element count (NaN)");
    if (*count > static_cast<double>(kMaxElements)) {
      c.limitation = !std::isinf(*count);
      return error(std::isinf(*count)
                       ? "start, limit and delta give infinitely many elements"
                       : fmt::format("output 0 has {} elements: more than 2^40 elements, Refinery's limit", *count));
    }
    n = Dim(std::max<int64_t>(0, static_cast<int64_t>(*count)));
  }
  c.outputs[0] = TensorType{c.in(0).dtype, Shape({n})};
  return {};
}

}  // namespace

void register_shape_ops(Table& t) {
  define(t, OpInfo{.op = Op::Shape,
                   .min_inputs = 1,
                   .max_inputs = 1,
                   .attrs = {{"end", AttrKind::Int, AttrUse::Optional, {.rule = AttrDefault::Rule::InputRank}},
                             int_attr("start", 0)},
                   .shape_rule = shape});
  define(t, OpInfo{.op = Op::Size, .min_inputs = 1, .max_inputs = 1, .shape_rule = size});
  define(t, OpInfo{.op = Op::Constant,
                   .min_inputs = 0,
                   .max_inputs = 0,
                   .attrs = {{"value", AttrKind::Tensor},
                             {"value_float", AttrKind::Float},
                             {"value_floats", AttrKind::Floats},
                             {"value_int", AttrKind::Int},
                             {"value_ints", AttrKind::Ints},
                             {"value_string", AttrKind::String},
                             {"value_strings", AttrKind::Strings}},
                   .shape_rule = constant});
  define(t, OpInfo{.op = Op::ConstantOfShape,
                   .min_inputs = 1,
                   .max_inputs = 1,
                   .attrs = {{"value",
                              AttrKind::Tensor,
                              AttrUse::Optional,
                              {.rule = AttrDefault::Rule::Value,
                               .value = std::make_shared<const Tensor>(
                                   Tensor::from_values<float>(DType::f32, {1}, {0.0f}))}}},
                   .shape_rule = constant_of_shape});
  define(t, OpInfo{.op = Op::Range, .min_inputs = 3, .max_inputs = 3, .shape_rule = range});
}

}  // namespace refinery::ir::ops
