#include "batch/pages.h"

#include <fmt/format.h>

#include <deque>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "ir/io.h"
#include "report/batch_page.h"
#include "report/model_page.h"

namespace refinery::batch {

namespace fs = std::filesystem;

namespace {

std::string log_tail(const std::string& log, std::size_t lines) {
  std::ifstream in(log);
  std::deque<std::string> tail;
  for (std::string line; std::getline(in, line);) {
    tail.push_back(line);
    if (tail.size() > lines) tail.pop_front();
  }
  std::string out;
  for (const std::string& l : tail) out += l + "\n";
  return out;
}

fs::path resolved(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(p, ec);
  return ec ? fs::absolute(p) : c;
}

// bench.mjs --json: rows of {orig, opt, speedup}; keyed by the optimized file.
Expected<std::map<fs::path, double>> load_measured(const fs::path& file) {
  std::map<fs::path, double> out;
  if (file.empty()) return out;
  auto text = ir::read_file(file);
  if (!text) return std::unexpected(text.error());
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("rows") || !j["rows"].is_array())
    return fail("not a measurement file (bench/ort/bench.mjs --json: {\"rows\": [{\"opt\", \"speedup\"}]})", "",
                file.string());
  for (const nlohmann::json& row : j["rows"]) {
    if (!row.is_object() || !row.contains("opt") || !row["opt"].is_string() || !row.contains("speedup") ||
        !row["speedup"].is_number())
      return fail("a row without \"opt\" and \"speedup\"", "", file.string());
    fs::path opt = row["opt"].get<std::string>();
    if (opt.is_relative()) opt = file.parent_path() / opt;  // bench.mjs writes the paths it was given
    out[resolved(opt)] = row["speedup"].get<double>();
  }
  return out;
}

}  // namespace

fs::path index_path(const fs::path& out_dir, const Shard& shard) {
  return out_dir / ("index" + shard.suffix() + ".html");
}

fs::path page_path(const JobResult& job) {
  fs::path log = job.log;
  return log.replace_extension(".html");
}

Expected<std::size_t> write_pages(const Summary& summary, const PagesOptions& o) {
  std::optional<report::RuleVerdicts> verdicts;
  if (!o.rules_report.empty()) {
    auto v = report::load_rule_verdicts(o.rules_report);
    if (!v) return std::unexpected(v.error());
    verdicts = std::move(*v);
  }
  auto measured = load_measured(o.measured);
  if (!measured) return std::unexpected(measured.error());
  const fs::path index_dir = resolved(o.index).parent_path();
  std::vector<std::pair<fs::path, std::string>> files;
  std::vector<report::BatchRow> rows;
  for (const JobResult& job : summary.jobs) {
    // The model's name in the batch (the key less its target folder): short,
    // and the same on every machine.
    report::BatchRow row{.key = job.key,
                         .model = job.key.substr(job.key.find('/') + 1),
                         .target = job.figures && !job.figures->cost_model.empty()
                                       ? fmt::format("{} ({})", job.target, job.figures->cost_model)
                                       : job.target,
                         .status = std::string(to_string(job.status)),
                         .failed = job.failed(),
                         .reason = job.reason,
                         .wall_seconds = job.wall_seconds};
    report::ModelPageOptions page{.verdicts = verdicts ? &*verdicts : nullptr,
                                  .job = report::JobInfo{.key = job.key,
                                                         .status = row.status,
                                                         .reason = job.reason,
                                                         .command = job.command,
                                                         .log = job.log,
                                                         .log_tail = job.failed() ? log_tail(job.log, 30) : "",
                                                         .wall_seconds = job.wall_seconds,
                                                         .failed = job.failed()}};
    if (!job.report.empty()) {
      auto r = report::load_report(job.report);
      if (r) {
        row.report = std::move(*r);
      } else {
        page.job->failed = row.failed = true;
        page.job->reason = row.reason = "its report cannot be read: " + r.error().str();
      }
    }
    if (auto it = measured->find(resolved(job.output)); !job.output.empty() && it != measured->end())
      row.measured_speedup = it->second;
    if (!job.log.empty()) {
      const fs::path file = resolved(page_path(job));
      row.page = file.lexically_relative(index_dir).generic_string();
      page.index_href = (index_dir.lexically_relative(file.parent_path()) / o.index.filename()).generic_string();
      auto text = report::model_page(row.report ? &*row.report : nullptr, page);
      if (!text) {  // its report is no report of ours: the page says so
        row.report.reset();
        page.job->failed = row.failed = true;
        page.job->reason = row.reason =
            fmt::format("its report cannot be read: {}: {}", job.report, text.error().message);
        text = report::model_page(nullptr, page);
        if (!text) return std::unexpected(text.error());
      }
      files.emplace_back(file, std::move(*text));
    }
    rows.push_back(std::move(row));
  }
  files.emplace_back(o.index, report::batch_page(rows, {.measured_source = o.measured.string()}));
  std::vector<std::pair<fs::path, std::string_view>> views(files.begin(), files.end());
  if (auto ok = ir::write_files_atomic(views); !ok) return std::unexpected(ok.error());
  return files.size();
}

}  // namespace refinery::batch
