// The progress display: a bar redrawn in place on a terminal, a plain line
// per job elsewhere.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "batch/progress.h"

namespace refinery::batch {
namespace {

std::string shown(bool live, const std::vector<JobResult>& jobs) {
  std::FILE* f = std::tmpfile();
  Progress p(jobs.size(), live, f);
  for (const JobResult& j : jobs) p.finished(j);
  p.finish();
  std::rewind(f);
  std::string out;
  for (int c; (c = std::fgetc(f)) != EOF;) out += static_cast<char>(c);
  std::fclose(f);
  return out;
}

const std::vector<JobResult> kJobs{
    {.key = "cpu/a.onnx", .status = Status::Written, .wall_seconds = 1.25},
    {.key = "cpu/b.onnx", .status = Status::Crashed, .reason = "killed by SIGSEGV", .wall_seconds = 0.5}};

TEST(Progress, PlainLinePerJobWithoutATerminal) {
  EXPECT_EQ(shown(false, kJobs),
            "[1/2] cpu/a.onnx: written (1.2 s)\n"
            "[2/2] cpu/b.onnx: crashed (0.5 s): killed by SIGSEGV\n");
}

TEST(Progress, LiveBarWithDoneFailedElapsedAndEta) {
  std::string out = shown(true, kJobs);
  EXPECT_NE(out.find("0/2 done, 0 failed, 00:00 elapsed, ETA --:--"), std::string::npos) << out;
  EXPECT_NE(out.find("\r\033[K[2/2] cpu/b.onnx: crashed (0.5 s): killed by SIGSEGV\n"), std::string::npos) << out;
  EXPECT_NE(out.find("[##############################] 2/2 done, 1 failed, 00:00 elapsed, ETA 00:00"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("cpu/a.onnx"), std::string::npos) << "a job written is not a line of its own on the bar";
}

}  // namespace
}  // namespace refinery::batch
