// Internal to prove/: the Z3 query for one instance of a rule. Both sides
// are evaluated symbolically on the same inputs (prove/z3/symbolic.h) and
// each output element's disequality is a query, over the reals or in IEEE
// binary32, with the axioms the rule asks for (docs/rules.md, Verification).
#pragma once

#include <string>

#include "prove/instance.h"
#include "rules/rule_ast.h"

namespace refinery::prove {

enum class Check { Unsat, Sat, Unknown, Error };

struct Query {
  Check result = Check::Error;
  std::string detail;  // counterexample or error
};

// Unsat: the sides are equal at this instance; Sat: `detail` is the
// counterexample (the inputs and both sides' values).
Query prove_instance(const rules::RuleBody& body, const Instance& inst, bool fp32, unsigned timeout_ms);

}  // namespace refinery::prove
