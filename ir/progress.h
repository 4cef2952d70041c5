// How a long library call says where it is: the caller passes a callback in
// the call's options and decides whether and how to show it (the CLI's
// progress line, cli/progress.h). Libraries never print.
#pragma once
#include <cstddef>
#include <functional>
#include <string>

namespace refinery {

struct ProgressUpdate {
  std::string phase;                // "saturate explore", "extract (ilp)"; "" for a single-phase call
  std::size_t done = 0, total = 0;  // units done of total (total 0: not counted)
  std::string unit;                 // what is counted: "rules", "jobs"
  std::string detail;               // "iteration 5, 12345 nodes", "2 refuted"
  // A line that stands on its own (a finished batch job): a log keeps it;
  // on a terminal it is shown above the live line only when `notable`.
  std::string event;
  bool notable = false;
};

// A library may call it from several threads at once: the receiver serialises.
using ProgressFn = std::function<void(const ProgressUpdate&)>;

}  // namespace refinery
