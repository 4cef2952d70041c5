// ir::write_files_atomic, which every output of the CLI goes through: a
// failure leaves the old files as they were and no temp file behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "ir/io.h"

namespace refinery::ir {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir() {
  fs::path d = fs::temp_directory_path() / ("refinery_io_test_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::size_t entries(const fs::path& d) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d)) ++n;
  return n;
}

TEST(WriteFilesAtomic, WritesAndReplacesWholeFiles) {
  fs::path d = fresh_dir();
  ASSERT_TRUE(write_files_atomic({{d / "a.json", "old"}}));
  ASSERT_TRUE(write_files_atomic({{d / "a.json", "new and longer"}, {d / "b.json", "b"}}));
  EXPECT_EQ(*read_file(d / "a.json"), "new and longer");
  EXPECT_EQ(*read_file(d / "b.json"), "b");
  EXPECT_EQ(entries(d), 2u) << "no temp file is left";
}

TEST(WriteFilesAtomic, AFailureLeavesTheOldFilesAndNoTemps) {
  fs::path d = fresh_dir();
  ASSERT_TRUE(write_files_atomic({{d / "a.json", "old"}}));
  // The second file cannot be created: the first is not replaced either.
  auto r = write_files_atomic({{d / "a.json", "new"}, {d / "missing/b.json", "b"}});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().str().find("missing/b.json"), std::string::npos) << r.error().str();
  EXPECT_EQ(*read_file(d / "a.json"), "old");
  EXPECT_EQ(entries(d), 1u) << "the temp of a.json is removed";
}

TEST(WriteFilesAtomic, AKilledWriterLeavesTheOldFileWhole) {
  fs::path d = fresh_dir();
  ASSERT_TRUE(write_files_atomic({{d / "a.json", "old"}}));
  // A child that writes a large file and is killed at once, mid-write (or
  // before it began): the file is the old one or the whole new one.
  std::string big(64 << 20, 'x');
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    (void)write_files_atomic({{d / "a.json", big}});
    _exit(0);
  }
  usleep(20'000);
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  std::string now = *read_file(d / "a.json");
  EXPECT_TRUE(now == "old" || now == big) << "a.json has " << now.size() << " bytes";
}

}  // namespace
}  // namespace refinery::ir
