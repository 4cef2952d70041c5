// Which rules the extracted graph owes to which, from the e-graph's
// explanations (egraph/explain.h): the one provenance mechanism. For each
// chosen e-node, the explanations from its class's anchors (the nodes of
// the original values it now computes, or the first node of a class that
// rules made) to the chosen node name the rules on the way, and the rules
// that made the e-nodes those rules' matches needed (ProofForest::owed).
#pragma once

#include <cstddef>

#include "egraph/tensor/convert.h"
#include "extract/problem.h"
#include "optimize/report.h"

namespace refinery::optimize {

// Fills record.rules_used and record.explanations. The e-graph must have
// explanations on; `seeded_ids` is its id count when seeding ended.
void explain_extraction(const egraph::tensor::TensorEGraph& g, const egraph::tensor::Origin& origin,
                        const extract::EGraphProblem<egraph::tensor::TensorEGraph>& problem,
                        const extract::Solution& solution, ExtractionRecord& record);

}  // namespace refinery::optimize
