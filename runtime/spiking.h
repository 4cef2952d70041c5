// Time-stepped simulation of spiking graphs (NIR ops, ir/spiking.h). A run
// steps the graph T times with an explicit dt, a discretisation and a reset
// rule, which are parameters of the run (SimOptions) and named in every
// report. The equations are in docs/spiking.md. Plain C++ in double
// precision, no ATen: these graphs are small and the order of every sum is
// fixed, so an independent simulator (tools/nir_sim.py) can agree bit for bit.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/diag.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace refinery::runtime {

enum class Discretisation { Euler, Exact };  // forward Euler, or exact exponential decay per step
enum class Reset { ToValue, Subtract };      // v := v_reset, or v := v - v_threshold

std::string_view discretisation_name(Discretisation d);  // "euler", "exact"
std::string_view reset_name(Reset r);                    // "zero" (to v_reset), "subtract"

struct SimOptions {
  double dt = 1e-3;  // seconds per step (NIR time constants are in seconds)
  int64_t steps = 100;
  Discretisation discretisation = Discretisation::Euler;
  Reset reset = Reset::ToValue;
};
std::string describe(const SimOptions& o);  // "steps=100 dt=0.001 discretisation=euler reset=zero"

struct LayerTrace {
  std::string name;             // the node's name (its NIR name)
  std::string op;               // IR op name
  int64_t size = 0;             // elements of its output
  bool spiking = false;         // its output is spikes (lif, if_neuron, cuba_lif, threshold)
  int64_t spike_count = 0;      // spikes over the whole run (spiking layers)
  std::vector<uint8_t> spikes;  // steps x size, row-major (spiking layers)
  int64_t nonzero = 0;          // output elements != 0 over the whole run (every layer): its activity
};

struct SimResult {
  SimOptions options;
  std::vector<ir::Tensor> outputs;  // per graph output: f64 [steps, shape...]
  std::vector<LayerTrace> layers;   // per NIR op node, in graph order
};

// Runs the graph for options.steps steps. `inputs` holds one tensor per graph
// input, shaped [steps, input shape...] (any numeric dtype): the input's value
// at each step (spikes as 0/1, or currents). Fails, naming the node, on an op
// it cannot step or a parameter that does not fit its population.
Expected<SimResult> simulate(const ir::Graph& graph, const std::vector<ir::Tensor>& inputs, const SimOptions& options);

// Seeded random spike trains for every graph input: each element fires with
// probability `rate` at each step (values 0 or 1, f64 [steps, shape...]).
std::vector<ir::Tensor> random_spike_inputs(const ir::Graph& graph, int64_t steps, double rate, uint64_t seed);

}  // namespace refinery::runtime
