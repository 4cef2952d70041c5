// Strong ids for the e-graph engine: an Id names an e-node (and, when it is
// canonical, the e-class it leads); a Var names a pattern variable of a rule.
// Both are 32-bit so that e-nodes and match buffers stay small.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace refinery::egraph {

enum class Id : std::uint32_t {};
enum class Var : std::uint32_t {};

inline constexpr Id kInvalidId{std::numeric_limits<std::uint32_t>::max()};

constexpr std::uint32_t index(Id id) { return static_cast<std::uint32_t>(id); }
constexpr std::uint32_t index(Var var) { return static_cast<std::uint32_t>(var); }
constexpr Id make_id(std::size_t i) { return Id{static_cast<std::uint32_t>(i)}; }
constexpr Var make_var(std::size_t i) { return Var{static_cast<std::uint32_t>(i)}; }

}  // namespace refinery::egraph
