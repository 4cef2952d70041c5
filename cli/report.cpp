// refinery report merge OUT_DIR... [-o SUMMARY]: joins the journals of batch
// shards (or of several output folders) into one summary (batch/summary.h).
#include <fmt/format.h>

#include "batch/summary.h"
#include "cli/commands.h"
#include "ir/io.h"

namespace refinery::cli {
namespace {

struct Args {
  std::vector<std::filesystem::path> out_dirs;
  std::filesystem::path output;
};

int merge(const Args& a) {
  auto summary = batch::merge_journals(a.out_dirs);
  if (!summary) return report(summary.error());
  std::filesystem::path out = a.output.empty() ? a.out_dirs.front() / "summary.json" : a.output;
  std::string text = batch::to_json(*summary);
  if (auto ok = ir::write_files_atomic({{out, text}}); !ok) return report(ok.error());
  fmt::print("refinery report merge: {} jobs, {} failed; wrote {}\n", summary->jobs.size(), summary->failed(),
             out.string());
  return summary->failed() ? 1 : 0;
}

}  // namespace

Command add_report(CLI::App& app) {
  auto args = std::make_shared<Args>();
  CLI::App* sub = app.add_subcommand("report", "Batch reports");
  sub->require_subcommand(1);
  sub->footer("Example:\n  refinery report merge out/   (joins the journals of the batch shards in out/)");
  CLI::App* m = sub->add_subcommand("merge", "Join the journals of batch shards into one summary");
  m->add_option("out_dirs", args->out_dirs, "Batch output folders")->required();
  m->add_option("-o,--output", args->output, "Summary file (default: FIRST_OUT_DIR/summary.json)");
  m->footer(
      "Example:\n  refinery report merge out/   (shards that shared out/)\n"
      "Exit: 0 every job written, 1 some failed, 2 bad input.");
  return {sub, [args] { return merge(*args); }};
}

}  // namespace refinery::cli
