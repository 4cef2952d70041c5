// The batch summary: every job's result (journal fields plus the key figures
// of its report) and totals per status, as OUT_DIR/summary.json (or
// summary.shard-I-of-N.json). `refinery report merge` joins the journals of
// several output folders or shards into one summary; it lives here, not in
// report/, until the report/ module exists (ARCHITECTURE.md).
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "batch/job.h"
#include "ir/diag.h"

namespace refinery::batch {

inline constexpr int kSummaryVersion = 1;

struct Summary {
  std::vector<JobResult> jobs;                        // sorted by key
  std::map<std::string, std::size_t> totals() const;  // status -> jobs, and "jobs" -> all
  std::size_t failed() const;
};

Summary make_summary(std::vector<JobResult> jobs);
std::string to_json(const Summary& summary);

// Every journal*.json in each folder, joined; a job in more than one journal
// is taken from the last (folders in the order given, files by name).
Expected<Summary> merge_journals(const std::vector<std::filesystem::path>& out_dirs);

}  // namespace refinery::batch
