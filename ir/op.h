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
#define OP_IN(e, name, domain, onnx) e,
#include "ir/ops.def"
#undef OP_IN
#undef OP
  Opaque,  // an op Refinery does not know: kept with its domain, type and attributes
};
inline constexpr int kNumOps = static_cast<int>(Op::Opaque) + 1;

// What a shape rule knows about one input.
struct InferInput {
  const TensorType* type = nullptr;         // nullptr: an optional input that is absent
  const Tensor* constant = nullptr;         // its value, when it is a constant
  const std::vector<Dim>* known = nullptr;  // its contents, when it is a small integer (or bool)
                                            // tensor whose entries are known as dims or
                                            // negative integers (Dim::integer; ONNX "data
                                            // propagation": Shape -> Gather -> Concat)
};

class OpAttrs;

// The context a shape rule reads and writes.
struct InferContext {
  Op op = Op::Opaque;
  std::span<const InferInput> inputs;
  const Attributes* attrs = nullptr;
  int num_outputs = 1;
  std::vector<TensorType> outputs;                     // to fill, one per output
  std::vector<std::optional<std::vector<Dim>>> known;  // optional propagated contents
  // Set by OpInfo::infer with its error when an output is valid but past
  // kMaxElements: Refinery's limit (Diag::limitation), not a bad input.
  bool limitation = false;

  bool has_input(size_t i) const { return i < inputs.size() && inputs[i].type != nullptr; }
  const TensorType& in(size_t i) const { return *inputs[i].type; }
  const Shape& shape(size_t i) const { return inputs[i].type->shape; }
  // The integer contents of input i, from a constant or propagated values.
  std::optional<std::vector<int64_t>> ints(size_t i) const;
  // Its contents entry by entry (a negative integer as it is, Dim::integer),
  // from propagated values or a small integer constant.
  std::optional<std::vector<Dim>> contents(size_t i) const;
  // Its contents as the dims of a shape: a negative entry reads as unknown.
  std::optional<std::vector<Dim>> dims_value(size_t i) const;
  // The node's attributes, defaults filled in from the op table.
  OpAttrs op_attrs() const;
};

using InferError = std::string;
using InferFn = std::expected<void, InferError> (*)(InferContext&);

enum class AttrUse : uint8_t { Optional, Required };

// The value an absent attribute takes: ONNX's default, stated once here and
// read through OpAttrs by the shape rules, the interpreter, the rules and
// the cost count. Most defaults are one value; window attributes repeat an
// int over the spatial axes of input 0, and a few follow input 0's rank or
// another attribute.
struct AttrDefault {
  enum class Rule : uint8_t {
    None,          // no default: required, or absence means something of its own (Reduce's axes)
    Value,         // `value`
    PerAxis,       // the int `value` once per spatial axis (strides, dilations)
    PerAxisEnds,   // the int `value` at both ends of each spatial axis, begins then ends (pads)
    ReversedAxes,  // input 0's axes in reverse order (Transpose's perm)
    InputRank,     // input 0's rank (Shape's end)
    SameAs,        // the value of attribute `other` (NIR pools: strides = kernel_shape)
  };
  Rule rule = Rule::None;
  AttrValue value;
  int leading_axes = 2;    // PerAxis, PerAxisEnds: input 0's axes before the spatial ones (N, C)
  std::string_view other;  // SameAs

  // Its value for an op whose input 0 has rank `input_rank` (-1: unknown)
  // and these attributes; nullopt when that is not enough to say.
  std::optional<AttrValue> resolve(int64_t input_rank, const Attributes* attrs) const;
};

struct AttrSpec {
  std::string_view name;
  AttrKind kind;
  AttrUse use = AttrUse::Optional;
  AttrDefault fallback = {};  // when the attribute is absent
};

struct OpInfo {
  Op op = Op::Opaque;
  std::string_view name;       // IR name: "relu"
  std::string_view onnx_name;  // ONNX op_type: "Relu"
  std::string_view onnx_domain;  // "" (the default domain), or "com.microsoft" (ONNX Runtime's contrib ops)
  int min_inputs = 0;
  int max_inputs = 0;  // -1: variadic
  int min_outputs = 1;
  int max_outputs = 1;  // -1: variadic
  std::vector<AttrSpec> attrs;
  std::vector<int> int_inputs;   // inputs that take an integer constant (shapes, axes, pads, sizes)
  // Where each input sits among the ONNX node's inputs, when that differs
  // (a contrib op's form that leaves optional ONNX inputs out); empty: the same.
  std::vector<int> onnx_inputs;
  InferFn shape_rule = nullptr;  // read it through infer()
  bool stateful = false;         // carries state across time steps (spiking ops)
  bool elementwise = false;      // maps elements one to one with broadcasting
  bool commutative = false;      // binary op with f(a, b) == f(b, a)

  // Runs the shape rule, then refuses an output whose static dims multiply
  // past kMaxElements or int64 (ir::size_error): a shape computed from a
  // constant (Expand to [2^20, 2^20, 2^20]) is checked here, before anything
  // that would allocate it (folding, the interpreter) sees it. The one way
  // to infer a node's types.
  std::expected<void, InferError> infer(InferContext& ctx) const;
  const AttrSpec* attr(std::string_view attr_name) const;
  bool takes_int_input(size_t i) const;
};

const OpInfo& op_info(Op op);
std::string_view op_name(Op op);
std::optional<Op> op_from_name(std::string_view ir_name);
// Maps an ONNX (domain, op_type) to an op; nullopt means opaque.
std::optional<Op> op_from_onnx(std::string_view domain, std::string_view op_type);

// The default of attribute `name` of `op` (see AttrDefault::resolve); nullopt
// when the op has none for it or it needs more than is known.
std::optional<AttrValue> attr_default(Op op, std::string_view name, int64_t input_rank = -1,
                                      const Attributes* attrs = nullptr);

// A node's attributes as its op reads them: an attribute that is absent
// reads as its default from the op table. The one way the shape rules, the
// interpreter and the cost count read attributes that have defaults.
class OpAttrs {
 public:
  OpAttrs(Op op, const Attributes& attrs, int64_t input_rank = -1) : op_(op), attrs_(attrs), input_rank_(input_rank) {}

  // The value as set, else the default; nullopt when neither exists.
  std::optional<AttrValue> get(std::string_view name) const;
  // Typed reads of an attribute that is set or has a default; asking for one
  // that has neither, or of another kind, is a bug and aborts.
  int64_t get_int(std::string_view name) const;
  float get_float(std::string_view name) const;
  std::string get_string(std::string_view name) const;
  std::vector<int64_t> get_ints(std::string_view name) const;
  TensorRef get_tensor(std::string_view name) const;
  // For attributes whose absence has a meaning of its own (no default).
  std::optional<std::vector<int64_t>> maybe_ints(std::string_view name) const;

 private:
  const AttrValue& require(std::string_view name, AttrKind kind, std::optional<AttrValue>& holder) const;
  Op op_;
  const Attributes& attrs_;
  int64_t input_rank_;
};

// Checks that every op of ops.def has a registered entry (used by tests).
std::vector<std::string> op_table_problems();

}  // namespace refinery::ir
