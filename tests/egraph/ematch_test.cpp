// E-matching: linear and non-linear patterns, ground sub-terms, variable
// roots, multi-patterns, conditions, and search inside one class.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "egraph/parse.h"
#include "egraph/rewrite.h"
#include "tests/egraph/math_suite.h"

namespace refinery::egraph::math {
namespace {

using Graph = EGraph<MathNode, NoAnalysis>;
using Rule = Rewrite<MathNode, NoAnalysis>;

Rule rule(std::string_view lhs, std::string_view rhs = "0") {
  auto r = Rule::make("r", lhs, rhs);
  if (!r) throw std::runtime_error(r.error().to_string());
  return std::move(*r);
}

std::size_t count(const Graph& g, const Rule& r) {
  SearchMatches m;
  r.search(g, SIZE_MAX, m);
  return m.size();
}

Graph graph_of(std::initializer_list<std::string_view> terms) {
  Graph g;
  for (auto t : terms) g.add_expr(must_parse(t));
  g.rebuild();
  return g;
}

TEST(EMatch, LinearPattern) {
  Graph g = graph_of({"(+ x (+ y z))", "(* x y)"});
  EXPECT_EQ(count(g, rule("(+ ?a ?b)")), 2u);
  EXPECT_EQ(count(g, rule("(+ ?a (+ ?b ?c))")), 1u);
  EXPECT_EQ(count(g, rule("(* ?a ?b)")), 1u);
  EXPECT_EQ(count(g, rule("(sin ?a)")), 0u);
}

TEST(EMatch, NonLinearPatternNeedsEqualClasses) {
  Graph g = graph_of({"(+ x x)", "(+ x y)"});
  EXPECT_EQ(count(g, rule("(+ ?a ?a)")), 1u);
  g.merge(*g.lookup_expr(must_parse("x")), *g.lookup_expr(must_parse("y")));
  g.rebuild();
  // (+ x y) is now congruent to (+ x x): one class, one node.
  EXPECT_EQ(count(g, rule("(+ ?a ?a)")), 1u);
  EXPECT_EQ(g.num_classes(), 2u);
}

TEST(EMatch, GroundSubtermsAreLookedUp) {
  Graph g = graph_of({"(+ (* 2 x) y)", "(+ (* 3 x) y)"});
  EXPECT_EQ(count(g, rule("(+ (* 2 x) ?a)")), 1u);
  EXPECT_EQ(count(g, rule("(+ (* 4 x) ?a)")), 0u);
  EXPECT_EQ(count(g, rule("(* 3 x)")), 1u);  // a ground pattern
}

TEST(EMatch, VariableRootMatchesEveryClass) {
  Graph g = graph_of({"(+ x y)"});
  EXPECT_EQ(count(g, rule("?a")), 3u);
}

TEST(EMatch, SubstitutionBindsTheRightClasses) {
  Graph g = graph_of({"(+ x (* y z))"});
  Rule r = rule("(+ ?a (* ?b ?c))");
  SearchMatches m;
  r.search(g, SIZE_MAX, m);
  ASSERT_EQ(m.size(), 1u);
  Subst s = m.subst(0);
  EXPECT_EQ(s[r.var("?a")], *g.lookup_expr(must_parse("x")));
  EXPECT_EQ(s[r.var("?c")], *g.lookup_expr(must_parse("z")));
  EXPECT_EQ(m.roots[0], *g.lookup_expr(must_parse("(+ x (* y z))")));
}

TEST(EMatch, MultiPatternJoinsOnSharedVariables) {
  Graph g = graph_of({"(sin x)", "(cos x)", "(cos y)", "(ln z)"});
  auto r = Rule::make_multi("sin-cos", {{"?s", "(sin ?a)"}, {"?c", "(cos ?a)"}}, {{"?s", "(+ ?s ?c)"}});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->is_multi());
  SearchMatches m;
  r->search(g, SIZE_MAX, m);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m.subst(0)[r->var("?a")], *g.lookup_expr(must_parse("x")));
  EXPECT_EQ(r->apply(g, m), 1u);
  g.rebuild();
  EXPECT_EQ(g.find(*g.lookup_expr(must_parse("(sin x)"))), g.find(*g.lookup_expr(must_parse("(+ (sin x) (cos x))"))));
}

TEST(EMatch, MultiPatternWithBoundRoot) {
  // The second pattern is rooted at a class the first one bound.
  Graph g = graph_of({"(+ (sin x) 1)", "(+ (sin y) 2)"});
  Id cos_x = g.add_expr(must_parse("(cos x)"));
  g.merge(*g.lookup_expr(must_parse("(sin x)")), cos_x);
  g.rebuild();
  auto r = Rule::make_multi("m", {{"?r", "(+ ?s ?k)"}, {"?s", "(cos ?a)"}}, {{"?r", "(* ?a ?k)"}});
  ASSERT_TRUE(r);
  SearchMatches m;
  r->search(g, SIZE_MAX, m);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m.subst(0)[r->var("?k")], *g.lookup_expr(must_parse("1")));
}

TEST(EMatch, RhsVariablesMustBeBound) {
  auto r = Rule::make("bad", "(+ ?a ?b)", "(+ ?a ?c)");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "rule 'bad': variable ?c on the right side is not bound by the left side");
}

TEST(EMatch, ConditionsFilterMatches) {
  Graph g = graph_of({"(+ x 0)", "(+ y 0)"});
  Rule r = rule("(+ ?a 0)", "?a");
  Var a = r.var("?a");
  Id x = *g.lookup_expr(must_parse("x"));
  r.when([a, x](const Graph&, Id, Subst s) { return s[a] == x; });
  SearchMatches m;
  r.search(g, SIZE_MAX, m);
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(r.apply(g, m), 1u);  // only x's match passes
  g.rebuild();
  EXPECT_EQ(g.find(x), g.find(*g.lookup_expr(must_parse("(+ x 0)"))));
  EXPECT_NE(g.find(*g.lookup_expr(must_parse("y"))), g.find(*g.lookup_expr(must_parse("(+ y 0)"))));
}

TEST(EMatch, SearchLimitStopsEarly) {
  Graph g = graph_of({"(+ 1 2)", "(+ 3 4)", "(+ 5 6)"});
  SearchMatches m;
  rule("(+ ?a ?b)").search(g, 2, m);
  EXPECT_EQ(m.size(), 2u);
}

// Issue #20: a search split into parts over the root candidates gives, its
// parts joined in order, the whole search's matches; cut at a limit, the
// first `limit` of them (what the runner does with threads).
// Every match of `pat` rooted anywhere, by a scan of every node of every
// class (the machine's Bind without its binary search): root then subst
// per match, each subst in `vars`' order.
void scan_matches(const Graph& g, const PatternAst<MathNode>& pat, Id term, Id cls, std::vector<Id>& bound,
                  const std::function<void()>& found) {
  const auto& t = pat[term];
  if (t.is_var) {
    Id& b = bound[index(t.var)];
    if (b != kInvalidId) {
      if (b == cls) found();
      return;
    }
    b = cls;
    found();
    b = kInvalidId;
    return;
  }
  for (const MathNode& n : g[cls].nodes) {
    if (!n.same_op(t.node)) continue;
    auto kids = n.children();
    auto pkids = t.node.children();
    std::function<void(std::size_t)> at = [&](std::size_t i) {
      if (i == kids.size()) return found();
      std::vector<Id> before = bound;
      scan_matches(g, pat, pkids[i], kids[i], bound, [&] { at(i + 1); });
      bound = before;
    };
    at(0);
  }
}

// Where a node's first child is a variable bound already, Bind takes the
// nodes whose first child is its class by binary search in the class's
// sorted nodes (language.h, group_key), not by a scan. On classes of many
// nodes (associativity and commutativity), the matches are a scan's.
TEST(EMatch, ABoundFirstChildIsFoundByBinarySearch) {
  Graph g;
  g.add_expr(must_parse("(+ a (+ b (+ a (+ (* a b) (* (+ a b) (+ b a))))))"));
  g.add_expr(must_parse("(* x (* x (* x (* y (+ x (+ x y))))))"));
  g.rebuild();
  std::vector<Rule> rules = assoc_rules();
  rules.push_back(rule("(* ?a ?b)", "(* ?b ?a)"));
  rules.push_back(rule("(* ?a (* ?b ?c))", "(* (* ?a ?b) ?c)"));
  for (int round = 0; round < 3; ++round) {
    std::vector<SearchMatches> ms(rules.size());
    for (std::size_t r = 0; r < rules.size(); ++r) rules[r].search(g, SIZE_MAX, ms[r]);
    for (std::size_t r = 0; r < rules.size(); ++r) rules[r].apply(g, ms[r]);
    g.rebuild();
  }
  std::size_t large = 0;
  for (Id c : g.class_ids()) large += g[c].nodes.size() > 8;
  ASSERT_GT(large, 3u) << "classes where Bind searches";
  for (const char* lhs : {"(* (* ?x ?x) ?x)", "(+ ?a (+ ?a ?b))", "(* (+ ?a ?b) (+ ?b ?a))", "(+ (* ?a ?b) ?a)"}) {
    Rule r = rule(lhs);
    SearchMatches machine;
    r.search(g, SIZE_MAX, machine);
    std::vector<std::vector<Id>> want, got;
    for (Id c : g.class_ids()) {
      std::vector<Id> bound(r.vars().size(), kInvalidId);
      scan_matches(g, r.lhs(), r.lhs().root(), c, bound, [&] {
        want.push_back({c});
        want.back().insert(want.back().end(), bound.begin(), bound.end());
      });
    }
    for (std::size_t i = 0; i < machine.size(); ++i) {
      got.push_back({machine.roots[i]});
      for (Id v : machine.subst(i).ids) got.back().push_back(v);
    }
    EXPECT_GT(want.size(), 0u) << lhs;
    EXPECT_EQ(got, want) << lhs;
  }
}

TEST(EMatch, SearchInPartsJoinsToTheWholeSearch) {
  Graph g;
  g.add_expr(must_parse("(+ 1 (+ 2 (+ 3 (+ 4 (+ 5 6)))))"));
  g.rebuild();
  auto rules = assoc_rules();
  for (int round = 0; round < 3; ++round) {  // grow the graph: many + classes and nodes
    std::vector<SearchMatches> ms(rules.size());
    for (std::size_t r = 0; r < rules.size(); ++r) rules[r].search(g, SIZE_MAX, ms[r]);
    for (std::size_t r = 0; r < rules.size(); ++r) rules[r].apply(g, ms[r]);
    g.rebuild();
  }
  ASSERT_GT(g.num_classes(), 20u);
  for (const Rule& r : {rule("(+ ?a (+ ?b ?c))"), rule("(+ ?a ?b)"), rule("?a"), rule("(+ 1 ?a)")}) {
    SearchMatches whole;
    r.search(g, SIZE_MAX, whole);
    ASSERT_GT(whole.size(), 0u);
    for (std::size_t limit : {SIZE_MAX, whole.size() / 2 + 1, std::size_t{1}}) {
      SearchMatches cut;
      r.search(g, limit, cut);
      for (std::size_t parts : {1u, 2u, 3u, 7u, 64u}) {
        SearchMatches joined, part;
        joined.reset(static_cast<std::uint32_t>(r.vars().size()));
        for (std::size_t p = 0; p < parts; ++p) {
          r.search_part(g, limit, part, p, parts);
          joined.append(part, limit);
        }
        EXPECT_EQ(joined.roots, cut.roots) << parts << " parts, limit " << limit;
        EXPECT_EQ(joined.substs, cut.substs) << parts << " parts, limit " << limit;
      }
    }
  }
  EXPECT_TRUE(g.check_invariants().empty());
}

TEST(EMatch, RepeatedMatchesGoAndTheRestKeepTheirOrder) {
  // Matches as a search that reaches one match in several ways writes them:
  // (root, x, y) = (1, 2, 3) three times, (1, 3, 2) once, (4, 2, 3) twice.
  SearchMatches m;
  m.reset(2);
  auto push = [&](std::uint32_t root, std::uint32_t x, std::uint32_t y) {
    m.roots.push_back(make_id(root));
    m.substs.push_back(make_id(x));
    m.substs.push_back(make_id(y));
  };
  push(1, 2, 3);
  push(1, 2, 3);
  push(1, 3, 2);
  push(4, 2, 3);
  push(1, 2, 3);
  push(4, 2, 3);
  EXPECT_EQ(m.drop_repeats(), 3u);
  ASSERT_EQ(m.size(), 3u);
  std::vector<std::vector<std::uint32_t>> left;
  for (std::size_t i = 0; i < m.size(); ++i)
    left.push_back({index(m.roots[i]), index(m.subst(i)[make_var(0)]), index(m.subst(i)[make_var(1)])});
  EXPECT_EQ(left, (std::vector<std::vector<std::uint32_t>>{{1, 2, 3}, {1, 3, 2}, {4, 2, 3}}));
  EXPECT_EQ(m.drop_repeats(), 0u);
  // A rule without variables: one match per root.
  SearchMatches ground;
  ground.reset(0);
  for (std::uint32_t r : {5u, 5u, 6u}) ground.roots.push_back(make_id(r));
  EXPECT_EQ(ground.drop_repeats(), 1u);
  EXPECT_EQ(ground.size(), 2u);
}

// A rule's check on what a variable is bound to: run where the search binds
// it, once per candidate class, and what fails it is never a match.
TEST(EMatch, AVariableCheckEndsTheSearchWhereTheVariableIsBound) {
  Graph g = graph_of({"(+ x 2)", "(+ y 3)", "(* (+ z 2) (+ w 5))"});
  std::size_t asked = 0;
  auto is_two = [&](const Graph& eg, Id c) {
    ++asked;
    for (const MathNode& n : eg[c].nodes)
      if (n.is_constant() && n.value() == 2) return true;
    return false;
  };
  auto make = [&](std::string_view text, bool multi = false) {
    VarTable vars;
    std::vector<Rule::Rooted> lhs;
    auto pat = parse_pattern<MathNode>(text, vars);
    if (!pat) throw std::runtime_error(pat.error().to_string());
    lhs.emplace_back(multi ? vars.intern("?r") : Var{}, std::move(*pat));
    Var b = *vars.lookup("?b");
    auto r = Rule::make_custom_ast("r", vars, std::move(lhs), multi,
                                   {"r", [](Graph&, Id, Subst) { return std::size_t{0}; }}, {{b, is_two}});
    if (!r) throw std::runtime_error(r.error().to_string());
    return std::move(*r);
  };
  // Four additions, two with 2 on the right.
  EXPECT_EQ(count(g, make("(+ ?a ?b)")), 2u);
  EXPECT_EQ(asked, 4u);
  // Below a product: the check runs only where the search reached an
  // addition under one, and one of the two products' sums passes.
  asked = 0;
  EXPECT_EQ(count(g, make("(* (+ ?a ?b) ?c)")), 1u);
  EXPECT_EQ(asked, 1u);
  // A variable root: every class is asked.
  asked = 0;
  EXPECT_EQ(count(g, make("?b")), 1u);  // the one class of 2
  EXPECT_EQ(asked, g.class_ids().size());
  // A multi-pattern's root.
  asked = 0;
  EXPECT_EQ(count(g, make("(+ ?a ?b)", true)), 2u);
  EXPECT_EQ(asked, 4u);
}

}  // namespace
}  // namespace refinery::egraph::math
