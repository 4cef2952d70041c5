// Internal to prove/: the Z3 query for one instance of a rule. Both sides
// are evaluated symbolically on the same inputs (prove/z3/symbolic.h) and
// each output element's disequality is a query, over the reals or in IEEE
// binary32, with the axioms the rule asks for (docs/rules.md, Verification).
#pragma once

#include <string>

#include "prove/instance.h"
#include "rules/rule_ast.h"

namespace refinery::prove {

// Undefined: over the reals the sides are equal wherever both are defined,
// but the right side is undefined somewhere the left side is defined.
enum class Check { Unsat, Sat, Undefined, Unknown, Error };

// What a query asks (docs/rules.md, Verification):
//   Reals: where the left side is defined and the conditions hold, the right
//     side is defined and equal (the left side's partiality is assumed, the
//     right side's is an obligation);
//   Exact32: in binary32, on every input (NaN, infinities and signed zeros
//     included) the sides are the same value (NaN equals NaN, -0 is not +0);
//   Special32: in binary32, on every input where no operation overflows or
//     underflows to zero, the sides are both NaN, both the same infinity, or
//     both finite.
//   Witness32: Exact32's search on random binary32 inputs only (no solver):
//     Sat with an input where the sides differ, else Unknown.
//   Classes32: in binary32, on finite inputs of moderate magnitude (0, or
//     2^-8 to 2^8 in absolute value), every output element is of the same
//     class on both sides (both NaN, the same infinity, or both finite); a
//     counterexample must differ in class replayed in f32 and in f64 (so not
//     by overflow). The instances with empty dims ask it: a reduction over
//     an empty axis gives -inf, +inf or NaN in binary32 and is undefined
//     over the reals, where the query of the reals cannot compare it.
enum class Domain { Reals, Exact32, Special32, Witness32, Classes32 };

struct Query {
  Check result = Check::Error;
  std::string detail;     // counterexample or error
  std::string condition;  // Undefined: what the right side needs, in the rule's variables
};

// Unsat: the claim holds at this instance; Sat: `detail` is the
// counterexample (the inputs and both sides' values).
Query prove_instance(const rules::RuleBody& body, const Instance& inst, Domain domain, unsigned timeout_ms);

}  // namespace refinery::prove
