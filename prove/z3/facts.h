// Internal to prove/z3/: true facts about the uninterpreted functions over
// the reals (exp, log, sqrt, sigmoid, tanh, erf, softplus, sin, cos), stated
// on the applications a query has built. A solver's model may interpret
// such a function arbitrarily (sigmoid(-7719) = -1); a counterexample is
// replayed in the interpreter, and one that does not replay makes the query
// learn more of these facts and search again (docs/rules.md, Verification).
#pragma once

#include <vector>

#include "prove/z3/symbolic.h"

namespace refinery::prove {

// Cheap and always asserted: ranges (exp > 0 and exp(a) >= 1 + a, sigmoid
// in (0, 1), tanh and erf in (-1, 1), softplus > max(0, a), sqrt >= 0 where
// defined), the inverse laws log(exp(a)) = a and exp(log(b)) = b (b > 0),
// and values at numerals (exp(0) = 1, ...).
std::vector<z3::expr> function_facts(SymDomain& d);
// After a model that did not replay: monotonicity over every pair of
// applications of a function and sqrt(a)^2 = a (a >= 0).
std::vector<z3::expr> function_laws(SymDomain& d);
// The functions' true values at the model's arguments, to within 1e-9
// (relative): a == v implies f(a) in [f(v) - e, f(v) + e].
std::vector<z3::expr> function_pins(SymDomain& d, const z3::model& m);
// Whether a query has applications of functions that a model interprets
// freely (the division's inverse is pinned by its equations, so not it).
bool has_free_functions(const SymDomain& d);

}  // namespace refinery::prove
