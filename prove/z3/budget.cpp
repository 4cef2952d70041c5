#include "prove/z3/budget.h"

#include <pthread.h>

#include <algorithm>

namespace refinery::prove {

namespace {

long long clock_ms(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace

Budget::Budget(z3::context& ctx, unsigned limit_ms)
    : limit_ms_(limit_ms),
      wall_end_(std::chrono::steady_clock::now() + std::chrono::milliseconds(limit_ms) * kWallFactor) {
  if (pthread_getcpuclockid(pthread_self(), &clock_) != 0) clock_ = CLOCK_THREAD_CPUTIME_ID;
  cpu_start_ms_ = clock_ms(clock_);
  // CLOCK_THREAD_CPUTIME_ID read on the watchdog's thread would be the
  // watchdog's own time: without the thread's clock id, the wall cap alone.
  bool own_clock = clock_ != CLOCK_THREAD_CPUTIME_ID;
  watchdog_ = std::thread([this, &ctx, own_clock] {
    while (!done_ && std::chrono::steady_clock::now() < wall_end_ && (!own_clock || cpu_used_ms() < limit_ms_))
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!done_) ctx.interrupt();
  });
}

Budget::~Budget() {
  done_ = true;
  watchdog_.join();
}

long long Budget::cpu_used_ms() const { return clock_ms(clock_) - cpu_start_ms_; }

unsigned Budget::wall_left_ms() const {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(wall_end_ - std::chrono::steady_clock::now());
  return static_cast<unsigned>(std::max<long long>(left.count(), 0));
}

unsigned Budget::left_ms() const {
  long long cpu_left = static_cast<long long>(limit_ms_) - cpu_used_ms();
  return wall_left_ms() == 0 ? 0u : static_cast<unsigned>(std::max<long long>(cpu_left, 0));
}

z3::check_result Budget::check(z3::solver& s, std::string& reason_unknown) const {
  if (spent()) {
    reason_unknown = "timeout";
    return z3::unknown;
  }
  z3::params p(s.ctx());
  p.set("timeout", std::max(wall_left_ms(), 1u));  // Z3 reads a solver's parameters at each check
  s.set(p);
  try {
    z3::check_result r = s.check();
    if (r == z3::unknown) reason_unknown = spent() ? "timeout" : s.reason_unknown();
    return r;
  } catch (const z3::exception& e) {  // interrupted inside a call that reports it so
    reason_unknown = spent() ? "timeout" : std::string("z3: ") + e.msg();
    return z3::unknown;
  }
}

}  // namespace refinery::prove
