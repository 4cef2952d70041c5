#include "batch/summary.h"

#include <fmt/format.h>

#include <algorithm>

#include "batch/job_json.h"
#include "batch/journal.h"
#include "ir/io.h"

namespace refinery::batch {

namespace fs = std::filesystem;
using ordered_json = nlohmann::ordered_json;

std::map<std::string, std::size_t> Summary::totals() const {
  std::map<std::string, std::size_t> t{{"jobs", jobs.size()}};
  for (const JobResult& j : jobs) ++t[std::string(to_string(j.status))];
  return t;
}

std::size_t Summary::failed() const {
  return std::count_if(jobs.begin(), jobs.end(), [](const JobResult& j) { return j.failed(); });
}

Summary make_summary(std::vector<JobResult> jobs) {
  std::stable_sort(jobs.begin(), jobs.end(), [](const JobResult& a, const JobResult& b) { return a.key < b.key; });
  return {std::move(jobs)};
}

std::string to_json(const Summary& s) {
  ordered_json j;
  j["refinery_batch_summary"] = kSummaryVersion;
  j["totals"] = s.totals();
  double wall = 0, cpu = 0;
  for (const JobResult& r : s.jobs) wall += r.wall_seconds, cpu += r.cpu_seconds;
  j["job_wall_seconds"] = wall;
  j["job_cpu_seconds"] = cpu;
  j["jobs"] = ordered_json::array();
  for (const JobResult& r : s.jobs) j["jobs"].push_back(to_json_value(r));
  return j.dump(1) + "\n";
}

Expected<Summary> load_summary(const fs::path& file) {
  auto text = ir::read_file(file);
  if (!text) return std::unexpected(text.error());
  ordered_json j = ordered_json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("refinery_batch_summary") || !j.contains("jobs") ||
      !j["jobs"].is_array())
    return fail("not a refinery batch summary", "", file.string());
  std::vector<JobResult> jobs;
  for (const ordered_json& job : j["jobs"]) {
    auto r = from_json_value(job);
    if (!r) return fail(r.error().message, "", file.string());
    jobs.push_back(std::move(*r));
  }
  return make_summary(std::move(jobs));
}

Expected<Summary> merge_journals(const std::vector<fs::path>& out_dirs) {
  std::map<std::string, JobResult> by_key;
  for (const fs::path& dir : out_dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return fail("not a folder", "", dir.string());
    std::vector<fs::path> journals;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      std::string name = e.path().filename().string();
      if (name.starts_with("journal") && name.ends_with(".json")) journals.push_back(e.path());
    }
    if (journals.empty()) return fail("no batch journal (journal*.json) in this folder", "", dir.string());
    std::sort(journals.begin(), journals.end());
    for (const fs::path& file : journals) {
      auto jobs = load_journal(file);
      if (!jobs) return std::unexpected(jobs.error());
      for (JobResult& r : *jobs) by_key.insert_or_assign(r.key, std::move(r));
    }
  }
  std::vector<JobResult> jobs;
  for (auto& [key, r] : by_key) jobs.push_back(std::move(r));
  return make_summary(std::move(jobs));
}

}  // namespace refinery::batch
