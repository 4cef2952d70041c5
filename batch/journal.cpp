#include "batch/journal.h"

#include <fmt/format.h>

#include <cmath>

#include "batch/job_json.h"
#include "ir/io.h"

namespace refinery::batch {

namespace fs = std::filesystem;
using ordered_json = nlohmann::ordered_json;

namespace {

ordered_json number(double v) { return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr); }

}  // namespace

ordered_json to_json_value(const JobResult& r) {
  ordered_json j;
  j["key"] = r.key;
  j["model"] = r.model;
  j["target"] = r.target;
  j["status"] = to_string(r.status);
  j["exit_code"] = r.exit_code;
  j["signal"] = r.signal;
  j["command"] = r.command;
  j["reason"] = r.reason;
  j["wall_seconds"] = r.wall_seconds;
  j["cpu_seconds"] = r.cpu_seconds;
  j["peak_rss_kb"] = r.peak_rss_kb;
  j["output"] = r.output;
  j["report"] = r.report;
  j["log"] = r.log;
  if (r.figures) {
    const ReportFigures& f = *r.figures;
    j["result"] = {{"result", f.result},
                   {"nodes_before", f.nodes_before},
                   {"nodes_after", f.nodes_after},
                   {"cost_before", f.cost_before},
                   {"cost_after", f.cost_after},
                   {"cost_unit", f.cost_unit},
                   {"cost_model", f.cost_model},
                   {"cost_model_file", f.cost_model_file},
                   {"validation_passed", f.validation_passed ? ordered_json(*f.validation_passed) : nullptr},
                   {"max_abs_error", f.max_abs_error ? number(*f.max_abs_error) : nullptr}};
  } else {
    j["result"] = nullptr;
  }
  return j;
}

Expected<JobResult> from_json_value(const ordered_json& j) {
  try {
    JobResult r;
    r.key = j.at("key").get<std::string>();
    r.model = j.at("model").get<std::string>();
    r.target = j.at("target").get<std::string>();
    auto status = status_from_string(j.at("status").get<std::string>());
    if (!status) return fail(fmt::format("job '{}': unknown status '{}'", r.key, j.at("status").dump()));
    r.status = *status;
    r.exit_code = j.at("exit_code").get<int>();
    r.signal = j.at("signal").get<int>();
    r.command = j.value("command", "");  // journal version 1 had none
    r.reason = j.at("reason").get<std::string>();
    r.wall_seconds = j.at("wall_seconds").get<double>();
    r.cpu_seconds = j.at("cpu_seconds").get<double>();
    r.peak_rss_kb = j.at("peak_rss_kb").get<std::int64_t>();
    r.output = j.at("output").get<std::string>();
    r.report = j.at("report").get<std::string>();
    r.log = j.at("log").get<std::string>();
    if (const ordered_json& f = j.at("result"); !f.is_null()) {
      ReportFigures x;
      x.result = f.at("result").get<std::string>();
      x.nodes_before = f.at("nodes_before").get<std::size_t>();
      x.nodes_after = f.at("nodes_after").get<std::size_t>();
      x.cost_before = f.at("cost_before").get<double>();
      x.cost_after = f.at("cost_after").get<double>();
      x.cost_unit = f.value("cost_unit", "seconds");  // absent before neuromorphic targets
      x.cost_model = f.value("cost_model", "");       // absent before the cpu target's learned model
      x.cost_model_file = f.value("cost_model_file", "");
      if (!f.at("validation_passed").is_null()) x.validation_passed = f.at("validation_passed").get<bool>();
      if (!f.at("max_abs_error").is_null()) x.max_abs_error = f.at("max_abs_error").get<double>();
      r.figures = x;
    }
    return r;
  } catch (const nlohmann::json::exception& e) {
    return fail(fmt::format("not a batch job record: {}", e.what()));
  }
}

fs::path journal_path(const fs::path& out_dir, const Shard& shard) {
  return out_dir / ("journal" + shard.suffix() + ".json");
}

Expected<std::vector<JobResult>> load_journal(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::vector<JobResult>{};
  auto text = ir::read_file(file);
  if (!text) return std::unexpected(text.error());
  std::vector<JobResult> jobs;
  ordered_json j = ordered_json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("refinery_batch_journal") || !j.contains("jobs") ||
      !j["jobs"].is_array())
    return fail("not a refinery batch journal", "", file.string());
  for (const ordered_json& job : j["jobs"]) {
    auto r = from_json_value(job);
    if (!r) return fail(r.error().message, "", file.string());
    jobs.push_back(std::move(*r));
  }
  return jobs;
}

Expected<void> save_journal(const fs::path& file, const std::vector<JobResult>& jobs) {
  ordered_json j;
  j["refinery_batch_journal"] = kJournalVersion;
  j["jobs"] = ordered_json::array();
  for (const JobResult& r : jobs) j["jobs"].push_back(to_json_value(r));
  std::string text = j.dump(1) + "\n";
  return ir::write_files_atomic({{file, text}});
}

std::optional<ReportFigures> read_report_figures(const fs::path& report) {
  std::error_code ec;
  if (!fs::exists(report, ec)) return std::nullopt;
  auto text = ir::read_file(report);
  if (!text) return std::nullopt;
  ordered_json j = ordered_json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("refinery_report")) return std::nullopt;
  try {
    ReportFigures f;
    f.result = j.at("result").get<std::string>();
    f.nodes_before = j.at("graph").at("nodes_before").get<std::size_t>();
    f.nodes_after = j.at("graph").at("nodes_after").get<std::size_t>();
    f.cost_before = j.at("cost").at("before").get<double>();
    f.cost_after = j.at("cost").at("after").get<double>();
    f.cost_unit = j.at("cost").value("unit", "seconds");  // report versions before 6 priced in seconds only
    f.cost_model = j.at("cost").value("model_kind", "");  // report versions before 8 did not say
    if (const auto& file = j.at("cost").value("model_file", ordered_json()); file.is_string())
      f.cost_model_file = file.get<std::string>();
    if (const ordered_json& v = j.at("validation"); !v.is_null()) {
      f.validation_passed = v.at("passed").get<bool>();
      if (!v.at("max_abs_error").is_null()) f.max_abs_error = v.at("max_abs_error").get<double>();
    }
    return f;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace refinery::batch
