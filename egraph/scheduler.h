// Rule schedulers: which rules the Runner searches in an iteration and
// whether it may declare saturation. SimpleScheduler runs every rule every
// time; BackoffScheduler (egg's default) bans a rule that matches too much,
// doubling its threshold and ban length each time it is banned.
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <vector>

namespace refinery::egraph {

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  // Match limit for searching rule `rule` now; nullopt: skip it (banned).
  virtual std::optional<std::size_t> search_limit(std::size_t rule, std::size_t iteration) = 0;
  // After searching: keep these `matches` for application? (false: banned)
  virtual bool accept(std::size_t rule, std::size_t iteration, std::size_t matches) = 0;
  // Called when nothing changed: may the runner stop as saturated?
  virtual bool can_stop(std::size_t iteration) = 0;
};

class SimpleScheduler final : public Scheduler {
 public:
  std::optional<std::size_t> search_limit(std::size_t, std::size_t) override {
    return std::numeric_limits<std::size_t>::max();
  }
  bool accept(std::size_t, std::size_t, std::size_t) override { return true; }
  bool can_stop(std::size_t) override { return true; }
};

struct BackoffConfig {
  std::size_t match_limit = 1'000;  // initial per-rule match threshold
  std::size_t ban_length = 5;       // initial ban, in iterations
};

class BackoffScheduler final : public Scheduler {
 public:
  struct RuleStats {
    std::size_t times_applied = 0;
    std::size_t banned_until = 0;
    std::size_t times_banned = 0;
    std::size_t match_limit = 0;
    std::size_t ban_length = 0;
  };

  explicit BackoffScheduler(BackoffConfig config = {}) : config_(config) {}

  // Per-rule overrides (rules are numbered by their index in the rule list).
  void set_match_limit(std::size_t rule, std::size_t limit) { stats(rule).match_limit = limit; }
  void set_ban_length(std::size_t rule, std::size_t length) { stats(rule).ban_length = length; }
  void do_not_ban(std::size_t rule) { stats(rule).match_limit = std::numeric_limits<std::size_t>::max(); }
  const RuleStats& rule_stats(std::size_t rule) { return stats(rule); }

  std::optional<std::size_t> search_limit(std::size_t rule, std::size_t iteration) override;
  bool accept(std::size_t rule, std::size_t iteration, std::size_t matches) override;
  bool can_stop(std::size_t iteration) override;

 private:
  RuleStats& stats(std::size_t rule);
  std::size_t threshold(const RuleStats& s) const;

  BackoffConfig config_;
  std::vector<RuleStats> stats_;
};

}  // namespace refinery::egraph
