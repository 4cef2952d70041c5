// The process pool: exit codes, signals, timeouts (SIGTERM, then SIGKILL for
// a child that ignores it), the memory limit and logs, with /bin/sh children.
#include <gtest/gtest.h>

#include <unistd.h>

#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <fstream>
#include <sstream>

#include "batch/pool.h"

namespace refinery::batch {
namespace {

namespace fs = std::filesystem;

fs::path log_dir() {
  fs::path d = fs::temp_directory_path() / "refinery_batch_pool";
  fs::create_directories(d);
  return d;
}

ProcessSpec sh(const std::string& script, const std::string& log) {
  return {{"/bin/sh", "-c", script}, log_dir() / log};
}

std::vector<ProcessResult> run(const std::vector<ProcessSpec>& specs, PoolOptions options) {
  std::vector<ProcessResult> results(specs.size());
  std::vector<bool> seen(specs.size());
  run_pool(specs, options, [&](std::size_t i, const ProcessResult& r) {
    EXPECT_FALSE(seen[i]) << "job " << i << " finished twice";
    seen[i] = true;
    results[i] = r;
  });
  for (std::size_t i = 0; i < specs.size(); ++i) EXPECT_TRUE(seen[i]) << "job " << i << " never finished";
  return results;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Pool, ExitCodesSignalsAndLogs) {
  auto r = run({sh("echo out; echo err >&2; exit 3", "a.log"), sh("kill -SEGV $$", "b.log"), sh("exit 0", "c.log")},
               {.jobs = 2});
  EXPECT_EQ(r[0].exit_code, 3);
  EXPECT_EQ(r[0].signal, 0);
  EXPECT_EQ(slurp(log_dir() / "a.log"), "out\nerr\n");
  EXPECT_EQ(r[1].exit_code, -1);
  EXPECT_EQ(r[1].signal, SIGSEGV);
  EXPECT_EQ(r[2].exit_code, 0);
  EXPECT_GT(r[2].peak_rss_kb, 0);
}

TEST(Pool, TimeoutSendsSigtermThenSigkill) {
  auto r = run({sh("sleep 30", "t.log"), sh("trap '' TERM; sleep 30", "k.log"), sh("exit 0", "ok.log")},
               {.jobs = 3, .timeout_s = 0.3, .kill_grace_s = 0.3});
  EXPECT_TRUE(r[0].timed_out);
  EXPECT_FALSE(r[0].killed);
  EXPECT_EQ(r[0].signal, SIGTERM);
  EXPECT_LT(r[0].wall_seconds, 5);
  EXPECT_TRUE(r[1].timed_out);
  EXPECT_TRUE(r[1].killed);
  EXPECT_EQ(r[1].signal, SIGKILL);
  EXPECT_FALSE(r[2].timed_out);
  EXPECT_EQ(r[2].exit_code, 0);
}

TEST(Pool, MemoryLimitStopsAGreedyChild) {
  // 64 MiB of address space: dd cannot allocate a 200 MB block; a 1 MB block
  // still works.
  auto r = run({sh("dd if=/dev/zero of=/dev/null bs=200M count=1", "m.log"),
                sh("dd if=/dev/zero of=/dev/null bs=1M count=1", "m2.log")},
               {.jobs = 1, .memory_bytes = 64u << 20});
  EXPECT_NE(r[0].exit_code, 0);
  EXPECT_NE(slurp(log_dir() / "m.log").find("memory"), std::string::npos) << slurp(log_dir() / "m.log");
  EXPECT_EQ(r[1].exit_code, 0) << slurp(log_dir() / "m2.log");
}

TEST(Pool, JobsAtOnceAreBounded) {
  // Four 0.3 s sleeps, two at a time: at least 0.6 s in all.
  std::vector<ProcessSpec> specs;
  for (int i = 0; i < 4; ++i) specs.push_back(sh("sleep 0.3", "s" + std::to_string(i) + ".log"));
  auto start = std::chrono::steady_clock::now();
  run(specs, {.jobs = 2});
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(s, 0.6);
  EXPECT_LT(s, 1.2 * 4);
}

TEST(Pool, MissingExecutableIsExit127) {
  auto r = run({{{"/nonexistent/refinery"}, log_dir() / "x.log"}}, {.jobs = 1});
  EXPECT_EQ(r[0].exit_code, 127);
}

// A child that runs this process's own command line is a fork that calls
// the entry with the spec's argv, not an exec of argv[0] (here /bin/echo,
// which would print its argument and exit 0); what the parent buffered is
// not written again by the child; timeouts reach it as they reach an exec.
int entry(int argc, char** argv) {
  std::string what = argv[1];
  if (what == "sleep") ::sleep(30);
  std::printf("in process: %s, %d args\n", argv[1], argc);
  std::fprintf(stderr, "err\n");
  return std::atoi(argv[1]);
}

TEST(Pool, InProcessChildrenAreForksThatRunTheEntry) {
  std::printf("buffered by the parent, not flushed yet");
  auto r = run({{{"/bin/echo", "7"}, log_dir() / "f.log"}, {{"/bin/echo", "sleep"}, log_dir() / "s.log"}},
               {.jobs = 2, .timeout_s = 0.5, .kill_grace_s = 0.3, .in_process = entry});
  std::printf("\n");
  EXPECT_EQ(r[0].exit_code, 7);
  // stdout to a file is fully buffered, stderr not: as in an exec'd child.
  EXPECT_EQ(slurp(log_dir() / "f.log"), "err\nin process: 7, 2 args\n");
  EXPECT_TRUE(r[1].timed_out);
  EXPECT_EQ(r[1].signal, SIGTERM);
  EXPECT_LT(r[1].wall_seconds, 5);
}

TEST(Pool, WithASecondThreadTheChildIsAnExec) {
  // A fork copies only the calling thread: with another one running, the
  // pool execs argv[0] instead.
  std::mutex m;
  std::condition_variable cv;
  bool stop = false;
  std::thread other([&] {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return stop; });
  });
  auto r = run({{{"/bin/echo", "7"}, log_dir() / "e.log"}}, {.jobs = 1, .in_process = entry});
  {
    std::lock_guard lock(m);
    stop = true;
  }
  cv.notify_one();
  other.join();
  EXPECT_EQ(r[0].exit_code, 0);
  EXPECT_EQ(slurp(log_dir() / "e.log"), "7\n");
}

TEST(Pool, OnWaitIsCalledInTheCallingThreadWhileAChildRuns) {
  int calls = 0;
  bool elsewhere = false;
  auto self = std::this_thread::get_id();
  auto r = run({sh("sleep 0.5", "w.log")}, {.jobs = 1, .on_wait = [&] {
                                               ++calls;
                                               elsewhere = elsewhere || std::this_thread::get_id() != self;
                                             }});
  EXPECT_EQ(r[0].exit_code, 0);
  EXPECT_GE(calls, 3);  // waits of at most 50 ms over half a second
  EXPECT_FALSE(elsewhere);
}

}  // namespace
}  // namespace refinery::batch
