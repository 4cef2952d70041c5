// A ready-made e-node for small languages whose operators are plain numbers
// (no payload): op + up to MaxArity children stored inline. Used by the
// engine's property tests and benchmarks.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

#include "egraph/hash.h"
#include "egraph/id.h"

namespace refinery::egraph {

template <std::size_t MaxArity>
struct BasicNode {
  std::uint32_t op = 0;
  std::uint32_t arity = 0;
  std::array<Id, MaxArity> kids{};

  BasicNode() = default;
  BasicNode(std::uint32_t op_, std::initializer_list<Id> children) : op(op_) {
    for (Id c : children) kids[arity++] = c;
  }

  std::span<Id> children() { return {kids.data(), arity}; }
  std::span<const Id> children() const { return {kids.data(), arity}; }
  std::uint32_t op_key() const { return op; }
  std::uint64_t group_key() const { return static_cast<std::uint64_t>(op) << 32 | arity; }  // as <=> orders
  bool same_op(const BasicNode& o) const { return op == o.op && arity == o.arity; }
  std::uint64_t hash() const {
    std::uint64_t h = hash_combine(op, arity);
    for (std::uint32_t i = 0; i < arity; ++i) h = hash_combine(h, index(kids[i]));
    return hash_finalize(h);
  }
  std::string op_string() const {
    std::string s = "f";
    s += std::to_string(op);
    return s;
  }

  bool operator==(const BasicNode& o) const {
    if (op != o.op || arity != o.arity) return false;
    for (std::uint32_t i = 0; i < arity; ++i)
      if (kids[i] != o.kids[i]) return false;
    return true;
  }
  std::strong_ordering operator<=>(const BasicNode& o) const {
    if (auto c = op <=> o.op; c != 0) return c;
    if (auto c = arity <=> o.arity; c != 0) return c;
    for (std::uint32_t i = 0; i < arity; ++i)
      if (auto c = kids[i] <=> o.kids[i]; c != 0) return c;
    return std::strong_ordering::equal;
  }
};

}  // namespace refinery::egraph
