#include "prove/verify.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "prove/induction.h"
#include "prove/instance.h"
#include "prove/numeric.h"
#include "prove/z3/query.h"
#include "rules/rule_ast.h"

namespace refinery::prove {

using namespace rules;
using Clock = std::chrono::steady_clock;

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::ProvedExact: return "proved (binary32-exact)";
    case Verdict::ProvedReals: return "proved (reals; rounds differently in binary32)";
    case Verdict::ProvedIf: return "proved only if";
    case Verdict::Refuted: return "refuted";
    case Verdict::Unknown: return "unknown";
    case Verdict::Error: return "error";
  }
  return "?";
}

bool is_proved(Verdict v) { return v == Verdict::ProvedExact || v == Verdict::ProvedReals; }

namespace {

// The verdict of a rule proved over the reals, from its binary32 result.
void settle_binary32(RuleReport& r) {
  if (r.binary32 == "exact")
    r.verdict = Verdict::ProvedExact;
  else if (r.binary32 == "rounds" || r.binary32.empty())
    r.verdict = Verdict::ProvedReals;
  else if (r.binary32 == "special")
    r.verdict = Verdict::Refuted, r.domain = "binary32";
  else
    r.verdict = Verdict::Unknown, r.domain = "binary32";
}

// Binary32 at the smallest instance: exact on every input, else whether the
// sides differ on special values (NaN or an infinity produced or lost where
// nothing overflows or underflows), else they differ by rounding only.
void classify_binary32(const Rule& rule, const std::vector<Instance>& insts, const VerifyOptions& opt, RuleReport& r) {
  const Instance& inst = insts.front();
  // A proof that needs a law of a transcendental function (exp of a sum
  // is a product, sigmoid and tanh through exp) holds over the reals
  // only: binary32 exp, sigmoid and tanh round, and obey no such law.
  static const char* const kTranscendental[] = {"exp-add", "exp-sum", "sigmoid-def", "tanh-def"};
  const auto& axioms = rule.body->axioms;
  bool transcendental = std::any_of(std::begin(kTranscendental), std::end(kTranscendental), [&](const char* ax) {
    return std::find(axioms.begin(), axioms.end(), ax) != axioms.end();
  });
  if (!transcendental) {
    Query q = prove_instance(*rule.body, inst, Domain::Exact32, opt.fp_timeout_ms);
    if (q.result == Check::Unsat) {
      // Exact at the smallest instance, which may be degenerate (a mean
      // over one element): the larger ones are searched for a rounding
      // witness on random binary32 inputs (no solver: cheap).
      for (size_t i = 1; i < insts.size(); ++i) {
        Query w = prove_instance(*rule.body, insts[i], Domain::Witness32, opt.fp_timeout_ms);
        if (w.result == Check::Sat) {
          r.binary32 = "rounds";
          r.rounding = fmt::format("at {}:\n{}", insts[i].describe, w.detail);
          return;
        }
      }
      r.binary32 = "exact";
      return;
    }
    if (q.result == Check::Sat) r.rounding = fmt::format("at {}:\n{}", inst.describe, q.detail);
  }
  Query q = prove_instance(*rule.body, inst, Domain::Special32, opt.fp_timeout_ms);
  if (q.result == Check::Unsat) {
    r.binary32 = "rounds";
  } else if (q.result == Check::Sat) {
    r.binary32 = "special";
    r.counterexample = fmt::format("at {} (binary32, special values):\n{}", inst.describe, q.detail);
  } else {
    r.binary32 = "unknown";
    r.message = "binary32 special values: " + q.detail;
  }
}

// The interpreter's check of one instance: `bad` says where the sides
// disagree (empty: they agree), `skipped` whether a side did not run. When
// they disagree beyond f64 rounding, replayed in f64, returns that replay:
// a refutation over the reals.
std::optional<Replay> check_numerically(const Instance& inst, uint64_t seed, std::string& bad, bool& skipped) {
  std::vector<std::vector<double>> drawn;
  bad = numeric_check(inst, seed, skipped, &drawn);
  if (skipped || bad.empty()) return std::nullopt;
  Replay rep = replay(inst, drawn, true);
  bool overflow = false;
  if (!rep.ran() || !differs_over_reals(rep, overflow)) return std::nullopt;
  return rep;
}

}  // namespace

RuleReport verify_rule(const Rule& rule, const VerifyOptions& opt) {
  auto t0 = Clock::now();
  RuleReport r{rule.name, rule.family, rule.file, rule.line};
  std::string why;
  std::vector<Instance> screen;
  auto insts = make_instances(*rule.body, rule.name, opt.instances, opt.empty_instances, why, &screen);
  // The draws not kept for Z3 run in the interpreter first: a disagreement
  // that replays in f64 beyond f64 rounding refutes the rule (an attribute
  // value or a shape the kept instances miss). Agreement proves nothing.
  if (!insts.empty() && opt.numeric && !needs_induction(insts.front()))
    for (size_t k = 0; k < screen.size(); ++k) {
      bool skipped = false;
      std::string bad;
      auto rep = check_numerically(screen[k], std::hash<std::string>()(rule.name) + 101 + k, bad, skipped);
      if (!rep) continue;
      r.verdict = Verdict::Refuted;
      r.domain = "reals";
      r.numeric = "disagree: " + bad;
      r.shapes.push_back(screen[k].describe);
      r.counterexample = fmt::format("at {} (random inputs, a screening instance):\n{}", screen[k].describe,
                                     rep->describe(screen[k]));
      r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      return r;
    }
  if (insts.empty()) {
    r.verdict = Verdict::Error;
    r.message = "no instance satisfies the rule's types and conditions: " + why;
  } else if (needs_induction(insts.front())) {
    for (const Instance& inst : insts) r.shapes.push_back(inst.describe);
    prove_by_induction(*rule.body, insts, opt, r);
  } else {
    bool reals = true;  // proved over the reals so far
    for (const Instance& inst : insts) {
      r.shapes.push_back(inst.describe);
      // With empty dims, binary32 first (also without --no-fp32's
      // classification: this is a check of equality, not a class): a
      // reduction over an empty axis is -inf, +inf or NaN there, which the
      // reals do not have; the query over the reals leaves it to this one
      // (docs/rules.md, Verification).
      if (inst.empty) {
        Query e = prove_instance(*rule.body, inst, Domain::Classes32, opt.fp_timeout_ms);
        if (e.result == Check::Sat) {
          r.verdict = Verdict::Refuted;
          r.domain = "binary32";
          r.counterexample = fmt::format("at {} (binary32, empty dims):\n{}", inst.describe, e.detail);
          reals = false;
          break;
        }
        if (e.result != Check::Unsat) {
          r.verdict = e.result == Check::Error ? Verdict::Error : Verdict::Unknown;
          r.domain = e.result == Check::Error ? "" : "binary32";
          r.message = fmt::format("at {} (empty dims): {}", inst.describe, e.detail);
          reals = false;
          if (e.result == Check::Error) break;
        }
      }
      Query q = prove_instance(*rule.body, inst, Domain::Reals, opt.timeout_ms);
      if (q.result == Check::Error) {
        r.verdict = Verdict::Error;
        r.message = q.detail;
        reals = false;
        break;
      }
      if (q.result == Check::Sat) {
        r.verdict = Verdict::Refuted;
        r.domain = "reals";
        r.counterexample = fmt::format("at {}:\n{}", inst.describe, q.detail);
        reals = false;
        break;
      }
      if (q.result == Check::Undefined && r.verdict != Verdict::Unknown && r.verdict != Verdict::ProvedIf) {
        r.verdict = Verdict::ProvedIf;
        r.condition = q.condition;
        r.counterexample = fmt::format("at {}:\n{}", inst.describe, q.detail);
        reals = false;
      }
      if (q.result == Check::Unknown) {
        r.verdict = Verdict::Unknown;
        r.domain = "reals";
        r.message = q.detail;
        reals = false;
      }
    }
    if (reals) {
      if (opt.fp32) classify_binary32(rule, insts, opt, r);
      settle_binary32(r);
    }
    if (opt.numeric) {
      std::string bad;
      bool skipped = false;
      size_t at = 0;
      std::optional<Replay> refutes;
      for (; at < insts.size() && bad.empty() && !skipped; ++at)
        refutes = check_numerically(insts[at], std::hash<std::string>()(rule.name) + at, bad, skipped);
      r.numeric = skipped ? "skipped: " + bad : bad.empty() ? "agree" : "disagree: " + bad;
      // A concrete check settles what Z3 left unknown over the reals: the
      // numbers that disagree, replayed in f64, differ by more than f64
      // rounding.
      if (refutes && r.verdict == Verdict::Unknown && r.domain == "reals") {
        const Instance& inst = insts[at - 1];
        r.verdict = Verdict::Refuted;
        r.counterexample =
            fmt::format("at {} (random inputs; Z3: {}):\n{}", inst.describe, r.message, refutes->describe(inst));
        r.message.clear();
      }
    } else {
      r.numeric = "skipped";
    }
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

VerifyReport verify_rules(const std::vector<const Rule*>& rules, const VerifyOptions& opt) {
  auto t0 = Clock::now();
  VerifyReport rep;
  rep.rules.resize(rules.size());
  std::atomic<size_t> next{0}, done{0}, refuted{0};
  auto work = [&] {
    for (size_t i = next++; i < rules.size(); i = next++) {
      rep.rules[i] = verify_rule(*rules[i], opt);
      if (rep.rules[i].verdict == Verdict::Refuted) ++refuted;
      size_t n = ++done;
      if (opt.progress)
        opt.progress(
            {.done = n, .total = rules.size(), .unit = "rules", .detail = fmt::format("{} refuted", refuted.load())});
    }
  };
  if (opt.progress) opt.progress({.total = rules.size(), .unit = "rules", .detail = "0 refuted"});
  std::vector<std::thread> pool;
  for (int t = 1; t < std::max(opt.threads, 1); ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  // `a <=> b` is one equation read both ways: its binary32 class (which
  // has no definedness, so no direction) is the same for NAME and
  // NAME-rev, so where one direction's query settled it and the other's
  // timed out, the other takes the answer. Over the reals the directions
  // differ (each assumes its own left side defined).
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < rules.size(); ++i) by_name[rules[i]->name] = i;
  for (size_t i = 0; i < rules.size(); ++i) {
    const std::string& name = rules[i]->name;
    if (!name.ends_with("-rev")) continue;
    auto it = by_name.find(name.substr(0, name.size() - 4));
    if (it == by_name.end() || rules[it->second]->file != rules[i]->file) continue;
    RuleReport& fwd = rep.rules[it->second];
    RuleReport& rev = rep.rules[i];
    auto share = [](RuleReport& to, const RuleReport& from) {
      // An exact query that timed out leaves "rounds" without a witness:
      // the other direction's proof of exactness settles it.
      bool exact_unsettled = to.binary32 == "rounds" && to.rounding.empty() && from.binary32 == "exact";
      if (!exact_unsettled && (to.binary32 != "unknown" || from.binary32.empty() || from.binary32 == "unknown")) return;
      to.binary32 = from.binary32;
      to.message.clear();
      if (from.binary32 == "special") to.counterexample = from.counterexample + "\n(from " + from.name + ")";
      settle_binary32(to);
    };
    share(fwd, rev);
    share(rev, fwd);
  }
  rep.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return rep;
}

int VerifyReport::count(Verdict v) const {
  return static_cast<int>(
      std::count_if(rules.begin(), rules.end(), [&](const RuleReport& r) { return r.verdict == v; }));
}

int VerifyReport::refuted_in(std::string_view domain) const {
  return static_cast<int>(std::count_if(rules.begin(), rules.end(), [&](const RuleReport& r) {
    return r.verdict == Verdict::Refuted && r.domain == domain;
  }));
}

int VerifyReport::numeric_disagreements() const {
  return static_cast<int>(
      std::count_if(rules.begin(), rules.end(), [](const RuleReport& r) { return r.numeric.starts_with("disagree"); }));
}

std::string VerifyReport::json() const {
  nlohmann::ordered_json j;
  j["summary"] = {{"rules", rules.size()},
                  {"proved_exact", count(Verdict::ProvedExact)},
                  {"proved_reals", count(Verdict::ProvedReals)},
                  {"proved_if", count(Verdict::ProvedIf)},
                  {"refuted", count(Verdict::Refuted)},
                  {"refuted_reals", refuted_in("reals")},
                  {"refuted_binary32", refuted_in("binary32")},
                  {"unknown", count(Verdict::Unknown)},
                  {"error", count(Verdict::Error)},
                  {"numeric_disagreements", numeric_disagreements()},
                  {"seconds", seconds}};
  auto& arr = j["rules"] = nlohmann::ordered_json::array();
  for (const RuleReport& r : rules) {
    nlohmann::ordered_json o;
    o["name"] = r.name;
    o["family"] = r.family;
    o["file"] = r.file;
    o["line"] = r.line;
    o["verdict"] = std::string(verdict_name(r.verdict));
    if (!r.condition.empty()) o["condition"] = r.condition;
    if (!r.domain.empty()) o["domain"] = r.domain;
    o["shapes"] = r.shapes;
    if (!r.binary32.empty()) o["binary32"] = r.binary32;
    o["numeric"] = r.numeric;
    if (!r.counterexample.empty()) o["counterexample"] = r.counterexample;
    if (!r.rounding.empty()) o["rounding"] = r.rounding;
    if (!r.message.empty()) o["message"] = r.message;
    o["seconds"] = r.seconds;
    arr.push_back(std::move(o));
  }
  return j.dump(2) + "\n";
}

// One line per rule (the verdict last: it is long), then a summary.
std::string VerifyReport::table() const {
  std::string out = fmt::format("{:<34} {:<13} {:<9} {:>7}  {}\n", "rule", "family", "numeric", "seconds", "verdict");
  for (const RuleReport& r : rules) {
    std::string num = r.numeric.substr(0, r.numeric.find(':'));
    std::string verdict(verdict_name(r.verdict));
    if (r.verdict == Verdict::ProvedIf) verdict += " " + r.condition;
    if (!r.domain.empty() && !is_proved(r.verdict)) verdict += " (" + r.domain + ")";
    out += fmt::format("{:<34} {:<13} {:<9} {:>7.3f}  {}\n", r.name, r.family, num, r.seconds, verdict);
    if (!r.counterexample.empty()) out += "    counterexample " + r.counterexample + "\n";
    if (!r.message.empty()) out += "    " + r.message + "\n";
  }
  out += fmt::format(
      "{} rules: {} proved binary32-exact, {} proved over the reals (rounds differently in binary32), {} proved only "
      "if a condition, {} refuted ({} over the reals, {} in binary32), {} unknown, {} errors; {} numeric "
      "disagreements; "
      "{:.1f} s\n",
      rules.size(), count(Verdict::ProvedExact), count(Verdict::ProvedReals), count(Verdict::ProvedIf),
      count(Verdict::Refuted), refuted_in("reals"), refuted_in("binary32"), count(Verdict::Unknown),
      count(Verdict::Error), numeric_disagreements(), seconds);
  return out;
}

}  // namespace refinery::prove
