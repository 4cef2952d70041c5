// Hardware descriptions as data: targets/specs/*.json hold published figures
// (peak FLOP/s per dtype, memory bandwidth, launch overhead, MXU size and
// tiling; for neuromorphic chips cores, per-core limits and energy per
// event). A spec is loaded and checked here; cost models read it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ir/diag.h"
#include "ir/dtype.h"
#include "ir/op.h"

namespace refinery::targets {

enum class TargetKind { Cpu, Gpu, Tpu, Neuromorphic };
std::string_view to_string(TargetKind kind);

// A neuromorphic chip (Loihi-class): cores of neurons with their synapses
// stored at the destination core (docs/targets.md, "Neuromorphic targets").
struct NeuromorphicSpec {
  int64_t cores = 0;                         // neuron cores per chip
  int64_t neurons_per_core = 0;              // neurons (compartments) per core
  double synaptic_memory_bits_per_core = 0;  // weight storage per core
  int64_t fan_in_per_core = 0;               // distinct input axons (source neurons) per core
  int64_t fan_out_per_core = 0;              // output axons (neuron x destination core) per core
  int weight_bits = 8;                       // a weight is a signed integer of this many bits
  // Joules; 0 where no figure is published (the energy then leaves it out).
  double energy_per_synaptic_op = 0, energy_per_neuron_update = 0;
  // Fields whose figure is from a secondary source or derived, with why
  // (field -> note): the report and docs/targets.md say so.
  std::map<std::string, std::string> secondary;
};

struct HardwareSpec {
  std::string name, description, source;
  TargetKind kind = TargetKind::Cpu;
  std::map<std::string, double> peak_flops;  // by dtype name ("f32", "bf16", "tf32", "i8", ...)
  std::string f32_matmul_uses;               // gpu: matmuls in f32 run on this unit ("tf32")
  double memory_bandwidth = 0;               // bytes/s
  double memory_bytes = 0;
  double kernel_launch_s = 0;  // gpu: per kernel (within a CUDA graph: from the end of one to the next's start)
  double graph_launch_s = 0;   // gpu: once per graph run (the graph's launch), the model's run_overhead
  // gpu: a kernel's time beyond its roofline and launch, by kernel_family
  // ("conv", "matmul", "reduction", "movement"; a family not named: 0).
  std::map<std::string, double, std::less<>> kernel_latency_s;
  // gpu: the share of the peak a family's kernels reach (a family not named: 1).
  std::map<std::string, double, std::less<>> kernel_efficiency;
  double op_overhead_s = 0;    // cpu: per-op dispatch; tpu: per fused op
  double vector_flops = 0;     // tpu: VPU rate for elementwise work
  double cache_bandwidth = 0;  // cpu: last-level cache
  double cache_bytes = 0;
  struct Mxu {
    int rows = 128, cols = 128, count = 1;
  } mxu;
  struct Tiling {
    int sublanes = 8, lanes = 128;
  } tiling;
  struct GemmEfficiency {
    double max = 1.0, half_size = 0;  // efficiency = max * s / (s + half_size), s = cbrt(M*N*K)
  } gemm_efficiency;
  double elementwise_efficiency = 1.0;  // cpu: fraction of peak for elementwise work
  // cpu: the runtime's blocked channel layout (ONNX Runtime's NCHWc: 16
  // floats with AVX-512, 8 with AVX2); convolutions' channel counts are
  // widened to its multiples after extraction (optimize/channel_blocks.h). 0: none.
  int64_t channel_block = 0;
  // The export vocabulary beyond the default ONNX domain: the op domains the
  // target's runtime runs ("com.microsoft": ONNX Runtime's contrib ops).
  // Empty: standard ONNX ops only (docs/targets.md).
  std::vector<std::string> export_domains;

  // Whether a refined graph for this target may contain `op`.
  bool may_emit(ir::Op op) const;

  // cpu: the learned model's file name (refinery calibrate), the target's
  // cost model unless --cost-model says otherwise (targets/cost_model.h):
  // looked up in user_cost_models_dir(), then beside the spec (the model
  // shipped for this machine type). Empty: the analytic model.
  std::string learned_model;
  std::filesystem::path folder;  // the folder the spec was read from
  NeuromorphicSpec neuromorphic;  // kind neuromorphic only

  // Peak FLOP/s for `dtype` (matmul: on the matrix unit). Falls back to f32.
  double peak(ir::DType dtype, bool matmul) const;
};

// Errors name the file and the field.
Expected<HardwareSpec> parse_spec(std::string_view json, const std::string& file = "<spec>");
Expected<HardwareSpec> load_spec(const std::filesystem::path& file);

// The folder of the bundled specs, found by ir::data_dir (ir/data_dir.h):
// $REFINERY_DATA/targets, else an installed <prefix>/share/refinery/targets,
// else the source tree's targets/specs.
Expected<std::filesystem::path> specs_dir();

// Where `refinery calibrate` stores learned models and `--target` looks
// first: $REFINERY_COST_MODELS when set, else $XDG_DATA_HOME/refinery/
// cost_models, else ~/.local/share/refinery/cost_models.
std::filesystem::path user_cost_models_dir();

// A target by name or file: "cpu", "gpu" (= h100), "tpu" (= tpu_v4), any
// spec name in specs_dir() ("h200", "tpu_v5e"), or a path to a .json file.
// "NAME-analytic" (kAnalyticSuffix) names a bundled spec with a learned
// model ("cpu-analytic") priced by its analytic model: the same spec, named
// so, with learned_model empty.
inline constexpr std::string_view kAnalyticSuffix = "-analytic";
Expected<HardwareSpec> find_spec(std::string_view name_or_file);

}  // namespace refinery::targets
