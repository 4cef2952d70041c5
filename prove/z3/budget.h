#pragma once
// A Z3 query's time limit, counted in CPU time of the thread that runs it.
//
// Z3 solves on the caller's thread. A wall-clock limit made a proof's outcome
// depend on what else ran on the machine: with three builds sharing two
// cores, a query that needs one second of CPU got a third of a core and timed
// out, and a rule proved on a quiet machine came out unknown
// (RuleVerify.CounterexamplesAreReplayed failed so under load). The budget
// counts the thread's own CPU time, so a query gets the same work however
// loaded the machine is. Wall time is still capped, at kWallFactor times the
// limit, so that a query on a machine too busy to run it still ends.
//
// Z3 does not always honour its own timeout: the budget's watchdog thread
// interrupts the context once either limit is spent; `check` reports that as
// unknown, whether Z3 returned or threw.
#include <atomic>
#include <chrono>
#include <ctime>
#include <string>
#include <thread>

#include <z3++.h>

namespace refinery::prove {

class Budget {
 public:
  static constexpr unsigned kWallFactor = 8;

  // Starts counting now, on the calling thread (the one that will run Z3).
  Budget(z3::context& ctx, unsigned limit_ms);
  ~Budget();
  Budget(const Budget&) = delete;
  Budget& operator=(const Budget&) = delete;

  // Milliseconds of the thread's CPU time left; 0 once it, or the wall cap, is spent.
  unsigned left_ms() const;
  bool spent() const { return left_ms() == 0; }
  // A check within the budget: unknown, with the reason "timeout", once the
  // budget is spent, before or during the check. The solver's own timeout
  // is set to the wall time left (the watchdog keeps the CPU limit).
  z3::check_result check(z3::solver& s, std::string& reason_unknown) const;

 private:
  unsigned wall_left_ms() const;
  long long cpu_used_ms() const;

  unsigned limit_ms_;
  clockid_t clock_;
  long long cpu_start_ms_;
  std::chrono::steady_clock::time_point wall_end_;
  std::atomic<bool> done_{false};
  std::thread watchdog_;
};

}  // namespace refinery::prove
