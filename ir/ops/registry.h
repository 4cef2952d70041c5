// Internal to ir/: how op families register their OpInfo entries, plus the
// shape-rule helpers they share. Not a public header.
#pragma once
#include <array>
#include <fmt/format.h>

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

// Sets the entry for `info.op`, filling name and ONNX name from ops.def.
void define(Table& t, OpInfo info);

using Result = std::expected<void, InferError>;
inline std::unexpected<InferError> error(std::string msg) { return std::unexpected(std::move(msg)); }

// Numpy-style multidirectional broadcast of two shapes.
std::expected<Shape, InferError> broadcast(const Shape& a, const Shape& b);
// Output 0 takes input 0's type (elementwise unary ops).
Result same_as_first(InferContext& c);
// Checks that inputs in [first, last) all have input `ref`'s dtype.
Result same_dtype(const InferContext& c, size_t ref, size_t first, size_t last);

}  // namespace refinery::ir::ops
