// The journal: one JSON file in OUT_DIR (journal.json, or
// journal.shard-I-of-N.json) listing every finished job, replaced atomically
// after each one, so that a killed batch loses only the jobs in flight and
// --resume runs what the journal does not list.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "batch/job.h"
#include "batch/shard.h"
#include "ir/diag.h"

namespace refinery::batch {

inline constexpr int kJournalVersion = 2;  // 2: a job's "command"

std::filesystem::path journal_path(const std::filesystem::path& out_dir, const Shard& shard);

// An absent file is an empty journal.
Expected<std::vector<JobResult>> load_journal(const std::filesystem::path& file);
Expected<void> save_journal(const std::filesystem::path& file, const std::vector<JobResult>& jobs);

// The key figures of a report file written by `refinery optimize --report`;
// none when the file is absent or not a report.
std::optional<ReportFigures> read_report_figures(const std::filesystem::path& report);

}  // namespace refinery::batch
