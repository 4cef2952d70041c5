#include "egraph/stop_reason.h"

namespace refinery::egraph {

std::string_view to_string(StopKind kind) {
  switch (kind) {
    case StopKind::Saturated: return "Saturated";
    case StopKind::IterationLimit: return "IterationLimit";
    case StopKind::NodeLimit: return "NodeLimit";
    case StopKind::TimeLimit: return "TimeLimit";
    case StopKind::MemoryLimit: return "MemoryLimit";
    case StopKind::Other: return "Other";
  }
  return "Unknown";
}

std::string StopReason::to_string() const {
  switch (kind) {
    case StopKind::Saturated: return "Saturated";
    case StopKind::TimeLimit: return fmt::format("TimeLimit({:.3f}s)", value);
    case StopKind::Other: return fmt::format("Other({})", message);
    default: return fmt::format("{}({})", egraph::to_string(kind), static_cast<long long>(value));
  }
}

}  // namespace refinery::egraph
