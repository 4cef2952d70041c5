// `refinery batch`: one `refinery optimize` child process per model and
// target, a journal for --resume, --shard I/N for job arrays, a progress
// display and a summary (docs/batch.md). The child is the same command a
// user would run, so a batch and single runs agree.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "batch/pool.h"
#include "batch/shard.h"
#include "batch/summary.h"
#include "ir/diag.h"
#include "ir/progress.h"

namespace refinery::batch {

struct BatchOptions {
  std::vector<std::string> inputs;  // model files, folders, manifests
  std::filesystem::path out_dir;
  std::vector<std::string> targets;
  // Children at once (0: the number of cores), --timeout, --memory-limit.
  PoolOptions pool{.jobs = 0};
  // Passed to each `refinery optimize` when set.
  std::optional<double> time_limit_s;
  std::optional<std::size_t> node_limit;
  std::optional<double> min_gain;
  std::string cost_model;  // optimize's --cost-model ("learned", "analytic" or a file); empty: the target's own
  std::string extractor;   // optimize's --extractor ("greedy" or "ilp"); empty: optimize's default
  // Each child also writes its saturated e-graph (optimize --egraph) beside
  // its output as NAME.egraph.json: bench/extract's input.
  bool egraphs = false;
  bool portable = false;  // optimize's --portable: standard ONNX ops only
  // optimize's --rules (absolute paths, each after its own flag); empty: the library.
  std::vector<std::filesystem::path> rules;
  // `refinery rules verify --json` output: the proof verdicts the model pages show.
  std::filesystem::path rules_report;
  bool resume = false;  // skip the jobs the journal lists
  Shard shard;
  std::filesystem::path executable;  // the refinery the children run; empty: this process's (/proc/self/exe)
  // Jobs done of those to run now, failures so far, and for each finished
  // job an event line ("[3/10] cpu/m.onnx: written (4.2 s)"), notable when
  // it failed. Unset: silent.
  ProgressFn progress;
};

struct BatchResult {
  std::size_t planned = 0;  // jobs in this shard
  std::size_t resumed = 0;  // of which the journal already had
  Summary summary;          // every job of the shard's journal, resumed ones included
};

// Bad invocations (no inputs, an unreadable journal) are a Diag; failed jobs
// are not (they are in the summary).
Expected<BatchResult> run_batch(const BatchOptions& options);

}  // namespace refinery::batch
