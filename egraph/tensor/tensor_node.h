// The tensor language's e-node (ARCHITECTURE.md, decision 3): an operator, an
// interned payload id, and children. The payload is the node's attributes
// (with its output index for multi-output ops), an input's index, or a
// constant's index, interned in a TensorContext.
#pragma once

#include <compare>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "egraph/hash.h"
#include "egraph/id.h"
#include "ir/op.h"

namespace refinery::egraph::tensor {

// Operator keys: ir::Op values, then the two kinds of leaf.
inline constexpr std::uint32_t kInputOp = ir::kNumOps;
inline constexpr std::uint32_t kConstantOp = ir::kNumOps + 1;
inline constexpr std::uint32_t kNumOpKeys = ir::kNumOps + 2;

struct TensorNode {
  std::uint32_t op = 0;
  std::uint32_t payload = 0;  // NodeAttrs id, input index or constant index
  std::vector<Id> kids;

  static TensorNode input(std::uint32_t i) { return {kInputOp, i, {}}; }
  static TensorNode constant(std::uint32_t i) { return {kConstantOp, i, {}}; }

  bool is_leaf() const { return op == kInputOp || op == kConstantOp; }
  ir::Op ir_op() const { return static_cast<ir::Op>(op); }

  std::span<Id> children() { return kids; }
  std::span<const Id> children() const { return kids; }
  std::uint32_t op_key() const { return op; }
  std::uint64_t group_key() const { return static_cast<std::uint64_t>(op) << 32 | payload; }  // as <=> orders
  bool same_op(const TensorNode& o) const { return op == o.op && payload == o.payload && kids.size() == o.kids.size(); }
  // Pattern nodes whose payload is kAnyPayload match every payload of their
  // operator (rules bind and check attributes themselves, rules/).
  static constexpr std::uint32_t kAnyPayload = UINT32_MAX;
  bool matches_template(const TensorNode& tmpl) const {
    return op == tmpl.op && kids.size() == tmpl.kids.size() && (tmpl.payload == kAnyPayload || payload == tmpl.payload);
  }
  std::uint64_t hash() const {
    std::uint64_t h = hash_combine(op, payload);
    for (Id c : kids) h = hash_combine(h, index(c));
    return hash_finalize(h);
  }
  std::string op_string() const;

  bool operator==(const TensorNode&) const = default;
  std::strong_ordering operator<=>(const TensorNode& o) const {
    if (auto c = op <=> o.op; c != 0) return c;
    if (auto c = payload <=> o.payload; c != 0) return c;
    return std::lexicographical_compare_three_way(kids.begin(), kids.end(), o.kids.begin(), o.kids.end());
  }
};

}  // namespace refinery::egraph::tensor
