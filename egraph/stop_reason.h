// Why a Runner stopped, as a value the caller can test and print.
#pragma once

#include <string>
#include <string_view>

#include <fmt/format.h>

namespace refinery::egraph {

enum class StopKind { Saturated, IterationLimit, NodeLimit, TimeLimit, MemoryLimit, Other };

struct StopReason {
  StopKind kind = StopKind::Saturated;
  double value = 0;     // the measure that crossed its limit (iterations, nodes, seconds, bytes)
  std::string message;  // for Other: what the hook said

  bool operator==(const StopReason&) const = default;
  // "Saturated", "NodeLimit(10234)", "Other(goal found)", ...
  std::string to_string() const;
};

std::string_view to_string(StopKind kind);

}  // namespace refinery::egraph

template <>
struct fmt::formatter<refinery::egraph::StopReason> : fmt::formatter<std::string_view> {
  template <class Ctx>
  auto format(const refinery::egraph::StopReason& r, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(r.to_string(), ctx);
  }
};
