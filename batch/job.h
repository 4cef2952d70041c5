// One job of a batch (a model for one target) and its result, the unit of the
// journal and the summary (docs/batch.md).
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "batch/inputs.h"

namespace refinery::batch {

struct Job {
  std::string key;  // "<target folder>/<model name>": unique in a batch
  std::string target;
  std::filesystem::path model;
  // OUT_DIR/<target folder>/<model name>, and beside it NAME.report.json and NAME.log.
  std::filesystem::path output, report, log;
};

// Every model for every target, models outer, in input order. A target given
// as a spec file ("specs/x.json") gets the folder "x".
std::vector<Job> plan_jobs(const std::vector<ModelInput>& models, const std::vector<std::string>& targets,
                           const std::filesystem::path& out_dir);

enum class Status {
  Written,           // exit 0: the refined model (or the original, kept) is written
  ValidationFailed,  // exit 1
  BadInput,          // exit 2: the model (or a flag) was rejected
  Limitation,        // exit 3: a valid model Refinery cannot handle
  Timeout,           // killed after --timeout
  Crashed,           // ended by a signal
  Error,             // any other exit status (the executable could not start: 127)
};
std::string_view to_string(Status status);
std::optional<Status> status_from_string(std::string_view text);

// Key figures of the child's report (optimize/report.h), when it wrote one.
struct ReportFigures {
  std::string result;  // "optimized", "kept original", "validation failed"
  std::size_t nodes_before = 0, nodes_after = 0;
  double cost_before = 0, cost_after = 0;  // under the target's model, in cost_unit
  std::optional<bool> validation_passed;   // none: no validation was needed
  std::optional<double> max_abs_error;
  std::string cost_unit = "seconds";  // a neuromorphic target: "joules per time step"
  // What priced the graphs (the report's cost.model_kind and model_file):
  // "learned" with its file, or "analytic"; empty: a report before version 8.
  std::string cost_model, cost_model_file;
};

struct JobResult {
  std::string key, target;
  std::string model;                // the input path
  std::string output, report, log;  // output and report: empty when not written
  Status status = Status::Error;
  int exit_code = -1;                        // -1 when ended by a signal
  int signal = 0;                            // the signal that ended it, 0 if none
  std::string command;                       // the child's argv as one shell line: reruns the job by hand
  std::string reason;                        // why it failed: the child's error line, the signal, the timeout
  double wall_seconds = 0, cpu_seconds = 0;  // cpu: user + system of the child
  std::int64_t peak_rss_kb = 0;              // wait4's ru_maxrss
  std::optional<ReportFigures> figures;

  bool failed() const { return status != Status::Written; }
};

}  // namespace refinery::batch
