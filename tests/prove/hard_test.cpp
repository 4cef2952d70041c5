// The hard-case corpus (issue #17, item 6): tests/prove/hard/*.rules, each
// rule preceded by `; expect: VERDICT`, where VERDICT is `refuted (reals)`,
// `refuted (binary32)`, `proved (binary32-exact)`, `proved (reals)` or
// `proved only if CONDITION`. Every rule must get exactly that verdict, and
// a refutation's counterexample must be the interpreter's replay. A
// refutation followed by ` at empty dims` must be shown at an instance with
// an empty dim; a proof followed by ` with empty dims` must have tried one.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
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

// Whether an instance's description ("?x:2x0 ?a=[1]") gives a tensor an empty dim.
bool has_empty_dim(std::string_view describe) {
  for (size_t at = describe.find(':'); at != std::string_view::npos; at = describe.find(':', at + 1)) {
    size_t end = describe.find_first_of(" \n", at);
    std::string_view shape = describe.substr(at + 1, end == std::string_view::npos ? end : end - at - 1);
    for (size_t i = 0; i <= shape.size();) {
      size_t x = std::min(shape.find('x', i), shape.size());
      if (shape.substr(i, x - i) == "0") return true;
      i = x + 1;
    }
  }
  return false;
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
    std::string want = expect[r.line];
    bool refuted_empty = want.ends_with(" at empty dims"), tried_empty = want.ends_with(" with empty dims");
    if (refuted_empty || tried_empty) want.resize(want.rfind(refuted_empty ? " at " : " with "));
    EXPECT_EQ(verdict_of(r), want) << r.name << "\n" << r.message << "\n" << r.counterexample;
    if (refuted_empty) {  // "at ?x:2x0 ...:" names the instance
      EXPECT_TRUE(has_empty_dim(r.counterexample.substr(0, r.counterexample.find('\n')))) << r.name << "\n"
                                                                                          << r.counterexample;
    }
    if (tried_empty) {
      EXPECT_TRUE(std::any_of(r.shapes.begin(), r.shapes.end(), has_empty_dim))
          << r.name << " was not tried with an empty dim: " << ::testing::PrintToString(r.shapes);
    }
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
