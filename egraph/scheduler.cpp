#include "egraph/scheduler.h"

#include <algorithm>

namespace refinery::egraph {

namespace {
// a << shift, saturating at SIZE_MAX.
std::size_t shl_sat(std::size_t a, std::size_t shift) {
  constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
  if (a == 0) return 0;
  if (shift >= 64 || a > (kMax >> shift)) return kMax;
  return a << shift;
}
}  // namespace

BackoffScheduler::RuleStats& BackoffScheduler::stats(std::size_t rule) {
  while (stats_.size() <= rule) stats_.push_back(RuleStats{0, 0, 0, config_.match_limit, config_.ban_length});
  return stats_[rule];
}

std::size_t BackoffScheduler::threshold(const RuleStats& s) const { return shl_sat(s.match_limit, s.times_banned); }

std::optional<std::size_t> BackoffScheduler::search_limit(std::size_t rule, std::size_t iteration) {
  RuleStats& s = stats(rule);
  if (iteration < s.banned_until) return std::nullopt;
  std::size_t t = threshold(s);
  // One more than the threshold is enough to know the rule must be banned.
  return t == std::numeric_limits<std::size_t>::max() ? t : t + 1;
}

bool BackoffScheduler::accept(std::size_t rule, std::size_t iteration, std::size_t matches) {
  RuleStats& s = stats(rule);
  if (matches > threshold(s)) {
    std::size_t ban = shl_sat(s.ban_length, s.times_banned);
    s.times_banned += 1;
    s.banned_until = iteration + ban;
    return false;
  }
  s.times_applied += 1;
  return true;
}

bool BackoffScheduler::can_stop(std::size_t iteration) {
  std::size_t min_ban = std::numeric_limits<std::size_t>::max();
  for (const RuleStats& s : stats_)
    if (s.banned_until > iteration) min_ban = std::min(min_ban, s.banned_until);
  if (min_ban == std::numeric_limits<std::size_t>::max()) return true;
  // Fast-forward: shift every ban so that the earliest one ends now.
  std::size_t delta = min_ban - iteration;
  for (RuleStats& s : stats_)
    if (s.banned_until > iteration) s.banned_until -= delta;
  return false;
}

}  // namespace refinery::egraph
