// Internal to ir/: how op families register their OpInfo entries, plus the
// shape-rule helpers they share. Not a public header.
#pragma once
#include <fmt/format.h>
#include <array>
#include <optional>

#include "ir/op.h"

namespace refinery::ir::ops {

using Table = std::array<OpInfo, kNumOps>;

// Each family file defines one of these; op.cpp calls them all once.
void register_elementwise(Table& t);
void register_linear(Table& t);
void register_nn(Table& t);
void register_reduce(Table& t);
void register_layout(Table& t);
void register_shape_ops(Table& t);
void register_spiking(Table& t);
void register_contrib(Table& t);

// Sets the entry for `info.op`, filling name and ONNX name from ops.def.
void define(Table& t, OpInfo info);

// AttrSpec shorthands for the tables: an optional attribute and the value it
// takes when absent (ONNX's default).
inline AttrSpec int_attr(std::string_view name, int64_t fallback) {
  return {name, AttrKind::Int, AttrUse::Optional, {.rule = AttrDefault::Rule::Value, .value = fallback}};
}
inline AttrSpec float_attr(std::string_view name, float fallback) {
  return {name, AttrKind::Float, AttrUse::Optional, {.rule = AttrDefault::Rule::Value, .value = fallback}};
}
inline AttrSpec string_attr(std::string_view name, std::string_view fallback) {
  return {
      name, AttrKind::String, AttrUse::Optional, {.rule = AttrDefault::Rule::Value, .value = std::string(fallback)}};
}
// Ints that default to `value` once per spatial axis of input 0 (strides,
// dilations), or at both ends of each (pads); `leading_axes` come before
// the spatial ones (2 for ONNX's N, C; 1 for NIR's C).
inline AttrSpec ints_per_axis(std::string_view name, int64_t value, int leading_axes = 2) {
  return {name,
          AttrKind::Ints,
          AttrUse::Optional,
          {.rule = AttrDefault::Rule::PerAxis, .value = value, .leading_axes = leading_axes}};
}
inline AttrSpec ints_per_axis_ends(std::string_view name, int64_t value, int leading_axes = 2) {
  return {name,
          AttrKind::Ints,
          AttrUse::Optional,
          {.rule = AttrDefault::Rule::PerAxisEnds, .value = value, .leading_axes = leading_axes}};
}

using Result = std::expected<void, InferError>;
inline std::unexpected<InferError> error(std::string msg) { return std::unexpected(std::move(msg)); }

// Numpy-style multidirectional broadcast of two shapes.
std::expected<Shape, InferError> broadcast(const Shape& a, const Shape& b);
// A static size computed from attributes or constants (Tile's repeats, Pad's
// pads, ConvTranspose's strides), done in 128 bits so nothing overflows on
// the way. An error, naming `what`, when it is negative or past int64: no
// tensor has such a dim (bad input). Sizes past kMaxElements are refused
// after the rule, with the output's other dims (OpInfo::infer).
std::expected<Dim, InferError> size_dim(__int128 size, std::string_view what);

// Output 0 takes input 0's type (elementwise unary ops).
Result same_as_first(InferContext& c);
// Checks that inputs in [first, last) all have input `ref`'s dtype.
Result same_dtype(const InferContext& c, size_t ref, size_t first, size_t last);

}  // namespace refinery::ir::ops
