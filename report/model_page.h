// A model's page: the optimize report (optimize/report.h, docs/report.md) as
// a static HTML page: what changed, the rules used with their proof status,
// the explanation of each changed value, e-graph growth, validation per
// output, and for a batch job that failed, what failed and how to rerun it.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ir/diag.h"
#include "report/rule_verdicts.h"

namespace refinery::report {

// A model report (a JSON object with "refinery_report" no newer than this
// build's optimize::Report::kVersion); errors name `file`.
Expected<nlohmann::ordered_json> parse_report(std::string_view text, const std::string& file);
Expected<nlohmann::ordered_json> load_report(const std::filesystem::path& file);

// The batch job a page belongs to (batch/job.h's JobResult, as text).
struct JobInfo {
  std::string key, status, reason, command, log;
  std::string log_tail;  // the last lines of its log
  double wall_seconds = 0;
  bool failed = false;
};

struct ModelPageOptions {
  const RuleVerdicts* verdicts = nullptr;  // none: every rule "not verified in this report"
  std::optional<JobInfo> job;
  std::string index_href;  // the batch page, relative to this one; empty: none
};

// `report` may be null for a batch job that wrote none (a crash, a timeout).
// Fails when a value of the report has the wrong type (the Diag names no file:
// the caller knows it).
Expected<std::string> model_page(const nlohmann::ordered_json* report, const ModelPageOptions& options);

}  // namespace refinery::report
