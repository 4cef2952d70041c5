// What a language must provide to live in the e-graph: its e-node type. An
// e-node is a small value: an operator (with any payload, e.g. a constant)
// and a span of child ids. See docs/egraph.md for a worked example.
#pragma once

#include <concepts>
#include <cstdint>
#include <span>
#include <string>

#include "egraph/id.h"

namespace refinery::egraph {

// Requirements on an e-node type N:
//  - children(): the child ids, mutable and const;
//  - op_key(): a small dense integer per operator *kind* (payload ignored),
//    used to index classes by operator; it must be the first key of `<=>`
//    so that a class's sorted nodes group by operator;
//  - same_op(other): same operator, same payload, same arity (children
//    ignored): the test the matcher applies to a candidate node;
//  - hash(): hash of the whole node, children included;
//  - ==, <=>: total order over whole nodes (used to sort and dedup classes);
//  - op_string(): the operator as text (dumps, printing).
// Optionally:
//  - group_key(): a 64-bit key, ordered as `<=>` orders nodes before their
//    children (op_key first, then what else precedes the children: a
//    payload, an arity), so that a class's sorted nodes of one group are
//    sorted by their children. The matcher then finds the nodes of a group
//    whose first child is a class it has bound by binary search (Program's
//    Bind), not by a scan.
template <class N>
concept ENode = std::regular<N> && std::totally_ordered<N> && requires(N n, const N cn) {
  { n.children() } -> std::convertible_to<std::span<Id>>;
  { cn.children() } -> std::convertible_to<std::span<const Id>>;
  { cn.op_key() } -> std::convertible_to<std::uint32_t>;
  { cn.same_op(cn) } -> std::convertible_to<bool>;
  { cn.hash() } -> std::convertible_to<std::uint64_t>;
  { cn.op_string() } -> std::convertible_to<std::string>;
};

}  // namespace refinery::egraph
