// Internal to batch/: a job result as a JSON object (docs/batch.md), and back;
// shared by the journal and the summary.
#pragma once
#include <nlohmann/json.hpp>

#include "batch/job.h"
#include "ir/diag.h"

namespace refinery::batch {

nlohmann::ordered_json to_json_value(const JobResult& job);
Expected<JobResult> from_json_value(const nlohmann::ordered_json& j);

}  // namespace refinery::batch
