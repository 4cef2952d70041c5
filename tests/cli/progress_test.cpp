// The progress display (cli/progress.h) and the flags around it: a live line
// redrawn in place (--progress=always, as on a terminal), plain lines
// elsewhere, nothing under --quiet; --json output that parses.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <thread>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/progress.h"
#include "tests/cli/cli_runner.h"

namespace refinery::testing {
namespace {

using cli::ProgressDisplay;
using cli::ProgressMode;
using nlohmann::json;

// What `updates` draw in `mode`, as the bytes written.
std::string shown(ProgressMode mode, const std::vector<ProgressUpdate>& updates) {
  std::FILE* f = std::tmpfile();
  {
    ProgressDisplay d("batch", mode, f);
    for (const ProgressUpdate& u : updates) d.update(u);
  }
  std::rewind(f);
  std::string out;
  for (int c; (c = std::fgetc(f)) != EOF;) out += static_cast<char>(c);
  std::fclose(f);
  return out;
}

const std::vector<ProgressUpdate> kBatch{
    {.total = 2, .unit = "jobs", .detail = "0 failed"},
    {.done = 1, .total = 2, .unit = "jobs", .detail = "0 failed", .event = "[1/2] cpu/a.onnx: written (1.2 s)"},
    {.done = 2,
     .total = 2,
     .unit = "jobs",
     .detail = "1 failed",
     .event = "[2/2] cpu/b.onnx: crashed (0.5 s): killed by SIGSEGV",
     .notable = true}};

TEST(ProgressDisplay, PlainPrintsEveryEventAndTheStatusWhenThePhaseChanges) {
  EXPECT_EQ(shown(ProgressMode::Plain, kBatch),
            "batch: 0/2 jobs, 0 failed, 0.0 s\n"
            "[1/2] cpu/a.onnx: written (1.2 s)\n"
            "[2/2] cpu/b.onnx: crashed (0.5 s): killed by SIGSEGV\n");
  EXPECT_EQ(shown(ProgressMode::Plain, {{.phase = "saturate simplify", .detail = "iteration 1, 40 nodes"},
                                        {.phase = "saturate simplify", .detail = "iteration 2, 55 nodes"},
                                        {.phase = "extract (greedy)"}}),
            "batch: saturate simplify, iteration 1, 40 nodes, 0.0 s\n"
            "batch: extract (greedy), 0.0 s\n");
}

TEST(ProgressDisplay, LiveRedrawsOneLineWithABarAndShowsFailuresAboveIt) {
  std::string out = shown(ProgressMode::Live, kBatch);
  EXPECT_NE(out.find("\r\033[Kbatch: [....................] 0/2 jobs, 0 failed, 0.0 s"), std::string::npos) << out;
  EXPECT_NE(out.find("\r\033[Kbatch: [##########..........] 1/2 jobs, 0 failed, 0.0 s, ETA 0.0 s"), std::string::npos)
      << out;
  EXPECT_NE(out.find("\r\033[K[2/2] cpu/b.onnx: crashed (0.5 s): killed by SIGSEGV\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("cpu/a.onnx"), std::string::npos) << "a job written is no line of its own on the live line";
  EXPECT_TRUE(out.ends_with("\r\033[K")) << "the live line is cleared at the end: " << out;
}

// `refinery batch` moves its live line's clock from the pool's waits: a
// thread of the display's own would make the pool exec its children
// instead of forking them (batch/pool.h).
TEST(ProgressDisplay, TicksMoveTheLiveClockWithoutAThread) {
  auto threads = [] { return std::distance(std::filesystem::directory_iterator("/proc/self/task"), {}); };
  auto before = threads();
  std::FILE* f = std::tmpfile();
  auto size = [f] {
    std::fflush(f);
    return std::ftell(f);
  };
  {
    ProgressDisplay d("batch", ProgressMode::Live, f, cli::ProgressClock::Ticks);
    EXPECT_EQ(threads(), before);
    d.update(kBatch[0]);
    long drawn = size();
    d.tick();  // the clock has not moved on a redraw's worth
    EXPECT_EQ(size(), drawn);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    d.tick();
    EXPECT_GT(size(), drawn);
  }
  std::rewind(f);
  std::string out;
  for (int c; (c = std::fgetc(f)) != EOF;) out += static_cast<char>(c);
  std::fclose(f);
  EXPECT_EQ(out.find("\r\033[Kbatch: [....................] 0/2 jobs, 0 failed, 0.0 s"), 0u) << out;
  EXPECT_NE(out.find("0/2 jobs, 0 failed, 0.3 s"), std::string::npos) << out;
}

TEST(ProgressDisplay, NeverPrintsNothing) { EXPECT_EQ(shown(ProgressMode::Never, kBatch), ""); }

const std::string kTiny = source_path("examples/tiny_cnn.onnx");

std::string progress_scratch(const std::string& name) { return scratch_file("refinery_progress_test", name).string(); }

TEST(ProgressCli, OptimizeShowsEachStageAndIterationWhenForcedAndNothingWhenQuiet) {
  CliResult r = run_cli("optimize " + kTiny + " -o " + progress_scratch("a.onnx") + " --progress=always");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* want : {"\r\033[Koptimize: seed, ", "\r\033[Koptimize: saturate simplify, iteration 1, ",
                           "optimize: saturate explore, iteration 2, ", "\r\033[Koptimize: extract (greedy), ",
                           "\r\033[Koptimize: validate (3 samples), "})
    EXPECT_NE(r.err.find(want), std::string::npos) << want << "\n" << r.err;
  EXPECT_EQ(r.out.find("optimize: seed"), std::string::npos) << "progress is on stderr, not stdout";
  // Not a terminal: one plain line per stage.
  r = run_cli("optimize " + kTiny + " -o " + progress_scratch("b.onnx"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("optimize: saturate explore, iteration 1, "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << r.err;
  r = run_cli("optimize " + kTiny + " -o " + progress_scratch("c.onnx") + " --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST(ProgressCli, OptimizeReportOnStdoutParses) {
  CliResult r = run_cli("optimize " + kTiny + " -o " + progress_scratch("d.onnx") + " --json - --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(r.out);  // stdout is the report alone
  EXPECT_EQ(j.at("target"), "cpu");
  EXPECT_TRUE(j.contains("saturation"));
}

TEST(ProgressCli, RulesVerifyCountsRulesWhenForcedAndItsJsonParses) {
  const std::string verify = "rules verify --rule add-comm --rule mul-comm --rule max-comm --rule min-comm";
  CliResult r = run_cli(verify + " --progress=always --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(r.out);  // no table on stdout with --json -
  std::size_t n = j.at("rules").size();
  ASSERT_GT(n, 1u);
  EXPECT_NE(r.err.find(fmt::format("verify: [....................] 0/{} rules, 0 refuted", n)), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(fmt::format("verify: [####################] {}/{} rules, 0 refuted", n, n)), std::string::npos)
      << r.err;
  r = run_cli(verify + " --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST(ProgressCli, RulesListAndInspectWriteJson) {
  CliResult r = run_cli("rules list --family elementwise --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  json rules = json::parse(r.out);
  ASSERT_FALSE(rules.empty());
  for (const char* key : {"name", "family", "kind", "file", "line", "text"}) EXPECT_TRUE(rules[0].contains(key)) << key;
  EXPECT_EQ(rules[0].at("family"), "elementwise");

  std::string file = progress_scratch("inspect.json");
  r = run_cli("inspect " + kTiny + " --json " + file);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  json j = json::parse(slurp(file));
  EXPECT_EQ(j.at("model"), kTiny);
  EXPECT_GT(j.at("nodes").get<int>(), 0);
  EXPECT_GT(j.at("flops").get<long>(), 0);
  EXPECT_EQ(j.at("inputs").size(), 1u);
  EXPECT_TRUE(j.at("ops").contains("Conv"));
}

}  // namespace
}  // namespace refinery::testing
