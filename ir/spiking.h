// Spiking (NIR) ops in the IR: the names of their operands, and the figures
// `refinery inspect` gives for a spiking graph. Operand 0 is the op's input;
// the others are its parameters, one constant tensor each (population-shaped,
// or a scalar that broadcasts). Semantics: docs/spiking.md; format: docs/nir.md.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "ir/graph.h"

namespace refinery::ir {

// The NIR primitives (Affine ... CubaLIF). Stateful ones are marked in OpInfo.
bool is_nir_op(Op op);

// Operand names of a NIR op in order, "input" first ({"input", "tau", "r",
// "v_leak", "v_threshold", "v_reset"} for lif); empty for other ops.
std::span<const std::string_view> operand_names(Op op);
std::optional<size_t> operand_index(Op op, std::string_view name);

// Whether the graph has a stateful op (it then runs through time).
bool is_spiking_graph(const Graph& graph);

struct SpikingStats {
  int64_t layers = 0;           // NIR op nodes
  int64_t neurons = 0;          // elements of stateful neuron ops' outputs (not Delay)
  int64_t synapses = 0;         // connections of Affine, Linear and convolutions
  int64_t parameters = 0;       // elements of constants
  int64_t recurrent_edges = 0;  // operands that read the previous time step
};
SpikingStats spiking_stats(const Graph& graph);

}  // namespace refinery::ir
