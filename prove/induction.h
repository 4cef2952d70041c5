// Internal to prove/: rules over the NIR primitives, proved by induction
// over the time step (ARCHITECTURE.md, decision 9; docs/spiking.md, "Rules
// and their proofs"). For each discretisation and reset the rule claims, and
// each instance, a relation between the two sides' states must hold at
// t = 0 (all states zero), be preserved by one step of the update equations
// (prove/z3/spiking.cpp) on any input, and give equal outputs; Z3 over the
// reals. A rule no candidate relation proves is run from zero state for a
// few steps on symbolic inputs: outputs that differ there refute it.
#pragma once

#include <vector>

#include "prove/instance.h"
#include "prove/verify.h"
#include "rules/rule_ast.h"

namespace refinery::prove {

// Whether the rule's instances hold a NIR primitive: such a rule is proved
// by induction (a stateless one in a single step).
bool needs_induction(const Instance& inst);

// Settles r.verdict (ProvedReals, Refuted, Unknown or Error) and says how in
// r.message (the relation and the modes) or r.counterexample.
void prove_by_induction(const rules::RuleBody& body, const std::vector<Instance>& insts, const VerifyOptions& opt,
                        RuleReport& r);

}  // namespace refinery::prove
