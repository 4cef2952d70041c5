#include "prove/verify.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "prove/instance.h"
#include "prove/numeric.h"
#include "prove/z3/query.h"
#include "rules/rule_ast.h"

namespace refinery::prove {

using namespace rules;
using Clock = std::chrono::steady_clock;

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Proved: return "proved";
    case Verdict::Refuted: return "refuted";
    case Verdict::Unknown: return "unknown";
    case Verdict::Error: return "error";
  }
  return "?";
}

RuleReport verify_rule(const Rule& rule, const VerifyOptions& opt) {
  auto t0 = Clock::now();
  RuleReport r{rule.name, rule.family, rule.file, rule.line};
  std::string why;
  auto insts = make_instances(*rule.body, rule.name, opt.instances, why);
  if (insts.empty()) {
    r.verdict = Verdict::Error;
    r.message = "no instance satisfies the rule's types and conditions: " + why;
  } else {
    r.verdict = Verdict::Proved;
    for (const Instance& inst : insts) {
      r.shapes.push_back(inst.describe);
      Query q = prove_instance(*rule.body, inst, false, opt.timeout_ms);
      if (q.result == Check::Error) {
        r.verdict = Verdict::Error;
        r.message = q.detail;
        break;
      }
      if (q.result == Check::Sat) {
        r.verdict = Verdict::Refuted;
        r.counterexample = fmt::format("at {}:\n{}", inst.describe, q.detail);
        break;
      }
      if (q.result == Check::Unknown) {
        r.verdict = Verdict::Unknown;
        r.message = q.detail;
      }
    }
    if (r.verdict == Verdict::Proved && opt.fp32) {
      // A proof that needs a law of a transcendental function (exp of a sum
      // is a product, sigmoid and tanh through exp) holds over the reals
      // only: binary32 exp, sigmoid and tanh round, and obey no such law.
      static const char* const kTranscendental[] = {"exp-add", "exp-sum", "sigmoid-def", "tanh-def"};
      const auto& axioms = rule.body->axioms;
      bool transcendental = std::any_of(std::begin(kTranscendental), std::end(kTranscendental), [&](const char* ax) {
        return std::find(axioms.begin(), axioms.end(), ax) != axioms.end();
      });
      if (transcendental) {
        r.fp32 = "reals-only";
      } else {
        Query q = prove_instance(*rule.body, insts.front(), true, opt.fp_timeout_ms);
        r.fp32 = q.result == Check::Unsat ? "exact" : q.result == Check::Sat ? "reals-only" : "unknown";
      }
    }
    if (opt.numeric) {
      std::string bad;
      bool skipped = false;
      for (size_t i = 0; i < insts.size() && bad.empty() && !skipped; ++i)
        bad = numeric_check(insts[i], std::hash<std::string>()(rule.name) + i, skipped);
      r.numeric = skipped ? "skipped: " + bad : bad.empty() ? "agree" : "disagree: " + bad;
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
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < rules.size(); i = next++) rep.rules[i] = verify_rule(*rules[i], opt);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::max(opt.threads, 1); ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  // `a <=> b` is one equation read both ways: binary32 exactness is the
  // same for NAME and NAME-rev, so where one direction's query settled it
  // and the other's timed out, the other takes the answer.
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < rules.size(); ++i) by_name[rules[i]->name] = i;
  for (size_t i = 0; i < rules.size(); ++i) {
    const std::string& name = rules[i]->name;
    if (!name.ends_with("-rev")) continue;
    auto it = by_name.find(name.substr(0, name.size() - 4));
    if (it == by_name.end() || rules[it->second]->file != rules[i]->file) continue;
    RuleReport& fwd = rep.rules[it->second];
    RuleReport& rev = rep.rules[i];
    if (fwd.fp32 == "unknown" && (rev.fp32 == "exact" || rev.fp32 == "reals-only")) fwd.fp32 = rev.fp32;
    if (rev.fp32 == "unknown" && (fwd.fp32 == "exact" || fwd.fp32 == "reals-only")) rev.fp32 = fwd.fp32;
  }
  rep.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return rep;
}

int VerifyReport::count(Verdict v) const {
  return static_cast<int>(std::count_if(rules.begin(), rules.end(), [&](const RuleReport& r) { return r.verdict == v; }));
}

int VerifyReport::exact_fp32() const {
  return static_cast<int>(std::count_if(rules.begin(), rules.end(), [](const RuleReport& r) { return r.fp32 == "exact"; }));
}

int VerifyReport::numeric_disagreements() const {
  return static_cast<int>(std::count_if(rules.begin(), rules.end(), [](const RuleReport& r) { return r.numeric.starts_with("disagree"); }));
}

std::string VerifyReport::json() const {
  nlohmann::ordered_json j;
  j["summary"] = {{"rules", rules.size()},
                  {"proved", count(Verdict::Proved)},
                  {"refuted", count(Verdict::Refuted)},
                  {"unknown", count(Verdict::Unknown)},
                  {"error", count(Verdict::Error)},
                  {"exact_fp32", exact_fp32()},
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
    o["shapes"] = r.shapes;
    if (!r.fp32.empty()) o["fp32"] = r.fp32;
    o["numeric"] = r.numeric;
    if (!r.counterexample.empty()) o["counterexample"] = r.counterexample;
    if (!r.message.empty()) o["message"] = r.message;
    o["seconds"] = r.seconds;
    arr.push_back(std::move(o));
  }
  return j.dump(2) + "\n";
}

std::string VerifyReport::table() const {
  std::string out = fmt::format("{:<34} {:<13} {:<8} {:<11} {:<9} {:>7}\n", "rule", "family", "verdict", "fp32", "numeric", "seconds");
  for (const RuleReport& r : rules) {
    std::string num = r.numeric.substr(0, r.numeric.find(':'));
    out += fmt::format("{:<34} {:<13} {:<8} {:<11} {:<9} {:>7.3f}\n", r.name, r.family, verdict_name(r.verdict),
                       r.fp32.empty() ? "-" : r.fp32, num, r.seconds);
    if (!r.counterexample.empty()) out += "    counterexample " + r.counterexample + "\n";
    if (!r.message.empty()) out += "    " + r.message + "\n";
  }
  out += fmt::format("{} rules: {} proved ({} exact in binary32), {} refuted, {} unknown, {} errors; {} numeric disagreements; {:.1f} s\n",
                     rules.size(), count(Verdict::Proved), exact_fp32(), count(Verdict::Refuted), count(Verdict::Unknown),
                     count(Verdict::Error), numeric_disagreements(), seconds);
  return out;
}

}  // namespace refinery::prove
