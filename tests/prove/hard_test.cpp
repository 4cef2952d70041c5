// The hard-case corpus (issue #17, item 6): tests/prove/hard/*.rules, each
// rule preceded by `; expect: VERDICT`, where VERDICT is `refuted (reals)`,
// `refuted (binary32)`, `proved (binary32-exact)`, `proved (reals)` or
// `proved only if CONDITION`. Every rule must get exactly that verdict, and
// a refutation's counterexample must be the interpreter's replay.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "prove/verify.h"
#include "rules/rules.h"

namespace refinery::prove {
namespace {

// The `; expect:` line before each rule, by the rule's line.
std::map<int, std::string> expectations(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::map<int, std::string> out;
  std::string line, pending;
  for (int n = 1; std::getline(in, line); ++n) {
    const std::string tag = "; expect: ";
    if (line.starts_with(tag))
      pending = line.substr(tag.size());
    else if (line.starts_with("(rule"))
      out[n] = std::exchange(pending, "");
  }
  return out;
}

// The verdict as the corpus writes it.
std::string verdict_of(const RuleReport& r) {
  switch (r.verdict) {
    case Verdict::ProvedExact: return "proved (binary32-exact)";
    case Verdict::ProvedReals: return "proved (reals)";
    case Verdict::ProvedIf: return "proved only if " + r.condition;
    case Verdict::Refuted: return "refuted (" + r.domain + ")";
    default: return std::string(verdict_name(r.verdict)) + (r.domain.empty() ? "" : " (" + r.domain + ")");
  }
}

void check_corpus(const char* name, size_t at_least) {
  auto path = std::filesystem::path(REFINERY_SOURCE_DIR) / "tests/prove/hard" / name;
  auto set = rules::load_rules({path});
  ASSERT_TRUE(set.has_value()) << set.error().str();
  auto expect = expectations(path);
  ASSERT_GE(set->rules().size(), at_least);
  std::vector<const rules::Rule*> all;
  for (const rules::Rule& r : set->rules()) all.push_back(&r);
  // A generous limit over the reals: a verdict must not hang on the load of
  // a shared CI machine (the largest instances take seconds).
  VerifyOptions opt;
  opt.timeout_ms = 30000;
  VerifyReport rep = verify_rules(all, opt);
  for (const RuleReport& r : rep.rules) {
    ASSERT_TRUE(expect.contains(r.line)) << r.name << " has no `; expect:` line";
    EXPECT_EQ(verdict_of(r), expect[r.line]) << r.name << "\n" << r.message << "\n" << r.counterexample;
    if (r.verdict == Verdict::Refuted) {
      EXPECT_NE(r.counterexample.find("(replayed in the interpreter"), std::string::npos) << r.name;
    }
  }
}

TEST(HardCases, UnsoundRulesAreRefuted) { check_corpus("unsound.rules", 15); }
TEST(HardCases, SoundRulesAreProved) { check_corpus("sound.rules", 10); }
TEST(HardCases, InexactRulesAreProvedOverTheRealsOnly) { check_corpus("inexact.rules", 3); }

}  // namespace
}  // namespace refinery::prove
