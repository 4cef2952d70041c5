// The rule reader: the golden failing files (expected message on their first
// line), the library loads, and the examples of docs/rules.md parse.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "rules/rules.h"

namespace refinery::rules {
namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(RuleParse, FailingFilesGiveTheirMessage) {
  std::filesystem::path dir = std::filesystem::path(REFINERY_SOURCE_DIR) / "tests/rules/fail";
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string text = read(e.path());
    std::string first = text.substr(0, text.find('\n'));
    ASSERT_TRUE(first.starts_with("; ERROR: ")) << e.path();
    auto set = parse_rules(text, e.path().filename().string());
    ASSERT_FALSE(set.has_value()) << e.path();
    EXPECT_EQ(set.error().str(), first.substr(9)) << e.path();
    ++n;
  }
  EXPECT_GE(n, 10);
}

TEST(RuleParse, LibraryLoadsWithAtLeast150Rules) {
  auto lib = load_library();
  ASSERT_TRUE(lib.has_value()) << lib.error().str();
  EXPECT_GE(lib->rules().size(), 150u);
  EXPECT_GE(lib->families().size(), 9u);
  for (const auto& r : lib->rules()) EXPECT_FALSE(r.family.empty());
  EXPECT_EQ(lib->rewrites().size(), lib->rules().size());
  EXPECT_EQ(lib->rewrites({.families = {"merge"}}).size(), 6u);
}

TEST(RuleParse, BothWaysMakesTwoRules) {
  auto set = parse_rules("(rule r (add ?a ?b) <=> (add ?b ?a))", "x.rules");
  ASSERT_TRUE(set.has_value()) << set.error().str();
  ASSERT_EQ(set->rules().size(), 2u);
  EXPECT_EQ(set->rules()[1].name, "r-rev");
  EXPECT_EQ(set->rules()[0].family, "x");
}

TEST(RuleParse, DocExamplesParse) {
  std::string doc = read(std::filesystem::path(REFINERY_SOURCE_DIR) / "docs/rules.md");
  std::regex block("```rules\n([\\s\\S]*?)```");
  int n = 0;
  for (std::sregex_iterator it(doc.begin(), doc.end(), block), end; it != end; ++it) {
    auto set = parse_rules((*it)[1].str(), "doc.rules");
    EXPECT_TRUE(set.has_value()) << (set ? "" : set.error().str()) << "\n" << (*it)[1].str();
    ++n;
  }
  EXPECT_GE(n, 3);
}

// Kinds come from the parsed form (the operators of each side, the roots),
// in both directions of a <=> rule; :ruleset states one.
RuleKind kind_of_rule(const char* text, const char* name) {
  auto set = parse_rules(text, "k.rules");
  EXPECT_TRUE(set.has_value()) << set.error().str();
  const Rule* r = set ? set->find(name) : nullptr;
  EXPECT_NE(r, nullptr) << name;
  return r ? r->kind : RuleKind::Simplify;
}

TEST(RuleKinds, ComeFromTheParsedForm) {
  EXPECT_EQ(kind_of_rule("(rule c (add ?a ?b) => (add ?b ?a))", "c"), RuleKind::Permute);
  EXPECT_EQ(kind_of_rule("(rule a (matmul (matmul ?a ?b) ?c) <=> (matmul ?a (matmul ?b ?c)))", "a-rev"),
            RuleKind::Permute);
  // An attribute list is no operator: the two transposes are the same ops.
  EXPECT_EQ(kind_of_rule("(rule t (transpose :perm [1 0] (transpose :perm [1 0] ?x)) => ?x)", "t"), RuleKind::Simplify);
  EXPECT_EQ(kind_of_rule("(rule rr (relu (relu ?x)) => (relu ?x))", "rr"), RuleKind::Simplify);
  EXPECT_EQ(kind_of_rule("(rule d (mul ?a (add ?b ?c)) <=> (add (mul ?a ?b) (mul ?a ?c)))", "d"), RuleKind::Explore);
  EXPECT_EQ(kind_of_rule("(rule d (mul ?a (add ?b ?c)) <=> (add (mul ?a ?b) (mul ?a ?c)))", "d-rev"),
            RuleKind::Simplify);
  EXPECT_EQ(kind_of_rule("(rule s (sub ?a ?b) <=> (add ?a (neg ?b)))", "s"), RuleKind::Explore);
  // A merge has more operators on its right too (concat, split), but is a merge.
  EXPECT_EQ(kind_of_rule("(rule m ?y1 = (relu ?x) ?y2 = (relu ?x) => ?y1 = (relu ?x) ?y2 = (relu ?x))", "m"),
            RuleKind::Merge);
  EXPECT_EQ(kind_of_rule("(rule rr (relu (relu ?x)) => (relu ?x) :ruleset explore)", "rr"), RuleKind::Explore);
}

TEST(RuleKinds, LibraryHasEveryKind) {
  auto lib = load_library();
  ASSERT_TRUE(lib.has_value()) << lib.error().str();
  std::map<RuleKind, int> n;
  for (const Rule& r : lib->rules()) ++n[r.kind];
  for (RuleKind k : {RuleKind::Simplify, RuleKind::Explore, RuleKind::Permute, RuleKind::Merge})
    EXPECT_GT(n[k], 0) << to_string(k);
  EXPECT_EQ(lib->find("add-comm")->kind, RuleKind::Permute);
  EXPECT_EQ(lib->find("merge-matmul")->kind, RuleKind::Merge);
  EXPECT_EQ(lib->find("mul-distrib-add")->kind, RuleKind::Explore);
  EXPECT_EQ(lib->find("neg-neg")->kind, RuleKind::Simplify);
}

}  // namespace
}  // namespace refinery::rules
