// The learned CPU cost model (docs/targets.md, "The learned CPU model"):
// gradient-boosted trees (XGBoost, through its C API) that predict the log
// of one ONNX Runtime kernel's latency (single thread, graph optimization
// 'all') from the features below; an op fused into its producer's kernel
// (ort_cpu_fused_epilogue) costs nothing of its own, its kernel being timed
// as its head's. Trained
// on `refinery measure` datasets by `refinery calibrate`.
#pragma once

#include <array>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "targets/cost_model.h"

namespace refinery::targets {

inline constexpr std::size_t kNumFeatures = 30;
using Features = std::array<float, kNumFeatures>;

// The features' names, in order (the dataset's and docs/targets.md's).
const std::array<std::string_view, kNumFeatures>& feature_names();

// The learned model predicts its correction to a baseline: the analytic CPU
// model (targets/models.cpp) of the same spec, pricing the op as its own
// kernel (an epilogue as if not fused), so that the trees need not learn
// how latency scales with work and extrapolate with it to kernels bigger
// than any they saw. The baseline is the last feature (log2 of its us).
std::unique_ptr<CostModel> learned_baseline(const HardwareSpec& spec);
double baseline_ms(const Features& f);

// One result of an op as the learned model sees it, described by the work
// it does rather than its label where a rewrite only relabels that work (a
// 1x1 Conv and its MatMul form alike, a Conv's bias and a Gemm's C left out, an
// elementwise op on [numel]: docs/targets.md, "The cost laws by
// construction"). FLOPs and bytes are ir::op_work's (the one count). `timed_alone` (the feature of that name):
// 1 for an op timed as a micro-model of its own (its NCHWc reorders and
// run around it counted), 0 for an op inside a whole model (ORT's profile
// of it, in_context_times), as the model always predicts.
Features kernel_features(const OpDesc& op, const CostModel& baseline, bool timed_alone = false);
inline constexpr std::size_t kTimedAlone = kNumFeatures - 2;
// How kernel_features describes a kernel (its canonical forms), stored in a
// trained model and checked when it is loaded.
inline constexpr const char* kFeatureForm = "canonical-2";

// One training example: an op's features and the milliseconds it takes
// (for an epilogue: what it adds to its producer's kernel).
struct Sample {
  Features features{};
  double ms = 0;
};

// Deterministic given the samples: fixed seed, one thread, exact trees.
struct TrainOptions {
  int rounds = 300;
  int max_depth = 6;
  double eta = 0.06;
  double subsample = 1.0;
};

// Trains on `samples` and writes the model to `file` (XGBoost's binary
// UBJSON when the name ends in .ubj, else JSON) with the run overhead (ms,
// the fixed cost of one session run, added once per graph) and the kernel
// dispatch (ms, the least a kernel costs inside a run; 0: not measured, the
// spec's op_overhead_s is used) stored in it.
Expected<void> train_cost_model(const std::vector<Sample>& samples, double run_overhead_ms, double kernel_dispatch_ms,
                                const std::filesystem::path& file, const TrainOptions& options = {});

// One timed micro-model of a `refinery measure` dataset (a JSON line).
struct Record {
  std::string id, kind;             // kind: "kernel", "model" (a whole model) or
                                    // "context" (a node of a model, its in-context share)
  std::string file;                 // the micro-model (or model) timed
  std::vector<std::string> models;  // the models its kernel was drawn from
  std::vector<Features> features;   // per node of the kernel, the head first
  std::string head;                 // a kernel with an epilogue: the id of its head alone
  double ms = 0;                    // median, less the run overhead (at least kMinKernelMs);
                                    // for a "context" node its share (in_context_times)
  double median_ms = 0;             // as timed, the run overhead included
  double mad_ms = 0;
};
inline constexpr double kMinKernelMs = 1e-4;
inline constexpr int kDispatchChain = 33;
// `refinery measure`'s MatMul shape sweep (cli/cost.cpp, gemm_sweep_graph):
// the model name of its micro-models and of its whole model, whose nodes in
// context train like any model's; no family held out to score.
inline constexpr std::string_view kSweepModel = "sweep";

struct Dataset {
  std::vector<Record> records;  // the timed ones (errors are left out)
  double run_overhead_ms = 0;   // the median of the overheads timed
  // Per kernel inside a run: a chain of kDispatchChain one-element Adds
  // timed less the overhead (one such Add), over kDispatchChain - 1; 0 when
  // the dataset has no "dispatch" record (measured before it had one).
  double kernel_dispatch_ms = 0;
  std::size_t errors = 0;
};
// Errors name the file and line.
Expected<Dataset> read_dataset(const std::filesystem::path& file);

// Training samples from the kernel and context records that `keep`
// accepts: each single node's time (a kernel with an epilogue is timed as
// its head alone), each context node's share of its model's run.
std::vector<Sample> training_samples(const Dataset& data, const std::function<bool(const Record&)>& keep);

// A trained model, for predictions outside a CostModel (the benchmark).
class Booster {
 public:
  static Expected<std::shared_ptr<Booster>> load(const std::filesystem::path& file);
  ~Booster();
  Booster(const Booster&) = delete;
  Booster& operator=(const Booster&) = delete;
  // Milliseconds per row: the baseline times the learned correction.
  std::vector<double> predict_ms(const std::vector<Features>& rows) const;
  double run_overhead_ms() const { return run_overhead_ms_; }
  double kernel_dispatch_ms() const { return kernel_dispatch_ms_; }  // 0: not stored

 private:
  Booster() = default;
  void* handle_ = nullptr;
  double run_overhead_ms_ = 0;
  double kernel_dispatch_ms_ = 0;
};

// The CPU cost model that prices with a trained Booster (predictions cached
// per feature vector); views are free as in ONNX Runtime.
Expected<std::unique_ptr<CostModel>> make_learned_cpu_model(HardwareSpec spec, const std::filesystem::path& file);

}  // namespace refinery::targets
