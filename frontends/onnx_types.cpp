// TypeProto <-> ir::TensorType and AttributeProto <-> ir::AttrValue.
#include <fmt/format.h>

#include "frontends/onnx_internal.h"

namespace refinery::frontends::detail {

using AP = onnx::AttributeProto;

std::optional<ShapeError> shape_error(const onnx::TypeProto& type) {
  if (type.value_case() != onnx::TypeProto::kTensorType || !type.tensor_type().has_shape()) return std::nullopt;
  std::vector<int64_t> sizes;
  int axis = 0;
  for (const auto& d : type.tensor_type().shape().dim()) {
    if (d.has_dim_value() && d.dim_value() < 0)
      return ShapeError{fmt::format("has a negative dimension {} (axis {})", d.dim_value(), axis)};
    if (d.has_dim_value()) sizes.push_back(d.dim_value());
    ++axis;
  }
  if (auto count = element_count(sizes); !count) return count.error();
  return std::nullopt;
}

std::expected<ir::TensorType, std::string> type_from_proto(const onnx::TypeProto& type) {
  if (type.value_case() != onnx::TypeProto::kTensorType)
    return std::unexpected("is not a tensor (sequence, map, optional and sparse types are not supported)");
  const auto& t = type.tensor_type();
  auto dtype = ir::dtype_from_onnx(t.elem_type());
  if (!dtype)
    return std::unexpected(
        fmt::format("has element type {} ({}), which is not supported", t.elem_type(),
                    onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(t.elem_type()))));
  if (!t.has_shape()) return ir::TensorType{*dtype, ir::Shape::unranked()};
  if (auto bad = shape_error(type)) return std::unexpected(bad->message);
  std::vector<ir::Dim> dims;
  for (const auto& d : t.shape().dim()) {
    if (d.has_dim_value())
      dims.emplace_back(d.dim_value());
    else if (d.has_dim_param() && !d.dim_param().empty())
      dims.push_back(ir::Dim::symbol(d.dim_param()));
    else
      dims.emplace_back();
  }
  return ir::TensorType{*dtype, ir::Shape(std::move(dims))};
}

void type_to_proto(const ir::TensorType& type, onnx::TypeProto* proto) {
  auto* t = proto->mutable_tensor_type();
  t->set_elem_type(ir::dtype_to_onnx(type.dtype));
  if (!type.shape.ranked()) return;
  auto* shape = t->mutable_shape();
  for (const ir::Dim& d : type.shape.dims()) {
    auto* dim = shape->add_dim();
    if (d.is_static())
      dim->set_dim_value(d.size());
    else if (d.is_symbol())
      dim->set_dim_param(d.name());
  }
}

std::expected<std::optional<ir::AttrValue>, std::string> attr_from_proto(const AP& p,
                                                                         std::shared_ptr<const void> keep_alive,
                                                                         ExternalFiles& files) {
  if (!p.ref_attr_name().empty()) return std::nullopt;  // a function's attribute reference
  switch (p.type()) {
    case AP::INT: return ir::AttrValue(p.i());
    case AP::FLOAT: return ir::AttrValue(p.f());
    case AP::STRING: return ir::AttrValue(p.s());
    case AP::INTS: return ir::AttrValue(std::vector<int64_t>(p.ints().begin(), p.ints().end()));
    case AP::FLOATS: return ir::AttrValue(std::vector<float>(p.floats().begin(), p.floats().end()));
    case AP::STRINGS: return ir::AttrValue(std::vector<std::string>(p.strings().begin(), p.strings().end()));
    case AP::TENSOR: {
      // An element type Refinery does not model (a string tensor) keeps the
      // node opaque; a tensor that is wrong (bad external data, a claim past
      // the limits) is an error like an initializer's.
      if (!ir::dtype_from_onnx(p.t().data_type()) || p.t().has_segment()) return std::nullopt;
      auto t = tensor_from_proto(p.t(), std::move(keep_alive), files);
      if (!t) return std::unexpected(t.error());
      return ir::AttrValue(std::move(*t));
    }
    default: return std::nullopt;
  }
}

ir::OpaqueAttr opaque_attr(const AP& p) { return ir::OpaqueAttr{static_cast<int>(p.type()), p.SerializeAsString()}; }

std::expected<void, std::string> attr_to_proto(const std::string& name, const ir::AttrValue& value, AP* p,
                                               ExternalWriter* external) {
  struct Visitor {
    AP* p;
    ExternalWriter* external;
    std::expected<void, std::string> operator()(int64_t v) {
      p->set_type(AP::INT);
      p->set_i(v);
      return {};
    }
    std::expected<void, std::string> operator()(float v) {
      p->set_type(AP::FLOAT);
      p->set_f(v);
      return {};
    }
    std::expected<void, std::string> operator()(const std::string& v) {
      p->set_type(AP::STRING);
      p->set_s(v);
      return {};
    }
    std::expected<void, std::string> operator()(const std::vector<int64_t>& v) {
      p->set_type(AP::INTS);
      for (int64_t x : v) p->add_ints(x);
      return {};
    }
    std::expected<void, std::string> operator()(const std::vector<float>& v) {
      p->set_type(AP::FLOATS);
      for (float x : v) p->add_floats(x);
      return {};
    }
    std::expected<void, std::string> operator()(const std::vector<std::string>& v) {
      p->set_type(AP::STRINGS);
      for (const auto& x : v) p->add_strings(x);
      return {};
    }
    std::expected<void, std::string> operator()(const ir::TensorRef& t) {
      p->set_type(AP::TENSOR);
      if (!t) return std::unexpected("tensor attribute without a tensor");
      return tensor_to_proto(*t, p->mutable_t(), external);
    }
    std::expected<void, std::string> operator()(const ir::OpaqueAttr& a) {
      if (!parse_nested(a.bytes, p)) return std::unexpected("opaque attribute does not parse");
      return {};
    }
  };
  auto ok = std::visit(Visitor{p, external}, value);
  p->set_name(name);
  return ok;
}

}  // namespace refinery::frontends::detail
