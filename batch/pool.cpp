#include "batch/pool.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <chrono>
#include <csignal>
#include <cstring>
#include <map>

namespace refinery::batch {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Running {
  std::size_t index;
  Clock::time_point start;
  bool termed = false, killed = false;
  Clock::time_point termed_at;
};

// In the child, after vfork or fork: its own process group, killed with the
// parent, stdin from /dev/null, stdout and stderr to the log, the address-
// space limit. Only async-signal-safe calls, no writes to memory the parent
// reads (a vfork child shares it). False: the parent is gone.
bool setup_child(const char* log, std::uint64_t memory_bytes, pid_t parent, const sigset_t* mask) {
  sigprocmask(SIG_SETMASK, mask, nullptr);  // the parent blocks SIGCHLD; the child must not inherit that
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) return false;  // the parent died before prctl
  int null = open("/dev/null", O_RDONLY);
  if (null >= 0) dup2(null, 0);
  int out = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out >= 0) {
    dup2(out, 1);
    dup2(out, 2);
  }
  if (memory_bytes) {
    rlimit limit{memory_bytes, memory_bytes};
    setrlimit(RLIMIT_AS, &limit);
  }
  return true;
}

[[noreturn]] void exec_child(char* const* argv, const char* log, std::uint64_t memory_bytes, pid_t parent,
                             const sigset_t* mask) {
  if (!setup_child(log, memory_bytes, parent, mask)) _exit(127);
  execv(argv[0], argv);
  const char msg[] = "refinery: error: cannot run the executable\n";
  (void)!write(2, msg, sizeof msg - 1);
  _exit(127);
}

// One thread: a fork copies only the calling thread (a live progress
// display has a second one).
bool single_threaded() {
  std::error_code ec;
  std::size_t n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/task", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++n;
  return !ec && n == 1;
}

pid_t start(const ProcessSpec& spec, const PoolOptions& options, const sigset_t& mask) {
  // Everything the child needs is prepared before vfork: no allocation after.
  std::vector<char*> argv;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::string log = spec.log.string();
  pid_t parent = getpid();
  if (options.in_process && single_threaded()) {
    // The child runs the command in a copy of this process: nothing the
    // parent buffered may be written again by it.
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
      if (!setup_child(log.c_str(), options.memory_bytes, parent, &mask)) _exit(127);
      int code = options.in_process(static_cast<int>(spec.argv.size()), argv.data());
      std::fflush(nullptr);
      _exit(code);
    }
    if (pid > 0) setpgid(pid, pid);
    return pid;
  }
  // vfork: the child shares our memory until execv, so that starting a child
  // does not copy the page tables of a large parent (posix_spawn does the
  // same); exec_child makes only async-signal-safe calls and writes nothing.
  pid_t pid = vfork();
  if (pid == 0) exec_child(argv.data(), log.c_str(), options.memory_bytes, parent, &mask);
  if (pid > 0) setpgid(pid, pid);  // also here, so that a kill before the child's own call reaches the group
  return pid;
}

}  // namespace

void run_pool(const std::vector<ProcessSpec>& specs, const PoolOptions& options,
              const std::function<void(std::size_t, const ProcessResult&)>& on_finish) {
  std::map<pid_t, Running> running;
  std::size_t next = 0;
  std::size_t jobs = options.jobs ? options.jobs : 1;
  // SIGCHLD is blocked and waited for (sigtimedwait), so that a child's end
  // is seen at once, without polling; the old mask is restored at the end.
  sigset_t chld, old_mask;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &chld, &old_mask);
  while (next < specs.size() || !running.empty()) {
    while (next < specs.size() && running.size() < jobs) {
      pid_t pid = start(specs[next], options, old_mask);
      if (pid < 0) {
        ProcessResult failed;
        failed.exit_code = 127;
        on_finish(next++, failed);
        continue;
      }
      running[pid] = {next++, Clock::now()};
    }
    int status = 0;
    rusage usage{};
    pid_t pid = wait4(-1, &status, WNOHANG, &usage);
    if (pid > 0) {
      auto it = running.find(pid);
      if (it == running.end()) continue;  // not one of ours
      ProcessResult r;
      r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      r.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
      r.timed_out = it->second.termed;
      r.killed = it->second.killed;
      r.wall_seconds = seconds_since(it->second.start);
      r.cpu_seconds = usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
                      1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
      r.peak_rss_kb = usage.ru_maxrss;
      std::size_t index = it->second.index;
      running.erase(it);
      // Whatever is left of the group (a grandchild) goes with it.
      kill(-pid, SIGKILL);
      on_finish(index, r);
      continue;
    }
    for (auto& [child, run] : running) {
      if (options.timeout_s > 0 && !run.termed && seconds_since(run.start) > options.timeout_s) {
        run.termed = true;
        run.termed_at = Clock::now();
        kill(-child, SIGTERM);
      } else if (run.termed && !run.killed && seconds_since(run.termed_at) > options.kill_grace_s) {
        run.killed = true;
        kill(-child, SIGKILL);
      }
    }
    // Until a child ends, or the next timeout check.
    timespec wait{0, 50'000'000};
    sigtimedwait(&chld, nullptr, &wait);
    if (options.on_wait) options.on_wait();
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
}

}  // namespace refinery::batch
