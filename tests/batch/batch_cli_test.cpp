// `refinery batch` and `refinery report merge` end to end: every model of a
// folder is written; a crashing child, a hanging one and hostile files end
// with their reason while the others are written; --resume after a SIGKILL
// reruns nothing that finished; --shard I/N partitions the jobs; exit 0/1/2.
// Crashes and hangs come from a wrapper (--exe) that stands in for refinery
// on models named crash*, hang*, stubborn* (and copies the model for fast*
// and, after half a second, slow*: the journal's tests need no optimizer),
// and runs the real one otherwise.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "batch/journal.h"
#include "tests/cli/cli_runner.h"

namespace refinery::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("refinery_batch_cli_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

const fs::path kTiny = source_path("examples/tiny_cnn.onnx");

// A stand-in for refinery: argv is "optimize MODEL -o OUT ...".
fs::path wrapper(const fs::path& dir) {
  fs::path w = dir / "wrapper.sh";
  std::ofstream(w) << "#!/bin/sh\n"
                      "case \"$(basename \"$2\")\" in\n"
                      "  crash*) kill -SEGV $$ ;;\n"
                      "  hang*) sleep 60 ;;\n"
                      "  stubborn*) trap '' TERM; sleep 60 ;;\n"
                      "  slow*) sleep 0.5; mkdir -p \"$(dirname \"$4\")\" && cp \"$2\" \"$4\" && exit 0 ;;\n"
                      "  fast*) mkdir -p \"$(dirname \"$4\")\" && cp \"$2\" \"$4\" && exit 0 ;;\n"
                      "esac\n"
                      "exec "
                   << REFINERY_EXE << " \"$@\"\n";
  fs::permissions(w, fs::perms::owner_all);
  return w;
}

json read_json(const fs::path& p) { return json::parse(slurp(p)); }

std::map<std::string, json> jobs_by_key(const json& summary) {
  std::map<std::string, json> out;
  for (const json& j : summary.at("jobs")) out[j.at("key").get<std::string>()] = j;
  return out;
}

TEST(BatchCli, WritesEveryModelOfAFolderAndAgreesWithASingleRun) {
  fs::path d = fresh_dir("folder");
  fs::create_directories(d / "models/sub");
  fs::copy_file(kTiny, d / "models/tiny.onnx");
  fs::copy_file(kTiny, d / "models/sub/tiny.onnx");
  CliResult r = run_cli("batch " + (d / "models").string() + " -o " + (d / "out").string() + " --target cpu --jobs 2");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("[2/2] cpu/models/"), std::string::npos) << r.err;  // a plain line per job, no terminal
  for (const char* m : {"models/tiny.onnx", "models/sub/tiny.onnx"}) {
    SCOPED_TRACE(m);
    EXPECT_TRUE(fs::exists(d / "out/cpu" / m));
    EXPECT_TRUE(fs::exists(d / "out/cpu" / (std::string(m) + ".report.json")));
  }
  json s = read_json(d / "out/summary.json");
  EXPECT_EQ(s.at("totals").at("written"), 2);
  json job = jobs_by_key(s).at("cpu/models/tiny.onnx");
  EXPECT_EQ(job.at("status"), "written");
  EXPECT_GT(job.at("peak_rss_kb").get<int>(), 0);
  // The same command by hand gives the same report figures.
  r = run_cli("optimize " + kTiny.string() + " -o " + (d / "single.onnx").string() + " --target cpu --report " +
              (d / "single.json").string());
  ASSERT_EQ(r.code, 0) << r.err;
  json single = read_json(d / "single.json");
  EXPECT_EQ(job.at("result").at("nodes_after"), single.at("graph").at("nodes_after"));
  EXPECT_EQ(job.at("result").at("cost_after"), single.at("cost").at("after"));
  EXPECT_EQ(job.at("result").at("result"), single.at("result"));
}

TEST(BatchCli, CrashHangAndHostileFilesEndWithTheirReasonAndTheOthersAreWritten) {
  fs::path d = fresh_dir("hostile");
  fs::create_directories(d / "m");
  for (const char* name : {"good.onnx", "crash.onnx", "hang.onnx", "stubborn.onnx"})
    fs::copy_file(kTiny, d / "m" / name);
  for (const char* bad : {"garbage.onnx", "truncated.onnx", "cycle.onnx"})
    fs::copy_file(source_path("tests/cli/data/") + bad, d / "m" / bad);
  CliResult r = run_cli("batch " + (d / "m").string() + " -o " + (d / "out").string() +
                        " --target cpu --jobs 4 --timeout 20 --exe " + wrapper(d).string());
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  auto jobs = jobs_by_key(read_json(d / "out/summary.json"));
  ASSERT_EQ(jobs.size(), 7u);
  EXPECT_EQ(jobs.at("cpu/m/good.onnx").at("status"), "written");
  EXPECT_TRUE(fs::exists(d / "out/cpu/m/good.onnx"));
  json crash = jobs.at("cpu/m/crash.onnx");
  EXPECT_EQ(crash.at("status"), "crashed");
  EXPECT_EQ(crash.at("signal"), SIGSEGV);
  EXPECT_NE(crash.at("reason").get<std::string>().find("SIGSEGV"), std::string::npos);
  EXPECT_EQ(jobs.at("cpu/m/hang.onnx").at("status"), "timeout");
  EXPECT_EQ(jobs.at("cpu/m/hang.onnx").at("reason"), "timed out after 20 s (SIGTERM)");
  EXPECT_EQ(jobs.at("cpu/m/stubborn.onnx").at("reason"), "timed out after 20 s (SIGKILL)");
  for (const char* bad : {"garbage.onnx", "truncated.onnx", "cycle.onnx"}) {
    json j = jobs.at(std::string("cpu/m/") + bad);
    EXPECT_EQ(j.at("status"), "bad input") << bad;
    EXPECT_EQ(j.at("exit_code"), 2);
    EXPECT_NE(j.at("reason").get<std::string>().find(bad), std::string::npos) << j.at("reason");
    EXPECT_FALSE(fs::exists(d / "out/cpu/m" / bad));
  }
}

TEST(BatchCli, AJobRunAgainIsNotCreditedWithAnEarlierRunsFiles) {
  fs::path d = fresh_dir("stale");
  fs::create_directories(d / "m");
  fs::copy_file(kTiny, d / "m/tiny.onnx");
  CliResult r = run_cli("batch " + (d / "m").string() + " -o " + (d / "out").string() + " --target cpu");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  ASSERT_TRUE(fs::exists(d / "out/cpu/m/tiny.onnx.report.json"));
  // The same model under the same name now crashes: the first run's report
  // and output are not this run's.
  fs::rename(d / "m/tiny.onnx", d / "m/crash.onnx");
  fs::rename(d / "out/cpu/m/tiny.onnx", d / "out/cpu/m/crash.onnx");
  fs::rename(d / "out/cpu/m/tiny.onnx.report.json", d / "out/cpu/m/crash.onnx.report.json");
  r = run_cli("batch " + (d / "m").string() + " -o " + (d / "out").string() + " --target cpu --exe " +
              wrapper(d).string());
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  json crash = jobs_by_key(read_json(d / "out/summary.json")).at("cpu/m/crash.onnx");
  EXPECT_EQ(crash.at("status"), "crashed");
  EXPECT_EQ(crash.at("report"), "");
  EXPECT_FALSE(fs::exists(d / "out/cpu/m/crash.onnx.report.json"));
  EXPECT_FALSE(fs::exists(d / "out/cpu/m/crash.onnx"));
}

TEST(BatchCli, RealTimeoutAndMemoryLimitEndTheChildNotTheBatch) {
  fs::path d = fresh_dir("limits");
  CliResult r = run_cli("batch " + kTiny.string() + " -o " + (d / "t").string() + " --target cpu --timeout 0.001");
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  auto jobs = jobs_by_key(read_json(d / "t/summary.json"));
  EXPECT_EQ(jobs.at("cpu/tiny_cnn.onnx").at("status"), "timeout");

  r = run_cli("batch " + kTiny.string() + " -o " + (d / "m").string() + " --target cpu --memory-limit 32M");
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  jobs = jobs_by_key(read_json(d / "m/summary.json"));
  json j = jobs.at("cpu/tiny_cnn.onnx");
  EXPECT_NE(j.at("status"), "written");
  EXPECT_FALSE(j.at("reason").get<std::string>().empty());
}

TEST(BatchCli, ResumeAfterSigkillRerunsNothingThatFinished) {
  fs::path d = fresh_dir("resume");
  fs::create_directories(d / "m");
  for (int i = 0; i < 6; ++i) fs::copy_file(kTiny, d / "m" / ("slow" + std::to_string(i) + ".onnx"));
  std::string args = "batch " + (d / "m").string() + " -o " + (d / "out").string() + " --target cpu --jobs 1 --exe " +
                     wrapper(d).string();
  pid_t pid = fork();
  if (pid == 0) {
    std::string cmd = std::string("exec ") + REFINERY_EXE + " " + args + " >/dev/null 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), nullptr);
    _exit(127);
  }
  fs::path journal = d / "out/journal.json";
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  std::size_t finished = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    auto j = batch::load_journal(journal);
    if (j && j->size() >= 2) {
      finished = j->size();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_GE(finished, 2u);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  auto before = batch::load_journal(journal);
  ASSERT_TRUE(before);
  ASSERT_LT(before->size(), 6u) << "the batch finished before it was killed";
  std::map<std::string, fs::file_time_type> written;
  for (const auto& job : *before) written[job.key] = fs::last_write_time(job.log);

  CliResult r = run_cli(args + " --resume");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(std::to_string(before->size()) + " resumed from the journal"), std::string::npos) << r.out;
  auto after = batch::load_journal(journal);
  ASSERT_TRUE(after);
  std::set<std::string> keys;
  for (const auto& job : *after) {
    EXPECT_TRUE(keys.insert(job.key).second) << job.key << " twice";
    EXPECT_EQ(job.status, batch::Status::Written) << job.key;
    EXPECT_TRUE(fs::exists(job.output)) << job.key;
    if (written.contains(job.key)) {
      EXPECT_EQ(fs::last_write_time(job.log), written[job.key]) << job.key << " rerun";
    }
  }
  EXPECT_EQ(keys.size(), 6u);
}

TEST(BatchCli, ShardsPartitionTheJobsAndMergeJoinsThem) {
  fs::path d = fresh_dir("shards");
  fs::create_directories(d / "m");
  for (int i = 0; i < 5; ++i) fs::copy_file(kTiny, d / "m" / ("fast" + std::to_string(i) + ".onnx"));
  std::set<std::string> all;
  for (int i = 0; i < 3; ++i) {
    CliResult r = run_cli("batch " + (d / "m").string() + " -o " + (d / "out").string() + " --target cpu,gpu --shard " +
                          std::to_string(i) + "/3 --exe " + wrapper(d).string());
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    auto jobs = batch::load_journal(d / "out" / ("journal.shard-" + std::to_string(i) + "-of-3.json"));
    ASSERT_TRUE(jobs);
    EXPECT_GE(jobs->size(), 3u);
    for (const auto& j : *jobs) EXPECT_TRUE(all.insert(j.key).second) << j.key << " in two shards";
  }
  EXPECT_EQ(all.size(), 10u);
  CliResult r = run_cli("report merge " + (d / "out").string());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  json s = read_json(d / "out/summary.json");
  EXPECT_EQ(s.at("totals").at("jobs"), 10);
  EXPECT_EQ(s.at("totals").at("written"), 10);
}

TEST(BatchCli, LiveBarWhenForcedSummaryOnStdoutAndQuiet) {
  fs::path d = fresh_dir("progress");
  fs::create_directories(d / "m");
  for (const char* m : {"fast1.onnx", "crash1.onnx"}) fs::copy_file(kTiny, d / "m" / m);
  std::string cmd =
      "batch " + (d / "m").string() + " -o " + (d / "out").string() + " --target cpu --exe " + wrapper(d).string();
  CliResult r = run_cli(cmd + " --progress=always --json -");
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("\r\033[Kbatch: [....................] 0/2 jobs, 0 failed, "), std::string::npos) << r.err;
  // Either job may end first; the failure is a line of its own above the bar.
  EXPECT_TRUE(r.err.find("\r\033[K[1/2] cpu/m/crash1.onnx: crashed (") != std::string::npos ||
              r.err.find("\r\033[K[2/2] cpu/m/crash1.onnx: crashed (") != std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("cpu/m/fast1.onnx: written"), std::string::npos) << r.err;
  json s = json::parse(r.out);  // stdout is the summary alone
  EXPECT_EQ(s.at("totals").at("crashed"), 1);
  EXPECT_EQ(s, read_json(d / "out/summary.json"));
  r = run_cli(cmd + " --quiet");
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("refinery batch: 2 jobs: 1 crashed, 1 written"), std::string::npos) << r.out;
}

// Per-model flags reach each child's command line: the rule files as
// absolute paths, each after its own --rules (/bin/true stands in for the
// child; the command is in the summary).
TEST(BatchCli, RulesAndLimitsArePassedToEachChild) {
  fs::path d = fresh_dir("rules");
  fs::create_directories(d / "r");
  std::ofstream(d / "r" / "a.rules") << "(rule a (neg (neg ?x)) => ?x)\n";
  std::ofstream(d / "r" / "b.rules") << "(rule b (relu (relu ?x)) => (relu ?x))\n";
  fs::path cwd = fs::current_path();
  fs::current_path(d);
  CliResult r = run_cli("batch " + kTiny.string() +
                        " -o out --target cpu --time-limit 7 --min-gain 0 --cost-model learned --extractor ilp "
                        "--rules r/a.rules r/b.rules --exe /bin/true --json - --quiet");
  fs::current_path(cwd);
  json s = json::parse(r.out);
  ASSERT_EQ(s.at("jobs").size(), 1u) << r.out << r.err;
  std::string command = s["jobs"][0]["command"].get<std::string>();
  EXPECT_NE(command.find("--time-limit 7 --min-gain 0 --cost-model learned --extractor ilp --rules " +
                         (d / "r" / "a.rules").string() + " --rules " + (d / "r" / "b.rules").string()),
            std::string::npos)
      << command;
  EXPECT_EQ(run_cli("batch " + kTiny.string() + " -o " + (d / "out2").string() + " --target cpu --rules " +
                    (d / "r" / "missing.rules").string())
                .code,
            2);
  EXPECT_EQ(run_cli("batch " + kTiny.string() + " -o " + (d / "out3").string() + " --target cpu --extractor best").code,
            2);
}

TEST(BatchCli, HelpHasAnExample) {
  for (std::string sub : {"batch", "report", "report merge"}) {
    CliResult r = run_cli(sub + " --help");
    EXPECT_EQ(r.code, 0) << sub;
    EXPECT_NE(r.out.find("Example:\n  refinery " + sub), std::string::npos) << sub << ":\n" << r.out;
  }
}

TEST(BatchCli, BadInvocationsExit2) {
  fs::path d = fresh_dir("bad");
  fs::create_directories(d / "empty");
  std::string out = " -o " + (d / "out").string();
  EXPECT_EQ(run_cli("batch /nonexistent/models" + out + " --target cpu").code, 2);
  EXPECT_EQ(run_cli("batch " + (d / "empty").string() + out + " --target cpu").code, 2);
  EXPECT_EQ(run_cli("batch " + kTiny.string() + out + " --target cpu --shard 3/3").code, 2);
  EXPECT_EQ(run_cli("batch " + kTiny.string() + out).code, 2);  // no --target
  EXPECT_EQ(run_cli("report merge " + (d / "empty").string()).code, 2);
  // A target no child could load is found before any job runs: nothing written.
  CliResult unknown = run_cli("batch " + kTiny.string() + out + " --target cpu,loihi9");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("unknown target 'loihi9' (known: gpu, tpu, cpu, "), std::string::npos) << unknown.err;
  EXPECT_FALSE(fs::exists(d / "out"));
  // An input after `--target T` is an input, not a second target.
  CliResult after = run_cli("batch" + out + " --target cpu /nonexistent/after.onnx");
  EXPECT_EQ(after.code, 2);
  EXPECT_EQ(after.err, "refinery: error: /nonexistent/after.onnx: no such file or folder\n");
}

}  // namespace
}  // namespace refinery::testing
