#include "optimize/saturate.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <set>
#include <chrono>
#include <optional>

#include "egraph/scheduler.h"

namespace refinery::optimize {

namespace {

using Clock = std::chrono::steady_clock;

// Operator names on one side of a rule's text: every "(name" token.
std::vector<std::string> operators(std::string_view side) {
  std::vector<std::string> ops;
  for (std::size_t i = 0; i < side.size(); ++i) {
    if (side[i] != '(') continue;
    std::size_t j = i + 1;
    while (j < side.size() && side[j] != ' ' && side[j] != ')' && side[j] != '(') ++j;
    ops.emplace_back(side.substr(i + 1, j - i - 1));
  }
  std::sort(ops.begin(), ops.end());
  return ops;
}

// Multi-patterns run only in the first `multi_limit` iterations of a phase;
// everything else is up to an inner backoff scheduler.
class PhaseScheduler final : public egraph::Scheduler {
 public:
  PhaseScheduler(std::vector<bool> multi, std::size_t multi_limit, egraph::BackoffConfig config)
      : multi_(std::move(multi)), multi_limit_(multi_limit), inner_(config) {}
  egraph::BackoffScheduler& inner() { return inner_; }
  std::optional<std::size_t> search_limit(std::size_t rule, std::size_t iteration) override {
    if (multi_[rule] && iteration - first_ >= multi_limit_) return std::nullopt;
    return inner_.search_limit(rule, iteration);
  }
  bool accept(std::size_t rule, std::size_t iteration, std::size_t matches) override {
    return inner_.accept(rule, iteration, matches);
  }
  bool can_stop(std::size_t iteration) override { return inner_.can_stop(iteration); }
  void set_first_iteration(std::size_t i) { first_ = i; }

 private:
  std::vector<bool> multi_;
  std::size_t multi_limit_;
  std::size_t first_ = 0;
  egraph::BackoffScheduler inner_;
};

struct Phase {
  std::string name;
  std::vector<std::size_t> rules;      // indices into the rules span
  std::vector<std::size_t> rewriters;  // indices into the rewriters span
  std::size_t iter_limit;
  double time_share;                   // of the whole budget, cumulative deadline
  bool limit_multi;
  bool tight_permuting;
};

// Applies `matches` a chunk at a time, stopping early when `stop()` says so:
// one rule can have tens of thousands of matches in a grown e-graph, and
// applying them all at once overruns the time and node limits.
template <class Stop>
std::size_t apply_in_chunks(TensorEGraph& g, const TensorRewrite& rule, const egraph::SearchMatches& all,
                            egraph::SearchMatches& chunk, Stop stop) {
  constexpr std::size_t kChunk = 256;
  if (all.size() <= kChunk) return rule.apply(g, all);
  std::size_t applied = 0;
  for (std::size_t base = 0; base < all.size(); base += kChunk) {
    std::size_t n = std::min(kChunk, all.size() - base);
    chunk.reset(all.num_vars);
    chunk.roots.assign(all.roots.begin() + base, all.roots.begin() + base + n);
    chunk.substs.assign(all.substs.begin() + base * all.num_vars, all.substs.begin() + (base + n) * all.num_vars);
    applied += rule.apply(g, chunk);
    if (stop()) break;
  }
  return applied;
}

}  // namespace

RuleInfo classify_rule_text(std::string_view text, bool multi, bool reverse) {
  RuleInfo info{multi, false};
  // A whole form, as the library keeps it: "(rule NAME LHS => RHS :when ...)".
  if (text.starts_with("(rule ")) {
    std::size_t name_end = text.find_first_of(" \n\t", 6);
    if (name_end == std::string_view::npos) return info;
    text = text.substr(name_end + 1);
  }
  std::size_t arrow = text.find("<=>"), width = 3;
  if (arrow == std::string_view::npos) {
    arrow = text.find("=>");
    width = 2;
  }
  if (arrow == std::string_view::npos) return info;
  std::string_view lhs = text.substr(0, arrow), rhs = text.substr(arrow + width);
  for (std::string_view opt : {":when", ":let", ":axioms"})
    if (auto k = rhs.find(opt); k != std::string_view::npos) rhs = rhs.substr(0, k);
  if (reverse) std::swap(lhs, rhs);
  auto l = operators(lhs), r = operators(rhs);
  info.permuting = !l.empty() && l == r;
  // Expanding: the right side is larger and drops nothing but elementwise
  // arithmetic (mul-distrib-add, sub-as-add-neg, div-as-mul-recip); a fusion
  // that removes a structural op (conv-bn-fold drops batch_norm) is not.
  static const std::set<std::string> arithmetic = {"add", "sub", "mul", "div", "neg", "reciprocal", "pow",
                                                   "sqrt", "exp", "max", "min", "abs"};
  // A multi-pattern merge also has more operators on its right (a concat of
  // the weights, a split per root) but is no expansion: it runs, limited to
  // the first iterations of explore, under the normal backoff threshold.
  if (!multi && r.size() > l.size()) {
    std::vector<std::string> gone;
    std::set_difference(l.begin(), l.end(), r.begin(), r.end(), std::back_inserter(gone));
    info.expanding = std::all_of(gone.begin(), gone.end(), [](const std::string& op) { return arithmetic.contains(op); });
  }
  return info;
}

SaturationResult saturate(TensorEGraph& g, std::span<const TensorRewrite> rules, std::span<const RuleInfo> infos,
                          std::span<const GraphRewriter> rewriters, const SaturationOptions& o) {
  SaturationResult result;
  const std::size_t R = rules.size();
  std::vector<RuleInfo> info(R);
  for (std::size_t r = 0; r < R; ++r) info[r] = r < infos.size() ? infos[r] : RuleInfo{rules[r].is_multi(), false};
  for (const auto& r : rules) result.rule_names.push_back(r.name());
  for (const auto& w : rewriters) result.rule_names.push_back(w.name);
  result.created_by.assign(g.num_ids(), -1);

  std::vector<Phase> phases;
  std::vector<std::size_t> all(R), simple, all_w(rewriters.size());
  for (std::size_t r = 0; r < R; ++r) {
    all[r] = r;
    if (!info[r].multi && !info[r].permuting && !info[r].expanding) simple.push_back(r);
  }
  for (std::size_t w = 0; w < rewriters.size(); ++w) all_w[w] = w;
  if (o.strategy == Strategy::Flat) {
    phases.push_back({"all", all, all_w, o.iter_limit, 1.0, false, false});
  } else {
    bool has_extra = simple.size() != R;
    phases.push_back({"simplify", simple, all_w, o.iter_limit, has_extra ? 0.3 : 1.0, false, false});
    if (has_extra) {
      phases.push_back({"explore", all, all_w, o.iter_limit, 0.85, true, true});
      phases.push_back({"cleanup", simple, all_w, 5, 1.0, false, false});
    }
  }

  std::int32_t current_rule = -1;
  g.on_union = [&](egraph::Id a, egraph::Id b) { result.unions.push_back({a, b, current_rule}); };
  struct Unhook {
    TensorEGraph& g;
    ~Unhook() { g.on_union = nullptr; }  // also when a rule throws TypeMismatch
  } unhook{g};
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  std::vector<egraph::SearchMatches> matches(R);
  egraph::SearchMatches chunk;
  std::size_t global_iter = 0;
  for (const Phase& ph : phases) {
    verify::SaturationPhaseReport rep;
    rep.name = ph.name;
    rep.rules = ph.rules.size() + ph.rewriters.size();
    std::vector<bool> multi;
    for (std::size_t r : ph.rules) multi.push_back(ph.limit_multi && info[r].multi);
    PhaseScheduler sched(multi, o.multi_iter_limit, egraph::BackoffConfig{});
    if (ph.tight_permuting)
      for (std::size_t k = 0; k < ph.rules.size(); ++k)
        if (info[ph.rules[k]].permuting || info[ph.rules[k]].expanding)
          sched.inner().set_match_limit(k, o.permuting_match_limit);
    sched.set_first_iteration(global_iter);
    const double deadline = o.time_limit_s * ph.time_share;
    std::string stop;
    for (std::size_t it = 0;; ++it, ++global_iter) {
      if (elapsed() > deadline) { stop = fmt::format("TimeLimit({:.2f})", elapsed()); break; }
      if (g.num_nodes() > o.node_limit) { stop = fmt::format("NodeLimit({})", g.num_nodes()); break; }
      if (it >= ph.iter_limit) { stop = fmt::format("IterationLimit({})", it); break; }
      auto it_start = Clock::now();
      verify::IterationReport ir{g.num_nodes(), g.num_classes(), 0, 0};
      // The deadline is checked between rules as well as between iterations:
      // one iteration of a grown e-graph can take longer than the whole budget.
      bool late = false;
      for (std::size_t k = 0; k < ph.rules.size(); ++k) {
        std::size_t r = ph.rules[k];
        matches[r].reset(0);
        if (late || (late = elapsed() > deadline)) continue;
        auto limit = sched.search_limit(k, global_iter);
        if (!limit) continue;
        rules[r].search(g, *limit, matches[r]);
        if (!sched.accept(k, global_iter, matches[r].size())) matches[r].reset(0);
      }
      bool over = false;
      auto attribute = [&](std::size_t before, std::size_t rule_index) {
        result.created_by.resize(g.num_ids(), -1);
        for (std::size_t id = before; id < g.num_ids(); ++id) result.created_by[id] = static_cast<std::int32_t>(rule_index);
      };
      for (std::size_t k = 0; k < ph.rules.size() && !over && !late; ++k) {
        std::size_t r = ph.rules[k];
        if (matches[r].empty()) continue;
        if ((late = elapsed() > deadline)) break;
        std::size_t before = g.num_ids();
        current_rule = static_cast<std::int32_t>(r);
        std::size_t applied = apply_in_chunks(g, rules[r], matches[r], chunk, [&] {
          over = g.num_nodes() > o.node_limit;
          late = elapsed() > deadline;
          return over || late;
        });
        attribute(before, r);
        ir.applied += applied;
        if (applied) result.fired[rules[r].name()] += applied;
        over = g.num_nodes() > o.node_limit;
      }
      for (std::size_t w : ph.rewriters) {
        if (over || (late = late || elapsed() > deadline)) break;
        std::size_t before = g.num_ids();
        current_rule = static_cast<std::int32_t>(R + w);
        std::size_t applied = rewriters[w].apply(g);
        attribute(before, R + w);
        ir.applied += applied;
        if (applied) result.fired[rewriters[w].name] += applied;
      }
      std::size_t classes_before = g.num_classes();
      current_rule = -1;
      g.rebuild();
      ir.seconds = std::chrono::duration<double>(Clock::now() - it_start).count();
      rep.iterations.push_back(ir);
      bool changed = ir.applied > 0 || g.num_classes() != classes_before;
      if (late) { stop = fmt::format("TimeLimit({:.2f})", elapsed()); ++global_iter; break; }
      if (!changed && sched.can_stop(global_iter)) { stop = "Saturated"; ++global_iter; break; }
    }
    rep.stop_reason = stop;
    result.stop_reason = stop;
    result.phases.push_back(std::move(rep));
  }
  result.created_by.resize(g.num_ids(), -1);
  return result;
}

}  // namespace refinery::optimize
