// A batch's page (OUT_DIR/index.html): a sortable table with a row per job,
// each linking to its model page, and plots of the cost gains and the
// optimize times across the batch. The rows come from batch/ (the journal's
// jobs with their reports); this module knows no journal.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace refinery::report {

struct BatchRow {
  std::string key, model, target;
  std::string status;  // the job's status (batch/job.h): "written", "crashed", ...
  bool failed = false;
  std::string reason;
  double wall_seconds = 0;                  // the job's, process start to exit
  std::optional<nlohmann::ordered_json> report;     // its model report, when it wrote one
  std::optional<double> measured_speedup;   // from a measurement file, when measured
  std::string page;                         // its model page, relative to the batch page
};

struct BatchPageOptions {
  std::string title = "refinery batch";
  std::string measured_source;  // the file measured speedups came from; empty: none given
};

std::string batch_page(const std::vector<BatchRow>& rows, const BatchPageOptions& options);

}  // namespace refinery::report
