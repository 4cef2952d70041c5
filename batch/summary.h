// The batch summary: every job's result (journal fields plus the key figures
// of its report) and totals per status, as OUT_DIR/summary.json (or
// summary.shard-I-of-N.json). `refinery report merge` joins the journals of
// several output folders or shards into one summary; it lives here, with the
// journal it reads (report/ draws pages from rows and knows no journal:
// batch depends on report, ARCHITECTURE.md).
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
// A summary file written by to_json, read back (`refinery report html`).
Expected<Summary> load_summary(const std::filesystem::path& file);

// Every journal*.json in each folder, joined; a job in more than one journal
// is taken from the last (folders in the order given, files by name).
Expected<Summary> merge_journals(const std::vector<std::filesystem::path>& out_dirs);

}  // namespace refinery::batch
