// The math test language of egg's tests/math.rs: + - * / pow ln sqrt sin cos,
// d (derivative) and i (integral), constants and symbols. A leaf has no
// children and an operator no payload, so the two share one 8-byte field:
// a node is 12 bytes (egg's enum of two ids is 12 too), and symbols of up
// to eight characters are stored inline, without a symbol table.
#pragma once

#include <array>
#include <bit>
#include <cmath>
#include <compare>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <expected>
#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "egraph/hash.h"
#include "egraph/id.h"

namespace refinery::egraph::math {

enum class MathOp : std::uint8_t { Diff, Integral, Add, Sub, Mul, Div, Pow, Ln, Sqrt, Sin, Cos, Constant, Symbol };

struct OpInfo {
  MathOp op;
  std::string_view name;
  std::uint8_t arity;
};
inline constexpr std::array<OpInfo, 11> kOps{{{MathOp::Diff, "d", 2},
                                              {MathOp::Integral, "i", 2},
                                              {MathOp::Add, "+", 2},
                                              {MathOp::Sub, "-", 2},
                                              {MathOp::Mul, "*", 2},
                                              {MathOp::Div, "/", 2},
                                              {MathOp::Pow, "pow", 2},
                                              {MathOp::Ln, "ln", 1},
                                              {MathOp::Sqrt, "sqrt", 1},
                                              {MathOp::Sin, "sin", 1},
                                              {MathOp::Cos, "cos", 1}}};

struct MathNode {
  MathOp op = MathOp::Constant;
  std::uint8_t arity = 0;
  // An operator's children; a leaf's payload (a constant's double bits, a
  // symbol's characters) as two words, high word first, so that comparing
  // the two in order compares the payload as one number.
  std::array<Id, 2> kids{};

  static MathNode constant(double v) {
    if (v == 0.0) v = 0.0;  // one zero: -0 and +0 are the same constant
    return leaf(MathOp::Constant, std::bit_cast<std::uint64_t>(v));
  }
  static MathNode symbol(std::string_view name) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, name.data(), name.size());
    return leaf(MathOp::Symbol, bits);
  }
  static MathNode make(MathOp op, std::span<const Id> children) {
    MathNode n;
    n.op = op;
    n.arity = static_cast<std::uint8_t>(children.size());
    for (std::size_t i = 0; i < children.size(); ++i) n.kids[i] = children[i];
    return n;
  }

  bool is_constant() const { return op == MathOp::Constant; }
  bool is_symbol() const { return op == MathOp::Symbol; }
  bool is_leaf() const { return arity == 0; }
  std::uint64_t payload() const { return std::uint64_t{index(kids[0])} << 32 | index(kids[1]); }
  double value() const { return std::bit_cast<double>(payload()); }
  std::string symbol_name() const {
    char buf[9] = {};
    std::uint64_t bits = payload();
    std::memcpy(buf, &bits, 8);
    return buf;
  }

  // ---- the ENode interface ----
  std::span<Id> children() { return {kids.data(), arity}; }
  std::span<const Id> children() const { return {kids.data(), arity}; }
  std::uint32_t op_key() const { return static_cast<std::uint32_t>(op); }
  std::uint64_t group_key() const { return std::uint64_t{op_key()} << 32 | arity; }  // as <=> orders
  // Same operator and arity; a leaf's payload too (an operator's is empty).
  bool same_op(const MathNode& o) const { return op == o.op && arity == o.arity && (arity != 0 || kids == o.kids); }
  std::uint64_t hash() const {
    return hash_mix(static_cast<std::uint64_t>(op) << 8 | arity, std::uint64_t{index(kids[0])} << 32 | index(kids[1]));
  }
  std::string op_string() const {
    if (op == MathOp::Constant) return fmt::format("{}", value());
    if (op == MathOp::Symbol) return symbol_name();
    for (const auto& info : kOps)
      if (info.op == op) return std::string(info.name);
    return "?";
  }
  bool operator==(const MathNode& o) const { return op == o.op && arity == o.arity && kids == o.kids; }
  // Operator, arity, then the children or the payload: the order of the
  // former 24-byte layout (operator, payload, arity, children), as an
  // operator's arity is fixed and only leaves carry a payload.
  std::strong_ordering operator<=>(const MathNode& o) const {
    if (auto c = op <=> o.op; c != 0) return c;
    if (auto c = arity <=> o.arity; c != 0) return c;
    if (auto c = kids[0] <=> o.kids[0]; c != 0) return c;
    return kids[1] <=> o.kids[1];
  }

  // ---- parsing (for parse_term / parse_pattern) ----
  static std::expected<MathNode, std::string> parse(std::string_view atom, std::span<const Id> children) {
    for (const auto& info : kOps) {
      if (info.name != atom) continue;
      if (children.size() != info.arity)
        return std::unexpected(
            fmt::format("operator '{}' takes {} arguments, got {}", atom, info.arity, children.size()));
      return make(info.op, children);
    }
    if (!children.empty()) return std::unexpected(fmt::format("unknown operator '{}'", atom));
    std::string text(atom);
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (!text.empty() && end == text.c_str() + text.size() && std::isfinite(v)) return constant(v);
    if (atom.size() > 8) return std::unexpected(fmt::format("symbol '{}' is longer than 8 characters", atom));
    return symbol(atom);
  }

 private:
  static MathNode leaf(MathOp op, std::uint64_t payload) {
    MathNode n;
    n.op = op;
    n.kids = {Id{static_cast<std::uint32_t>(payload >> 32)}, Id{static_cast<std::uint32_t>(payload)}};
    return n;
  }
};
static_assert(sizeof(MathNode) == 12);

}  // namespace refinery::egraph::math
