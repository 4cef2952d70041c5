#include "prove/z3/budget.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

namespace refinery::prove {
namespace {

// A query's limit is the CPU time of the thread that runs it: time spent
// waiting for a core (here, asleep) does not count, so a proof's outcome does
// not depend on the machine's load. With a wall-clock limit the budget below
// would be spent by the sleep.
TEST(Budget, CountsTheThreadsCpuTimeNotTheWallClock) {
  z3::context ctx;
  Budget budget(ctx, 300);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_FALSE(budget.spent());
  EXPECT_GT(budget.left_ms(), 200u);
}

// The wall clock still ends a query, at kWallFactor times the limit.
TEST(Budget, TheWallClockIsCappedAtAMultipleOfTheLimit) {
  z3::context ctx;
  Budget budget(ctx, 20);
  std::this_thread::sleep_for(std::chrono::milliseconds(20 * Budget::kWallFactor + 100));
  EXPECT_TRUE(budget.spent());
  EXPECT_EQ(budget.left_ms(), 0u);
}

// A check Z3 cannot finish (cubes of positive integers summing to a cube)
// is interrupted when the thread's CPU time is spent: unknown, "timeout".
TEST(Budget, ACheckPastTheLimitIsATimeout) {
  z3::context ctx;
  z3::solver s(ctx);
  z3::expr x = ctx.int_const("x"), y = ctx.int_const("y"), z = ctx.int_const("z");
  s.add(x > 0 && y > 0 && z > 0 && x * x * x + y * y * y == z * z * z);
  Budget budget(ctx, 200);
  std::string why;
  auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(budget.check(s, why), z3::unknown);
  EXPECT_EQ(why, "timeout");
  EXPECT_TRUE(budget.spent());
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(200 * Budget::kWallFactor + 1000));
  // A second check on a spent budget does not start.
  EXPECT_EQ(budget.check(s, why), z3::unknown);
  EXPECT_EQ(why, "timeout");
}

}  // namespace
}  // namespace refinery::prove
