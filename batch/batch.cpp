#include "batch/batch.h"

#include <fmt/format.h>

#include <csignal>
#include <cstring>
#include <fstream>
#include <set>
#include <thread>

#include "batch/journal.h"
#include "batch/pages.h"
#include "ir/io.h"
#include "report/command.h"

namespace refinery::batch {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> child_argv(const BatchOptions& o, const fs::path& exe, const Job& job) {
  std::vector<std::string> argv{exe.string(), "optimize", job.model.string(), "-o", job.output.string(), "--target",
                                job.target,   "--report", job.report.string()};
  if (o.time_limit_s) argv.insert(argv.end(), {"--time-limit", fmt::format("{}", *o.time_limit_s)});
  if (o.node_limit) argv.insert(argv.end(), {"--node-limit", fmt::format("{}", *o.node_limit)});
  if (o.min_gain) argv.insert(argv.end(), {"--min-gain", fmt::format("{}", *o.min_gain)});
  if (!o.cost_model.empty()) {
    const bool file = o.cost_model != "learned" && o.cost_model != "analytic";  // a file: absolute, as the rule files
    argv.insert(argv.end(), {"--cost-model", file ? fs::absolute(o.cost_model).string() : o.cost_model});
  }
  if (!o.extractor.empty()) argv.insert(argv.end(), {"--extractor", o.extractor});
  if (o.egraphs) argv.insert(argv.end(), {"--egraph", job.output.string() + ".egraph.json"});
  if (o.portable) argv.push_back("--portable");
  for (const fs::path& r : o.rules) argv.insert(argv.end(), {"--rules", fs::absolute(r).string()});
  return argv;
}

// The child's own word on what went wrong: its last "error:" line, else its
// last line.
std::string last_error_line(const fs::path& log) {
  std::ifstream in(log);
  std::string line, error, last;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    last = line;
    if (line.find("error:") != std::string::npos) error = line;
  }
  std::string s = error.empty() ? last : error;
  if (s.starts_with("refinery: error: ")) s = s.substr(17);
  return s.size() > 500 ? s.substr(0, 500) + "..." : s;
}

std::string signal_name(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", signal);
}

JobResult result_of(const Job& job, const ProcessSpec& spec, const ProcessResult& p, const PoolOptions& pool) {
  JobResult r{.key = job.key,
              .target = job.target,
              .model = job.model.string(),
              .log = job.log.string(),
              .exit_code = p.exit_code,
              .signal = p.signal,
              .command = report::shell_command(spec.argv),
              .wall_seconds = p.wall_seconds,
              .cpu_seconds = p.cpu_seconds,
              .peak_rss_kb = p.peak_rss_kb};
  std::string said = last_error_line(job.log);
  if (p.timed_out) {
    r.status = Status::Timeout;
    r.reason = fmt::format("timed out after {:g} s ({})", pool.timeout_s, p.killed ? "SIGKILL" : "SIGTERM");
  } else if (p.signal) {
    r.status = Status::Crashed;
    r.reason = fmt::format("killed by {} ({})", signal_name(p.signal), strsignal(p.signal));
    if (pool.memory_bytes && p.signal == SIGABRT) r.reason += ", maybe out of memory under --memory-limit";
    if (!said.empty()) r.reason += "; last output: " + said;
  } else {
    switch (p.exit_code) {
      case 0: r.status = Status::Written; break;
      case 1: r.status = Status::ValidationFailed; break;
      case 2: r.status = Status::BadInput; break;
      case 3: r.status = Status::Limitation; break;
      default: r.status = Status::Error; break;
    }
    if (p.exit_code != 0) r.reason = said.empty() ? fmt::format("exit status {}", p.exit_code) : said;
  }
  std::error_code ec;
  if (r.status == Status::Written && fs::exists(job.output, ec)) r.output = job.output.string();
  if (fs::exists(job.report, ec)) {
    r.report = job.report.string();
    r.figures = read_report_figures(job.report);
  }
  return r;
}

}  // namespace

Expected<BatchResult> run_batch(const BatchOptions& o) {
  if (o.targets.empty()) return fail("no target (--target T[,T...])");
  auto models = discover_models(o.inputs, o.out_dir);
  if (!models) return std::unexpected(models.error());
  if (models->empty()) return fail("no models (.onnx, .nir) in the inputs");
  std::error_code ec;
  fs::create_directories(o.out_dir, ec);
  if (ec) return fail(fmt::format("cannot create the output folder: {}", ec.message()), "", o.out_dir.string());

  std::vector<Job> all = plan_jobs(*models, o.targets, o.out_dir);
  std::vector<Job> jobs;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (o.shard.contains(i)) jobs.push_back(all[i]);

  fs::path journal_file = journal_path(o.out_dir, o.shard);
  std::vector<JobResult> journal;
  if (o.resume) {
    auto loaded = load_journal(journal_file);
    if (!loaded) return std::unexpected(loaded.error());
    journal = std::move(*loaded);
  }
  std::set<std::string> planned_keys, done;
  for (const Job& j : jobs) planned_keys.insert(j.key);
  // Results of jobs no longer planned (a changed command) are dropped.
  std::erase_if(journal, [&](const JobResult& r) { return !planned_keys.contains(r.key); });
  for (const JobResult& r : journal) done.insert(r.key);

  std::vector<Job> todo;
  for (const Job& j : jobs)
    if (!done.contains(j.key)) todo.push_back(j);
  fs::path exe = o.executable.empty() ? fs::read_symlink("/proc/self/exe", ec) : o.executable;
  if (exe.empty()) return fail("cannot find the refinery executable (/proc/self/exe)");
  std::vector<ProcessSpec> specs;
  for (const Job& j : todo) {
    fs::create_directories(j.output.parent_path(), ec);
    if (ec) return fail(fmt::format("cannot create a folder: {}", ec.message()), "", j.output.parent_path().string());
    // What an earlier run left for a job that runs again is stale: a job
    // that now crashes must not be credited with the old report or output.
    for (const fs::path& old : {j.output, j.report, fs::path(j.output.string() + ".egraph.json")}) {
      fs::remove(old, ec);
      if (ec) return fail(fmt::format("cannot remove an earlier run's file: {}", ec.message()), "", old.string());
    }
    specs.push_back({child_argv(o, exe, j), j.log});
  }

  BatchResult result{.planned = jobs.size(), .resumed = jobs.size() - todo.size()};
  // The journal is written before the first job, so that a fresh run
  // replaces an old one at once.
  if (auto ok = save_journal(journal_file, journal); !ok) return std::unexpected(ok.error());
  PoolOptions pool = o.pool;
  if (pool.jobs == 0) pool.jobs = std::max(1u, std::thread::hardware_concurrency());
  std::size_t finished = 0, failed = 0;
  auto progress = [&](const JobResult* job) {
    if (!o.progress) return;
    ProgressUpdate u{
        .done = finished, .total = todo.size(), .unit = "jobs", .detail = fmt::format("{} failed", failed)};
    if (job) {
      u.event = fmt::format("[{}/{}] {}: {} ({:.1f} s){}", finished, todo.size(), job->key, to_string(job->status),
                            job->wall_seconds, job->reason.empty() ? "" : ": " + job->reason);
      u.notable = job->failed();
    }
    o.progress(u);
  };
  progress(nullptr);
  std::optional<Diag> journal_error;
  run_pool(specs, pool, [&](std::size_t i, const ProcessResult& p) {
    journal.push_back(result_of(todo[i], specs[i], p, pool));
    ++finished;
    if (journal.back().failed()) ++failed;
    progress(&journal.back());
    if (auto ok = save_journal(journal_file, journal); !ok && !journal_error) journal_error = ok.error();
  });
  if (journal_error) return std::unexpected(*journal_error);
  result.summary = make_summary(journal);
  std::string summary = to_json(result.summary);
  if (auto ok = ir::write_files_atomic({{o.out_dir / ("summary" + o.shard.suffix() + ".json"), summary}}); !ok)
    return std::unexpected(ok.error());
  auto pages = write_pages(result.summary, {.index = index_path(o.out_dir, o.shard), .rules_report = o.rules_report});
  if (!pages) return std::unexpected(pages.error());
  return result;
}

}  // namespace refinery::batch
