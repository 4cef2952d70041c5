// The batch's HTML pages (report/): OUT_DIR/index.html with a row per job,
// and beside each job's report its model page (<target>/<name>.html), both
// drawn from the summary's jobs and the reports they wrote (docs/report.md).
#pragma once
#include <filesystem>
#include <string>

#include "batch/shard.h"
#include "batch/summary.h"
#include "ir/diag.h"

namespace refinery::batch {

struct PagesOptions {
  std::filesystem::path index;         // the batch page's file (OUT_DIR/index.html)
  std::filesystem::path rules_report;  // `refinery rules verify --json` output for the proof verdicts; empty: none
  std::filesystem::path measured;      // bench/ort/bench.mjs --json output for measured speedups; empty: none
};

// Writes the batch page and every job's page atomically; a job whose report
// cannot be read gets a page that says so. Returns how many pages were written.
Expected<std::size_t> write_pages(const Summary& summary, const PagesOptions& options);

// OUT_DIR/index.html, or index.shard-I-of-N.html for a shard.
std::filesystem::path index_path(const std::filesystem::path& out_dir, const Shard& shard);

// A job's model page: its log's path with ".html" for ".log".
std::filesystem::path page_path(const JobResult& job);

}  // namespace refinery::batch
