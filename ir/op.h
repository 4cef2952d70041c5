// The operator table: every op declared once (ARCHITECTURE.md, decision 2).
// The text parser and printer, the ONNX mapping, shape inference, the
// interpreter's dispatch (runtime/) and later the Z3 semantics all key off
// `Op` and its OpInfo. The list of ops is ir/ops.def; each family file in
// ir/ops/ registers the OpInfo of its ops.
#pragma once
#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attribute.h"
#include "ir/shape.h"

namespace refinery::ir {

enum class Op : uint16_t {
#define OP(e, name, onnx) e,
#include "ir/ops.def"
#undef OP
  Opaque,  // an op Refinery does not know: kept with its domain, type and attributes
};
inline constexpr int kNumOps = static_cast<int>(Op::Opaque) + 1;

// What a shape rule knows about one input.
struct InferInput {
  const TensorType* type = nullptr;        // nullptr: an optional input that is absent
  const Tensor* constant = nullptr;        // its value, when it is a constant
  const std::vector<Dim>* known = nullptr; // its contents, when it is a small integer
                                           // tensor whose entries are known as dims
                                           // (ONNX "data propagation": Shape -> Gather -> Concat)
};

// The context a shape rule reads and writes.
struct InferContext {
  std::span<const InferInput> inputs;
  const Attributes* attrs = nullptr;
  int num_outputs = 1;
  std::vector<TensorType> outputs;                      // to fill, one per output
  std::vector<std::optional<std::vector<Dim>>> known;   // optional propagated contents

  bool has_input(size_t i) const { return i < inputs.size() && inputs[i].type != nullptr; }
  const TensorType& in(size_t i) const { return *inputs[i].type; }
  const Shape& shape(size_t i) const { return inputs[i].type->shape; }
  // The integer contents of input i, from a constant or propagated values.
  std::optional<std::vector<int64_t>> ints(size_t i) const;
  std::optional<std::vector<Dim>> dims_value(size_t i) const;  // contents as dims
};

using InferError = std::string;
using InferFn = std::expected<void, InferError> (*)(InferContext&);

enum class AttrUse : uint8_t { Optional, Required };

struct AttrSpec {
  std::string_view name;
  AttrKind kind;
  AttrUse use = AttrUse::Optional;
};

struct OpInfo {
  Op op = Op::Opaque;
  std::string_view name;       // IR name: "relu"
  std::string_view onnx_name;  // ONNX op_type: "Relu"
  int min_inputs = 0;
  int max_inputs = 0;          // -1: variadic
  int min_outputs = 1;
  int max_outputs = 1;         // -1: variadic
  std::vector<AttrSpec> attrs;
  InferFn infer = nullptr;
  bool stateful = false;       // carries state across time steps (spiking ops)
  bool elementwise = false;    // maps elements one to one with broadcasting
  bool commutative = false;    // binary op with f(a, b) == f(b, a)
};

const OpInfo& op_info(Op op);
std::string_view op_name(Op op);
std::optional<Op> op_from_name(std::string_view ir_name);
// Maps an ONNX (domain, op_type) to an op; nullopt means opaque.
std::optional<Op> op_from_onnx(std::string_view domain, std::string_view op_type);

// Checks that every op of ops.def has a registered entry (used by tests).
std::vector<std::string> op_table_problems();

}  // namespace refinery::ir
