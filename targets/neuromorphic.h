// The neuromorphic target (Loihi-class chips, targets/specs/loihi*.json,
// spinnaker2.json): a spiking graph mapped onto neuron cores, each core
// holding some neurons of one population and the synapses into them, and a
// time step priced by its synaptic events and neuron updates. The model and
// its limits are in docs/targets.md, "Neuromorphic targets".
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/diag.h"
#include "ir/graph.h"
#include "targets/cost_model.h"

namespace refinery::targets {

// One population on the chip: a neuron layer (lif, if_neuron, cuba_lif,
// li, cuba_li, i_neuron, threshold), or a synapse layer whose result no
// neuron takes (a relay of graded values, as an Affine read by the Output).
struct PopulationMap {
  std::string layer, op;         // the node's label and op name
  int64_t neurons = 0;           // compartments: the output's elements
  int64_t synapses = 0;          // nonzero weights into it
  int64_t fan_in = 0;            // the most synapses into one of its neurons
  int64_t input_axons = 0;       // distinct source elements its synapses read
  int64_t neurons_per_core = 0;  // the partition: chunks of this many neurons
  int64_t cores = 0;
  double synaptic_events_per_step = 0;  // expected, from the measured activity of its inputs
};

// Whether a synapse layer's weights are exactly 2^e x (signed integers of
// `bits_needed` bits): the chip's format, integers of
// NeuromorphicSpec::weight_bits with one shared exponent per layer (Loihi's
// weight exponent; docs/targets.md). A common odd factor of the integers is
// not part of the format: an exact rescaling moves it into the neuron
// (optimize/fit_weights.h).
struct WeightFit {
  std::string layer, op;
  int bits_needed = 0;       // sign bit included; 0 for an all-zero weight
  int weight_bits = 0;       // the chip's
  double scale = 0;          // 2^e: the weights are 2^e times integers of bits_needed bits
  uint64_t odd_factor = 1;   // the integers' greatest common odd factor (1: none)
  bool fits() const { return bits_needed <= weight_bits; }
};

// The fit of one weight tensor (WeightFit without layer and op).
WeightFit weight_fit(const ir::Tensor& w, int weight_bits);

struct CoreMap {
  int64_t cores = 0, neurons = 0, synapses = 0;
  double synaptic_events_per_step = 0, neuron_updates_per_step = 0;
  double energy_per_step = 0;  // joules: events x energy_per_synaptic_op + updates x energy_per_neuron_update
  std::vector<PopulationMap> populations;
  std::vector<WeightFit> weights;  // per synapse layer with constant weights, in graph order
};

// Maps `graph` onto the chip of `spec` (kind neuromorphic). `activity`, by
// ir value index, is the measured fraction of each value's elements that
// are nonzero at a step (spikes per neuron and step for a spiking layer);
// a value it does not cover counts as always active (1). Fails, with
// Diag::limitation set, when the graph cannot fit: the message names the
// layer, the limit it breaks and by how much, or the op no core runs.
Expected<CoreMap> map_to_cores(const ir::Graph& graph, const HardwareSpec& spec, std::span<const double> activity);

// The cost model of a neuromorphic spec: joules per time step of one node,
// from its types alone (extraction prices e-nodes so), with synapses
// counted dense and OpDesc::input_activity as the input's activity.
std::unique_ptr<CostModel> make_neuromorphic_model(HardwareSpec spec);

}  // namespace refinery::targets
