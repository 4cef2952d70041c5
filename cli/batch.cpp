// refinery batch INPUTS... -o OUT_DIR --target T[,T...]: `refinery optimize`
// over many models, each in its own child process (batch/batch.h). Flags
// bind to batch::BatchOptions; this file parses and prints.
#include <fmt/format.h>

#include "batch/batch.h"
#include "batch/pages.h"
#include "cli/commands.h"
#include "runtime/interpreter.h"
#include "targets/cost_model.h"

namespace refinery::cli {
namespace {

struct BatchArgs {
  batch::BatchOptions options;
  std::string shard;
  std::string json;  // the summary again: "-" for stdout
  ProgressFlags progress;
};

int run(BatchArgs& a) {
  batch::BatchOptions& o = a.options;
  if (!a.shard.empty()) {
    auto shard = batch::parse_shard(a.shard);
    if (!shard) return report(shard.error());
    o.shard = *shard;
  }
  // A target no child could load is a bad invocation, found before any job runs.
  for (const std::string& t : o.targets)
    if (auto target = targets::load_target(t, o.cost_model); !target) return report(target.error());
  // Children that run this executable are forks that call main_entry: no
  // start of the executable each (batch/pool.h). The interpreter module is
  // loaded here, once, so that no child loads libtorch again.
  if (o.executable.empty()) {
    o.pool.in_process = main_entry;
    if (auto loaded = runtime::load(); !loaded) return report(loaded.error());
  }
  // The pool's waits move the live line's clock: no second thread, so the
  // children stay forks on a terminal too.
  ProgressDisplay display("batch", a.progress.effective(), stderr, ProgressClock::Ticks);
  o.progress = display.callback();
  o.pool.on_wait = [&display] { display.tick(); };
  auto result = batch::run_batch(o);
  display.finish();
  if (!result) {
    fmt::print(stderr, "refinery: error: {}\n", result.error().str());
    return kExitBadInput;
  }
  const batch::Summary& s = result->summary;
  if (!a.json.empty())
    if (int code = write_json(a.json, batch::to_json(s))) return code;
  if (a.json == "-") return s.failed() ? 1 : 0;
  std::vector<std::string> parts;
  for (const auto& [status, n] : s.totals())
    if (status != "jobs") parts.push_back(fmt::format("{} {}", n, status));
  fmt::print("refinery batch: {} jobs{}{}: {}; summary in {}, pages from {}\n", result->planned,
             o.shard.whole() ? "" : fmt::format(" (shard {}/{})", o.shard.index, o.shard.count),
             result->resumed ? fmt::format(", {} resumed from the journal", result->resumed) : "",
             fmt::join(parts, ", "), (o.out_dir / ("summary" + o.shard.suffix() + ".json")).string(),
             batch::index_path(o.out_dir, o.shard).string());
  return s.failed() ? 1 : 0;
}

}  // namespace

Command add_batch(CLI::App& app) {
  auto args = std::make_shared<BatchArgs>();
  batch::BatchOptions& o = args->options;
  CLI::App* sub = app.add_subcommand("batch", "Optimize many models, each in its own process, with a journal");
  sub->add_option("inputs", o.inputs, "Model files, folders (searched for .onnx and .nir), manifests (a path a line)")
      ->required();
  sub->add_option("-o,--output", o.out_dir, "Output folder: <target>/<model> and its .report.json and .log")
      ->required();
  // One value a flag (split at commas): an input after `--target T` is an
  // input, not a second target.
  sub->add_option("--target", o.targets, std::string("Targets, comma-separated: ") + kTargetHelp)
      ->required()
      ->delimiter(',')
      ->allow_extra_args(false);
  sub->add_option("--jobs", o.pool.jobs, "Models at once (0: the number of cores)")->capture_default_str();
  sub->add_option("--time-limit", o.time_limit_s, "Per model: optimize's --time-limit (default: optimize's)");
  sub->add_option("--node-limit", o.node_limit, "Per model: optimize's --node-limit (default: optimize's)");
  sub->add_option("--min-gain", o.min_gain, "Per model: optimize's --min-gain (default: optimize's)")
      ->check(CLI::Range(0.0, 1.0));
  sub->add_option("--cost-model", o.cost_model, std::string("Per model: optimize's --cost-model, ") + kCostModelHelp);
  sub->add_option("--extractor", o.extractor, "Per model: optimize's --extractor, greedy or ilp (default: optimize's)")
      ->check(CLI::IsMember(extractor_kinds()));
  sub->add_flag("--portable", o.portable, "Per model: optimize's --portable (standard ONNX ops only)");
  sub->add_option("--rules", o.rules, "Per model: optimize's --rules, rule files (default: the library)")
      ->check(CLI::ExistingFile);
  sub->add_option("--timeout", o.pool.timeout_s, "Per model: seconds before SIGTERM (then SIGKILL); 0: none")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--memory-limit", o.pool.memory_bytes, "Per model: address-space limit (e.g. 4G); 0: none")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  sub->add_flag("--egraphs", o.egraphs,
                "Each model's saturated e-graph too, as <target>/<model>.egraph.json (optimize --egraph)");
  sub->add_option("--rules-report", o.rules_report,
                  "The model pages' proof verdicts: a `refinery rules verify --json` file (default: none shown)");
  sub->add_flag("--resume", o.resume, "Run only the jobs the journal in the output folder does not list");
  sub->add_option("--shard", args->shard, "Run slice I of N (I/N, 0 <= I < N) of the jobs");
  sub->add_option("--json", args->json, "Write the summary here too (- for stdout, instead of the closing line)");
  add_progress_flags(sub, args->progress);
  sub->add_option("--exe", o.executable, "The refinery executable the children run (default: this one)")
      ->group("");  // for wrappers and tests
  sub->footer(
      "Example:\n  refinery batch models/ -o out/ --target cpu,gpu --timeout 600 --memory-limit 8G\n"
      "Exit: 0 every job written, 1 some failed (validation, bad input, crash, timeout), 2 bad invocation.");
  return {sub, [args] { return run(*args); }};
}

}  // namespace refinery::cli
