// The Runner: equality saturation's outer loop. Each iteration searches
// every rule (as the scheduler allows), applies all matches, rebuilds, and
// records statistics; it stops on saturation or on a limit, and says why.
//
// Searching only reads the e-graph, so with set_threads(n) the rules of an
// iteration are searched on n threads (each rule's matches into its own
// buffer; a rule with many root candidates in parts, joined in order into
// the matches one search gives); the scheduler is asked for every rule's
// limit before any search and hears of the matches in rule order, and
// matches are applied in rule order on the calling thread, so the
// e-graph after each iteration is the same whatever the thread count (a
// time limit that ends an iteration part way aside). A search too small
// to pay for waking a thread runs on the caller's alone. Schedulers must
// decide each rule's limit from that rule's own history (both in this
// folder and optimize/'s do).
#pragma once

#include <atomic>
#include <cstdint>
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "egraph/egraph.h"
#include "egraph/rewrite.h"
#include "egraph/scheduler.h"
#include "egraph/stop_reason.h"
#include "egraph/thread_pool.h"

namespace refinery::egraph {

// egg's defaults. `time_limit` counts from the start of each run();
// `memory_limit` bounds EGraph::memory_bytes() plus the match buffers. The
// limits are checked between rules (searching and applying) and, while one
// rule's matches are applied, every `check_every` matches: a single rule can
// have tens of thousands of matches in a grown e-graph, and applying them
// all at once overruns the time and node limits. Where applying is slow
// (a rule whose conditions and lets do real work, in a dense e-graph: 15 ms
// a match was seen), fewer: each chunk of matches is sized to take about
// `check_interval` at the pace of the rule's previous chunk, starting from
// one match, so one slow rule overruns the time limit by about one match.
struct RunnerLimits {
  std::size_t iter_limit = 30;
  std::size_t node_limit = 10'000;
  std::chrono::nanoseconds time_limit = std::chrono::seconds(5);
  std::size_t memory_limit = std::numeric_limits<std::size_t>::max();
  std::size_t check_every = 256;
  std::chrono::nanoseconds check_interval = std::chrono::milliseconds(10);
};

struct RuleIteration {
  std::size_t matches = 0;  // found by the search (capped at the backoff threshold + 1)
  std::size_t applied = 0;  // unions that changed the graph
  bool skipped = false;     // banned by the scheduler this iteration
};

struct Iteration {
  std::size_t egraph_nodes = 0;    // at the start of the iteration
  std::size_t egraph_classes = 0;  // at the start of the iteration
  std::vector<RuleIteration> rules;
  double hook_time = 0, search_time = 0, apply_time = 0, rebuild_time = 0, total_time = 0;  // seconds
  std::size_t rebuild_unions = 0;
  std::optional<StopReason> stop_reason;

  std::size_t total_applied() const {
    std::size_t n = 0;
    for (const auto& r : rules) n += r.applied;
    return n;
  }
};

template <ENode N, class A = NoAnalysis>
class Runner {
 public:
  using Graph = EGraph<N, A>;
  using Rule = Rewrite<N, A>;
  // Runs at the start of each iteration; a returned message stops the
  // runner with StopKind::Other.
  using Hook = std::function<std::optional<std::string>(Runner&)>;

  explicit Runner(RunnerLimits limits = {}, Graph graph = Graph{})
      : egraph(std::move(graph)), limits_(limits), scheduler_(std::make_unique<BackoffScheduler>()) {}

  Id add_expr(const RecExpr<N>& expr) {
    Id id = egraph.add_expr(expr);
    roots.push_back(id);
    return id;
  }
  void set_scheduler(std::unique_ptr<Scheduler> s) { scheduler_ = std::move(s); }
  Scheduler& scheduler() { return *scheduler_; }
  void add_hook(Hook hook) { hooks_.push_back(std::move(hook)); }
  const RunnerLimits& limits() const { return limits_; }
  // Threads that search (the caller's included); 1, the default: all on
  // the caller's. The pool is started by the first search with work enough
  // for it (run_phase), so a small run starts no thread.
  void set_threads(std::size_t threads) {
    threads = std::max<std::size_t>(1, threads);
    if (threads == threads_) return;
    threads_ = threads;
    pool_ = nullptr;
  }
  std::size_t search_threads() const { return threads_; }

  // Runs every rule until saturation or a limit; the iterations are
  // appended to `iterations`, the reason is returned and kept in
  // `stop_reason`. Rules are numbered by their index in `rules` (for the
  // scheduler and Iteration::rules).
  const StopReason& run(std::span<const Rule> rules) {
    std::vector<std::size_t> all(rules.size());
    for (std::size_t r = 0; r < rules.size(); ++r) all[r] = r;
    return run(rules, all);
  }

  // Runs only the rules of `subset` (indices into `rules`). A Runner may run
  // several times over its e-graph (phases of a schedule, each with its own
  // rules, limits and scheduler): each run starts its clock and iteration
  // count afresh; the scheduler sees iterations numbered across runs.
  const StopReason& run(std::span<const Rule> rules, std::span<const std::size_t> subset) {
    egraph.rebuild();
    start_ = Clock::now();
    run_first_ = iterations.size();
    stop_reason = check_limits();
    while (!stop_reason) {
      iterations.push_back(run_one(rules, subset));
      stop_reason = iterations.back().stop_reason;
      // As egg: the limits are checked again once an iteration is done, so
      // an iteration limit of k runs k iterations, not k and an empty one.
      if (!stop_reason) stop_reason = check_limits();
    }
    return *stop_reason;
  }

  void set_limits(RunnerLimits limits) { limits_ = limits; }
  // The index in `iterations` of the current (or last) run's first iteration.
  std::size_t run_first_iteration() const { return run_first_; }

  double total_seconds() const {
    double t = 0;
    for (const auto& it : iterations) t += it.total_time;
    return t;
  }

  // egg-style summary.
  std::string report() const {
    double search = 0, apply = 0, rebuild = 0;
    for (const auto& it : iterations) {
      search += it.search_time;
      apply += it.apply_time;
      rebuild += it.rebuild_time;
    }
    return fmt::format(
        "Runner report\n  Stop reason: {}\n  Iterations: {}\n  Egraph size: {} nodes, {} classes\n"
        "  Total time: {:.6f}\n    Search:  {:.6f}\n    Apply:   {:.6f}\n    Rebuild: {:.6f}\n",
        stop_reason ? stop_reason->to_string() : "running", iterations.size(), egraph.num_nodes(), egraph.num_classes(),
        total_seconds(), search, apply, rebuild);
  }

  Graph egraph;
  std::vector<Id> roots;
  std::vector<Iteration> iterations;
  std::optional<StopReason> stop_reason;

 private:
  using Clock = std::chrono::steady_clock;
  static double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

  std::optional<StopReason> check_limits() const {
    auto elapsed = Clock::now() - start_;
    if (elapsed > limits_.time_limit)
      return StopReason{StopKind::TimeLimit, std::chrono::duration<double>(elapsed).count(), {}};
    if (egraph.num_nodes() > limits_.node_limit)
      return StopReason{StopKind::NodeLimit, static_cast<double>(egraph.num_nodes()), {}};
    if (std::size_t done = iterations.size() - run_first_; done >= limits_.iter_limit)
      return StopReason{StopKind::IterationLimit, static_cast<double>(done), {}};
    std::size_t mem = egraph.memory_bytes() + match_bytes_;
    if (mem > limits_.memory_limit) return StopReason{StopKind::MemoryLimit, static_cast<double>(mem), {}};
    return std::nullopt;
  }

  Iteration run_one(std::span<const Rule> rules, std::span<const std::size_t> subset) {
    Iteration it;
    it.rules.resize(rules.size());
    std::size_t i = iterations.size();
    std::optional<StopReason> result = check_limits();
    it.egraph_nodes = egraph.num_nodes();
    it.egraph_classes = egraph.num_classes();

    auto hook_start = Clock::now();
    for (auto& hook : hooks_) {
      if (result) break;
      if (auto msg = hook(*this)) result = StopReason{StopKind::Other, 0, *msg};
    }
    it.hook_time = seconds_since(hook_start);

    auto start = Clock::now();
    if (matches_.size() < rules.size()) matches_.resize(rules.size());
    for (std::size_t r : subset) matches_[r].reset(0);
    // Each rule's match limit (none: banned), asked in rule order before
    // any search; then the searches, on the pool's threads; then, in rule
    // order, the scheduler hears of the matches and the limits are checked,
    // as they would be between rules searched one after another.
    std::vector<std::optional<std::size_t>> limit(subset.size());
    std::vector<std::uint8_t> searched(subset.size(), 0);
    if (!result) {
      for (std::size_t k = 0; k < subset.size(); ++k) limit[k] = scheduler_->search_limit(subset[k], i);
      // Tasks: (rule, part). With threads, a rule with many root candidates
      // is searched in parts (slices of its candidates, each into its own
      // buffer, joined in order below), so that one large rule does not
      // leave the other threads idle.
      struct Task {
        std::size_t k, part, parts;
      };
      std::vector<Task> tasks;
      std::vector<std::size_t> candidates(subset.size(), 0);
      std::size_t all_candidates = 0;
      if (threads_ > 1) {
        for (std::size_t k = 0; k < subset.size(); ++k) {
          if (limit[k]) all_candidates += candidates[k] = rules[subset[k]].num_candidates(egraph);
        }
      }
      const bool parallel = all_candidates >= kParallelCandidates;
      for (std::size_t k = 0; k < subset.size(); ++k) {
        if (!limit[k]) continue;
        constexpr std::size_t kMinCandidates = 32;  // per part
        const std::size_t parts =
            parallel ? std::clamp<std::size_t>(candidates[k] / kMinCandidates, 1, 4 * threads_) : 1;
        for (std::size_t p = 0; p < parts; ++p) tasks.push_back(Task{k, p, parts});
      }
      if (part_matches_.size() < tasks.size()) part_matches_.resize(tasks.size());
      std::vector<std::uint8_t> done(tasks.size(), 0);
      std::atomic<std::size_t> next{0};
      std::atomic<bool> out_of_time{false};
      auto search = [&] {
        for (std::size_t t; (t = next.fetch_add(1)) < tasks.size();) {
          // Only the clock is read here: the other limits read what the
          // other threads are writing, and are checked below.
          if (out_of_time.load(std::memory_order_relaxed) || Clock::now() - start_ > limits_.time_limit) {
            out_of_time.store(true, std::memory_order_relaxed);
            return;
          }
          const Task& task = tasks[t];
          const Rule& rule = rules[subset[task.k]];
          SearchMatches& out = task.parts == 1 ? matches_[subset[task.k]] : part_matches_[t];
          rule.search_part(egraph, *limit[task.k], out, task.part, task.parts);
          done[t] = 1;
        }
      };
      run_phase(parallel, search);
      for (std::size_t t = 0; t < tasks.size();) {
        const Task& task = tasks[t];
        bool all = true;
        for (std::size_t p = 0; p < task.parts; ++p) all &= done[t + p] != 0;
        searched[task.k] = all;
        if (all && task.parts > 1) {
          SearchMatches& m = matches_[subset[task.k]];
          m.reset(part_matches_[t].num_vars);
          for (std::size_t p = 0; p < task.parts; ++p) m.append(part_matches_[t + p], *limit[task.k]);
        }
        t += task.parts;
      }
      count_match_bytes();
    }
    for (std::size_t k = 0; k < subset.size(); ++k) {
      const std::size_t r = subset[k];
      if (result || (limit[k] && !searched[k])) {
        matches_[r].reset(0);  // after a limit: not searched, as one thread would not have
        if (!result) result = check_limits();
        continue;
      }
      if (!limit[k]) {
        it.rules[r].skipped = true;
      } else {
        it.rules[r].matches = matches_[r].size();
        if (!scheduler_->accept(r, i, matches_[r].size())) {
          matches_[r].reset(0);
          it.rules[r].skipped = true;
        } else {
          matches_[r].drop_repeats();  // after the scheduler's count, which is the search's
        }
      }
      result = check_limits();
    }
    it.search_time = seconds_since(start);

    auto apply_start = Clock::now();
    // A batched applier's chunks end on its batches (or on multiples of
    // check_every, if smaller), after the first, timed, match: where the
    // clock ends a chunk then decides nothing in the e-graph.
    for (std::size_t r : subset) {
      const std::size_t unit =
          rules[r].applies_in_batches(egraph) ? std::clamp<std::size_t>(limits_.check_every, 1, Rule::kBatch) : 1;
      const std::size_t max_chunk = std::max(unit, limits_.check_every / unit * unit);
      std::size_t chunk = 1;  // until this rule's pace is known
      for (std::size_t first = 0; first < matches_[r].size() && !result;) {
        std::size_t last = std::min(matches_[r].size(), first + chunk);
        auto chunk_start = Clock::now();
        it.rules[r].applied += rules[r].apply(egraph, matches_[r], first, last);
        result = check_limits();
        auto per_match = (Clock::now() - chunk_start) / (last - first);
        std::size_t pace =
            per_match.count() > 0 ? static_cast<std::size_t>(limits_.check_interval / per_match) : max_chunk;
        first = last;
        std::size_t end = (first + std::clamp<std::size_t>(pace, 1, max_chunk)) / unit * unit;
        if (end <= first) end = (first / unit + 1) * unit;  // the next boundary
        chunk = end - first;
      }
      if (result) break;
    }
    it.apply_time = seconds_since(apply_start);

    auto rebuild_start = Clock::now();
    it.rebuild_unions = egraph.rebuild();
    it.rebuild_time = seconds_since(rebuild_start);

    // Changed: a union, a congruence found by rebuilding, or a node or class
    // that a hook or an applier added without a union.
    bool changed = it.total_applied() > 0 || it.rebuild_unions > 0 || egraph.num_nodes() != it.egraph_nodes ||
                   egraph.num_classes() != it.egraph_classes;
    if (!changed && scheduler_->can_stop(i)) {
      if (!result) result = StopReason{StopKind::Saturated, 0, {}};
    }
    it.total_time = seconds_since(start) + it.hook_time;
    it.stop_reason = std::move(result);
    return it;
  }

  // Runs `f` on the pool's threads (each takes tasks from a counter in f)
  // where `parallel`, else on the caller's alone.
  void run_phase(bool parallel, const std::function<void()>& f) {
    if (!parallel || threads_ == 1) return f();
    if (!pool_) pool_ = std::make_unique<ThreadPool>(threads_);
    pool_->run(f);
  }

  // The match buffers' footprint, for the memory limit: counted once the
  // searches may have grown them, not at every check (a rule set has tens
  // of buffers, and applying checks every few hundred matches).
  void count_match_bytes() {
    match_bytes_ = 0;
    for (const auto& m : matches_) match_bytes_ += m.memory_bytes();
    for (const auto& m : part_matches_) match_bytes_ += m.memory_bytes();
  }

  RunnerLimits limits_;
  std::unique_ptr<Scheduler> scheduler_;
  std::vector<Hook> hooks_;
  std::vector<SearchMatches> matches_;
  std::vector<SearchMatches> part_matches_;  // per search task split into parts
  // Grain size: the search runs on the pool only where its work pays for
  // waking a thread (a wake-up and the wait for it cost about 10-40 us on
  // this VM, searching about 0.1-0.3 us a root candidate).
  static constexpr std::size_t kParallelCandidates = 512;
  std::size_t threads_ = 1;           // set_threads
  std::unique_ptr<ThreadPool> pool_;  // started by the first parallel search
  std::size_t match_bytes_ = 0;       // count_match_bytes
  Clock::time_point start_{};
  std::size_t run_first_ = 0;
};

}  // namespace refinery::egraph
