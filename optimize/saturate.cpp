#include "optimize/saturate.h"

#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "egraph/scheduler.h"

namespace refinery::optimize {

namespace {

using Clock = std::chrono::steady_clock;
using rules::RuleKind;

// egg's backoff, with Merge rules searched only in the first `multi_limit`
// iterations of the run it is made for.
class PhaseScheduler final : public egraph::Scheduler {
 public:
  PhaseScheduler(std::vector<bool> limited, std::size_t multi_limit, std::size_t first_iteration)
      : limited_(std::move(limited)), multi_limit_(multi_limit), first_(first_iteration) {}
  egraph::BackoffScheduler& backoff() { return backoff_; }
  std::optional<std::size_t> search_limit(std::size_t rule, std::size_t iteration) override {
    if (limited_[rule] && iteration - first_ >= multi_limit_) return std::nullopt;
    return backoff_.search_limit(rule, iteration);
  }
  bool accept(std::size_t rule, std::size_t iteration, std::size_t matches) override {
    return backoff_.accept(rule, iteration, matches);
  }
  bool can_stop(std::size_t iteration) override { return backoff_.can_stop(iteration); }

 private:
  std::vector<bool> limited_;  // by rule index
  std::size_t multi_limit_;
  std::size_t first_;
  egraph::BackoffScheduler backoff_;
};

struct Phase {
  const char* name;
  std::vector<std::size_t> rules;  // indices into the rule span
  std::size_t iter_limit;
  double time_share;  // of the whole budget: the phase ends by share x time limit
  bool exploring;     // Merge rules limited, Permute and Explore rules on a tight threshold
};

}  // namespace

std::string_view to_string(Strategy strategy) { return strategy == Strategy::Flat ? "flat" : "phased"; }

SaturationRecord saturate(TensorRunner& runner, std::span<const TensorRewrite> rules, std::span<const RuleKind> kinds,
                          const SaturationOptions& o, const ProgressFn& progress) {
  std::vector<std::size_t> all, simple;
  for (std::size_t r = 0; r < rules.size(); ++r) {
    all.push_back(r);
    if (kinds[r] == RuleKind::Simplify) simple.push_back(r);
  }
  std::vector<Phase> phases;
  if (o.strategy == Strategy::Flat) {
    phases.push_back({"all", all, o.iter_limit, 1.0, false});
  } else if (simple.size() == rules.size()) {
    phases.push_back({"simplify", simple, o.iter_limit, 1.0, false});
  } else {
    phases.push_back({"simplify", simple, o.iter_limit, 0.3, false});
    phases.push_back({"explore", all, o.iter_limit, 0.85, true});
    phases.push_back({"cleanup", simple, 5, 1.0, false});
  }

  SaturationRecord record;
  record.strategy = std::string(to_string(o.strategy));
  const auto start = Clock::now();
  const auto budget = std::chrono::duration<double>(o.time_limit_s);
  // The hook holds what it reads (the runner keeps it after this returns).
  auto current = std::make_shared<const char*>("");
  if (progress)
    runner.add_hook([progress, current](TensorRunner& r) -> std::optional<std::string> {
      progress({.phase = fmt::format("saturate {}", *current),
                .detail = fmt::format("iteration {}, {} nodes", r.iterations.size() - r.run_first_iteration() + 1,
                                      r.egraph.num_nodes())});
      return std::nullopt;
    });
  runner.set_threads(o.threads);
  for (const Phase& ph : phases) {
    *current = ph.name;
    const std::size_t first = runner.iterations.size();
    std::vector<bool> limited(rules.size(), false);
    if (ph.exploring)
      for (std::size_t r : ph.rules) limited[r] = kinds[r] == RuleKind::Merge;
    auto sched = std::make_unique<PhaseScheduler>(std::move(limited), o.multi_iter_limit, first);
    if (ph.exploring)
      for (std::size_t r : ph.rules)
        if (kinds[r] == RuleKind::Permute || kinds[r] == RuleKind::Explore)
          sched->backoff().set_match_limit(r, o.permuting_match_limit);
    runner.set_scheduler(std::move(sched));
    auto ends = start + std::chrono::duration_cast<Clock::duration>(budget * ph.time_share);
    runner.set_limits({.iter_limit = ph.iter_limit,
                       .node_limit = o.node_limit,
                       .time_limit = std::max(Clock::duration::zero(), ends - Clock::now())});
    PhaseRecord rec{ph.name, ph.rules.size(), runner.run(rules, ph.rules), {}};
    for (std::size_t i = first; i < runner.iterations.size(); ++i) {
      const egraph::Iteration& it = runner.iterations[i];
      rec.iterations.push_back({it.egraph_nodes, it.egraph_classes, it.total_applied(), it.total_time});
      for (std::size_t r : ph.rules)
        if (it.rules[r].applied) record.rules_fired[rules[r].name()] += it.rules[r].applied;
    }
    record.stop_reason = rec.stop_reason;
    record.phases.push_back(std::move(rec));
  }
  record.egraph_nodes = runner.egraph.num_nodes();
  record.egraph_classes = runner.egraph.num_classes();
  if (const auto* forest = runner.egraph.proof_forest())
    record.proof_forest = {forest->size(), forest->num_edges(), forest->num_premises(), forest->memory_bytes()};
  return record;
}

}  // namespace refinery::optimize
