// The process pool: runs commands as child processes, at most `jobs` at a
// time, each in its own process group with its output captured to a log
// file, an address-space limit and a timeout (SIGTERM to the group, then
// SIGKILL). A child that crashes, hangs or runs out of memory ends with its
// reason in its ProcessResult; the pool goes on.
// A child is an exec of argv[0], or, with PoolOptions::in_process, a fork
// of this process that calls it with the argv: refinery's children are
// refinery itself, and an exec pays its start again (libtorch's shared
// libraries, 0.9 s a child, half the time of a small model's optimize).
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace refinery::batch {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is the executable's path
  std::filesystem::path log;      // stdout and stderr; stdin is /dev/null
};

struct PoolOptions {
  std::size_t jobs = 1;            // children at once
  double timeout_s = 0;            // wall-clock limit per child; 0: none
  std::uint64_t memory_bytes = 0;  // RLIMIT_AS per child; 0: none
  double kill_grace_s = 2;         // after SIGTERM, SIGKILL this much later
  // When set, each child is a fork of this process that runs
  // in_process(argc, argv) with the spec's argv and exits with its result
  // (argv[0] is not exec'd), provided this process has one thread then (a
  // fork copies only the calling thread, so a lock another thread held
  // would stay held in the child); else argv[0] is exec'd.
  std::function<int(int, char**)> in_process;
  // Called in the calling thread each time the pool has waited for its
  // children (at most 50 ms apart while any runs): a live display's clock
  // moves on without a thread of its own, so children can still be forks.
  std::function<void()> on_wait;
};

struct ProcessResult {
  int exit_code = -1;  // -1 when a signal ended it
  int signal = 0;
  bool timed_out = false;  // the pool sent SIGTERM after the timeout
  bool killed = false;     // ... and SIGKILL after the grace period
  double wall_seconds = 0, cpu_seconds = 0;
  std::int64_t peak_rss_kb = 0;
};

// Runs every spec; calls on_finish(index, result) as each child ends (in the
// calling thread, in order of ending). Children get SIGKILL if this process
// dies (PR_SET_PDEATHSIG).
void run_pool(const std::vector<ProcessSpec>& specs, const PoolOptions& options,
              const std::function<void(std::size_t, const ProcessResult&)>& on_finish);

}  // namespace refinery::batch
