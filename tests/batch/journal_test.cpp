// The journal round-trips every field, and is replaced whole.
#include <gtest/gtest.h>

#include "batch/journal.h"
#include "batch/summary.h"
#include "ir/io.h"

namespace refinery::batch {
namespace {

namespace fs = std::filesystem;

TEST(Journal, RoundTripsEveryField) {
  fs::path d = fs::temp_directory_path() / "refinery_batch_journal";
  fs::remove_all(d);
  fs::create_directories(d);
  JobResult a{.key = "cpu/a.onnx",
              .target = "cpu",
              .model = "m/a.onnx",
              .output = "o/a.onnx",
              .report = "o/a.onnx.report.json",
              .log = "o/a.onnx.log",
              .status = Status::Written,
              .exit_code = 0,
              .wall_seconds = 1.5,
              .cpu_seconds = 1.25,
              .peak_rss_kb = 1234,
              .figures = ReportFigures{"optimized", 10, 8, 2e-9, 1e-9, true, 0, "joules per time step"}};
  JobResult b{.key = "cpu/b.onnx",
              .target = "cpu",
              .model = "m/b.onnx",
              .log = "o/b.onnx.log",
              .status = Status::Crashed,
              .signal = 11,
              .reason = "killed by SIGSEGV"};
  fs::path file = journal_path(d, Shard{1, 3});
  EXPECT_EQ(file.filename(), "journal.shard-1-of-3.json");
  ASSERT_TRUE(save_journal(file, {a, b}));
  auto back = load_journal(file);
  ASSERT_TRUE(back) << back.error().str();
  ASSERT_EQ(back->size(), 2u);
  const JobResult& x = (*back)[0];
  EXPECT_EQ(x.key, a.key);
  EXPECT_EQ(x.status, Status::Written);
  EXPECT_EQ(x.peak_rss_kb, 1234);
  ASSERT_TRUE(x.figures);
  EXPECT_EQ(x.figures->nodes_after, 8u);
  EXPECT_EQ(x.figures->validation_passed, true);
  EXPECT_EQ(x.figures->cost_unit, "joules per time step");
  EXPECT_EQ((*back)[1].status, Status::Crashed);
  EXPECT_EQ((*back)[1].signal, 11);
  EXPECT_FALSE((*back)[1].figures);

  Summary s = make_summary({b, a});
  EXPECT_EQ(s.jobs[0].key, "cpu/a.onnx");
  EXPECT_EQ(s.failed(), 1u);
  EXPECT_EQ(s.totals().at("crashed"), 1u);
  EXPECT_EQ(s.totals().at("jobs"), 2u);
}

TEST(Journal, AbsentIsEmptyAndGarbageIsAnError) {
  fs::path d = fs::temp_directory_path() / "refinery_batch_journal_bad";
  fs::create_directories(d);
  EXPECT_TRUE(load_journal(d / "none.json")->empty());
  ASSERT_TRUE(ir::write_files_atomic({{d / "bad.json", "{\"x\": 1}"}}));
  EXPECT_FALSE(load_journal(d / "bad.json"));
}

}  // namespace
}  // namespace refinery::batch
