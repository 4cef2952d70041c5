// Exact rescaling of synapse weights into a neuromorphic chip's weight
// format (issue 14, item 5; docs/spiking.md, "Weights in the chip's format").
// A chip stores a layer's weights as signed integers of weight_bits bits
// times a shared power of two; a layer whose integers share an odd factor g
// needs more bits than the integers divided by g. Positive rescaling (rule
// R1, lif-absorb-scale with linear-absorb-scale) moves g into the neuron:
// W/g, b/g and the neuron's input gain r g (w_in g for the Cuba neurons)
// give the same current r (W x + b) and identical spikes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace refinery::optimize {

struct Rescaled {
  std::string layer;        // the synapse layer
  std::string neuron;       // the neuron that took the factor
  uint64_t factor = 1;      // g
  int bits_before = 0, bits_after = 0;
};

// Rescales, in place, every Affine or Linear with constant weights whose only
// reader is a neuron's input (lif, if_neuron, li, i_neuron, cuba_lif,
// cuba_li) and whose weights do not fit `weight_bits` but fit once divided
// by their common odd factor; only where every new value (W/g, b/g, gain g)
// is exact in binary32, so the graph computes the same values. Layers that
// do not fit either way are left as they are (the chip mapping names them).
std::vector<Rescaled> rescale_weights_to_fit(ir::Graph& graph, int weight_bits);

}  // namespace refinery::optimize
