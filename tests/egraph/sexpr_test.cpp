// The s-expression reader and the term/pattern parsers: exact messages.
#include "egraph/sexpr.h"

#include <gtest/gtest.h>

#include "egraph/parse.h"
#include "tests/egraph/math_lang.h"

namespace refinery::egraph {
namespace {

using math::MathNode;

std::string error_of(std::string_view text) {
  auto r = parse_term<MathNode>(text);
  return r ? std::string("ok") : r.error().to_string();
}

TEST(SExpr, ReadsNestedLists) {
  auto e = parse_sexpr("(+ 1 ; comment\n (* x 2))");
  ASSERT_TRUE(e);
  ASSERT_FALSE(e->is_atom);
  EXPECT_EQ(e->items.size(), 3u);
  EXPECT_EQ(e->items[2].items[0].atom, "*");
  EXPECT_EQ(e->items[2].pos.line, 2u);
  EXPECT_EQ(e->items[2].pos.col, 2u);
}

TEST(SExpr, ErrorsCarryLineAndColumn) {
  EXPECT_EQ(error_of(""), "1:1: expected an expression, found end of input");
  EXPECT_EQ(error_of("(+ 1 2"), "1:1: unclosed '('");
  EXPECT_EQ(error_of("(+ 1 2))"), "1:8: unexpected ')' after the expression");
  EXPECT_EQ(error_of("()"), "1:1: empty list '()'");
  EXPECT_EQ(error_of("((+) 1)"), "1:2: operator must be an atom");
  EXPECT_EQ(error_of("(+ 1\n  (sin 1 2))"), "2:4: operator 'sin' takes 1 arguments, got 2");
  EXPECT_EQ(error_of("(foo 1)"), "1:2: unknown operator 'foo'");
  EXPECT_EQ(error_of("(+ ?a 1)"), "1:4: variable '?a' in a ground term");
  EXPECT_EQ(error_of("verylongname"), "1:1: symbol 'verylongname' is longer than 8 characters");
}

TEST(SExpr, TermsRoundTrip) {
  for (const char* text : {"(+ x (* 2 y))", "(d x (pow x 3))", "-1", "(i (ln x) x)"}) {
    auto t = parse_term<MathNode>(text);
    ASSERT_TRUE(t) << text;
    EXPECT_EQ(t->to_string(), text);
  }
}

TEST(SExpr, PatternsShareVariables) {
  VarTable vars;
  auto lhs = parse_pattern<MathNode>("(+ ?a (+ ?b ?a))", vars);
  auto rhs = parse_pattern<MathNode>("(* ?b ?a)", vars);
  ASSERT_TRUE(lhs && rhs);
  EXPECT_EQ(vars.size(), 2u);
  EXPECT_EQ(lhs->vars().size(), 2u);
  EXPECT_EQ(rhs->to_string(vars), "(* ?b ?a)");
}

}  // namespace
}  // namespace refinery::egraph
