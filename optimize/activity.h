// Activity of a spiking graph's values, measured: the graph is simulated on
// the validation's seeded input spike trains (the same ones validation uses)
// and each value's fraction of nonzero elements per step is counted. The
// neuromorphic target prices synaptic events by it (targets/neuromorphic.h);
// rates are measured, never assumed.
#pragma once

#include <vector>

#include "egraph/tensor/convert.h"
#include "ir/diag.h"
#include "ir/graph.h"
#include "verify/validate.h"

namespace refinery::optimize {

// By ir value index: graph inputs and every NIR op's result (runtime's
// LayerTrace::nonzero); NaN for values the simulator does not trace.
Expected<std::vector<double>> measure_activity(const ir::Graph& graph, const verify::ValidationOptions& options);

// By e-class index of the saturated e-graph: the original's values where
// seeded, then, for a class rules made, the activity of the first measured
// class among its nodes' operands (an estimate for extraction only; the
// report measures the refined graph again). NaN where nothing is known;
// empty when value_activity is (no activity measured: not a spiking target).
std::vector<double> class_activity(const egraph::tensor::TensorEGraph& g, const egraph::tensor::Origin& origin,
                                   const std::vector<double>& value_activity);

}  // namespace refinery::optimize
