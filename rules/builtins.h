// Internal to rules/ and prove/ (which verifies rules): the named conditions
// (`:when`), the named C++ appliers that compute attributes (`:let`),
// attribute defaults, and which inputs take integer constants. Each is looked
// up by name when a rule loads; the same functions serve the e-graph (facts
// read from e-classes) and verification (facts of a concrete instance).
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attribute.h"
#include "ir/op.h"
#include "ir/shape.h"
#include "rules/rule_ast.h"

namespace refinery::rules {

// What is known about a tensor variable.
struct TensorFact {
  ir::TensorType type;
  const ir::Tensor* constant = nullptr;      // its value, when it is a constant
  std::optional<std::vector<int64_t>> ints;  // its integer contents, when known
  int64_t id = -1;                           // its e-class (-1 in verification)
  // The tensor analysis' constant facts (egraph/tensor/channels.h); unknown
  // in verification, where a rule must hold whatever they are.
  bool zero = false;                               // every element is 0
  const std::vector<bool>* channels = nullptr;     // axis-1 entries that do not depend on the graph's inputs
  bool input_free = false;                         // no element depends on the graph's inputs
  // Of a constant of rank >= 3 (a convolution weight): whether each slice
  // [i, j, ...] is all 0 (egraph/tensor/context.h, zero_pairs).
  const std::vector<bool>* zero_pairs = nullptr;
  // Its contents as dims, when known (symbolic ones too: a reshape target
  // built from Shape: ["batch", "seq", 16]); null where `ints` says it all.
  const std::vector<ir::Dim>* dims = nullptr;
};

struct Env {
  std::map<std::string, TensorFact> tensors;
  std::map<std::string, std::optional<Literal>> attrs;  // attribute and computed variables
  // Verification: element values are symbolic, so value conditions
  // (positive, nonzero, ...) are assumed rather than checked.
  bool symbolic_values = false;
};

// A resolved argument: a tensor, or an attribute value (nullopt: an absent
// attribute without a default).
struct ArgVal {
  const TensorFact* tensor = nullptr;
  std::optional<Literal> value;
};

enum class ArgKind : char { Tensor = 'T', Value = 'V' };

// A value condition constrains element values; verification assumes it of
// the symbolic elements and draws numeric inputs that satisfy it. A variable
// may have several: they combine as a set of flags.
// Step: every element equals the run's time step dt, a fact of a run and
// not of the graph (verification assumes it; the optimizer never knows it).
// Uniform: every element equals the first.
// ZeroPruned, NonNegativePruned, NonPositivePruned: 0 (>= 0, <= 0) at the
// neurons a dead-neuron rule prunes (rows of a matrix, elements of a vector; `kept-neurons`) or the
// filters a convolution leaves out (`live-filters`), which verification takes to be those from
// verification_kept_neurons(n) on (verification_pruned_element).
enum class ValueCond : unsigned {
  None = 0,
  Positive = 1,
  Nonzero = 2,
  NonNegative = 4,
  Zero = 8,
  Step = 16,
  Uniform = 32,
  ZeroPruned = 64,
  NonNegativePruned = 128,
  NonPositivePruned = 256
};
constexpr ValueCond operator|(ValueCond a, ValueCond b) {
  return static_cast<ValueCond>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}
// Whether the set `s` holds the condition `c`.
constexpr bool has(ValueCond s, ValueCond c) { return (static_cast<unsigned>(s) & static_cast<unsigned>(c)) != 0; }

struct CondDef {
  std::string_view name;
  std::string_view args;  // one ArgKind letter per argument
  bool (*check)(const Env& env, std::span<const ArgVal> args);
  ValueCond value = ValueCond::None;
  std::string_view doc;
};

struct LetDef {
  std::string_view name;
  std::string_view args;
  std::optional<Literal> (*compute)(std::span<const ArgVal> args);  // nullopt: the rule does not apply
  std::string_view doc;
  // The function reads its tensor arguments' elements (not only their
  // types): verification draws those variables as concrete constants, so
  // that both sides see the same value (prove/instance.cpp).
  bool reads_values = false;
};

// How many of a population of n neurons `kept-neurons` (of n filters
// `live-filters`) keeps in verification (the first ones; the rest are the
// pruned ones).
constexpr int64_t verification_kept_neurons(int64_t n) { return (n + 1) / 2; }

// Whether element k of a tensor of `numel` elements, `rows` along axis 0,
// lies in a row verification takes to be pruned: where it assumes
// ZeroPruned, NonNegativePruned and NonPositivePruned.
constexpr bool verification_pruned_element(int64_t k, int64_t numel, int64_t rows) {
  return rows > 0 && numel >= rows && k / (numel / rows) >= verification_kept_neurons(rows);
}

const CondDef* find_condition(std::string_view name);
const LetDef* find_let(std::string_view name);
std::span<const CondDef> conditions();
std::span<const LetDef> lets();

// Input positions that take integer constants (shapes, axes, sizes): the
// instances give a variable there an i64 vector; every other tensor variable
// is f32. The engine applies a rule only where the variables have those
// kinds (floating point for the others, rules/compile.cpp), so that what is
// verified is what is applied: integer tensors (shape arithmetic) have
// truncating division, which the proofs over the reals do not model. The
// positions are the op table's (ir::OpInfo::int_inputs).
bool int_position(ir::Op op, size_t i);

// Literal equality (ints and floats compare by value; 1 == 1.0).
bool literal_equal(const Literal& a, const Literal& b);
std::string literal_str(const Literal& v);

// A literal as a constant tensor: a number is an f32 scalar (an int one
// too, unless `int_scalar`), a list of ints an i64 vector, floats an f32 vector.
ir::Tensor literal_tensor(const Literal& v, bool int_scalar = false);

// Resolves the arguments of a condition or let against an environment.
std::vector<ArgVal> resolve(const Env& env, std::span<const Arg> args);

}  // namespace refinery::rules
