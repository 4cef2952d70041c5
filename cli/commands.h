// The refinery sub-commands. Each adds its sub-command and flags to the CLI11
// app and returns the action to run; an action returns the exit code.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cli/progress.h"
#include "ir/diag.h"

namespace refinery::optimize {
enum class ExtractorKind;  // optimize/optimize.h
}

namespace refinery::cli {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> action;
};

Command add_inspect(CLI::App& app);
Command add_convert(CLI::App& app);
Command add_run(CLI::App& app);
Command add_rules(CLI::App& app);     // cli/rules.cpp
Command add_rules_discover(CLI::App& rules);  // cli/discover.cpp: rules discover
Command add_optimize(CLI::App& app);  // cli/optimize.cpp
Command add_batch(CLI::App& app);     // cli/batch.cpp
Command add_report(CLI::App& app);    // cli/report.cpp: report merge
Command add_cost(CLI::App& app);      // cli/cost.cpp
Command add_measure(CLI::App& app);   // cli/cost.cpp
Command add_calibrate(CLI::App& app);  // cli/cost.cpp

// --target and --cost-model as optimize, batch and cost take them
// (targets::load_target, docs/targets.md).
inline constexpr const char* kTargetHelp =
    "cpu (ONNX Runtime on one core, the learned model), cpu-analytic (the same, the analytic model), gpu (h100), "
    "tpu (tpu_v4), h200, tpu_v5e, loihi2, loihi1, spinnaker2 (spiking .nir models), or a spec .json";
inline constexpr const char* kCostModelHelp =
    "cpu targets: 'learned' (the target's learned model: the user's calibrated file, else the shipped one), "
    "'analytic' (as --target cpu-analytic) or a learned model file; default: the target's own";

// --extractor as optimize and batch take it: each kind by its name
// (optimize::to_string). Defined in cli/optimize.cpp.
std::map<std::string, optimize::ExtractorKind> extractor_kinds();

// The process's argv as main received it, as one shell line (a report's
// "command": what reproduces the run).
const std::string& command_line();

// Exit codes: 0 success, 1 a check failed (e.g. validation), 2 bad input, 3 a
// limitation of Refinery on a valid model, or a bug.
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInternal = 3;    // an exception no library turned into a Diag (a bug)
inline constexpr int kExitLimitation = 3;  // a valid model Refinery cannot handle (Diag::limitation)

// The whole command line: what main runs, and what a batch child forked
// from a batch process runs in its place (batch/pool.h, in_process).
int main_entry(int argc, char** argv);

// Prints "refinery: error: <diag>" to stderr and returns kExitBadInput, or
// kExitLimitation for a Diag marked as Refinery's limitation.
int report(const Diag& diag);
// The same for a Diag about `file` (a command's model), its kind kept.
int report(Diag diag, std::string file);

// Adds --progress=auto|always|plain|never and --quiet (no progress) to a
// long-running sub-command, bound to `flags`.
void add_progress_flags(CLI::App* sub, ProgressFlags& flags,
                        const std::string& quiet_help = "No progress (as --progress=never)");

// Writes a --json (or --report) text: "-" to stdout, else to that file,
// atomically. Returns 0, or the exit code of the Diag it printed.
int write_json(const std::string& dest, const std::string& text);

// The --dim flags (NAME=VALUE, VALUE a positive integer) as a map.
Expected<std::map<std::string, int64_t>> parse_dims(const std::vector<std::string>& flags);

}  // namespace refinery::cli
