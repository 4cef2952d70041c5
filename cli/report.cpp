// refinery report merge OUT_DIR... [-o SUMMARY]: joins the journals of batch
// shards (or of several output folders) into one summary (batch/summary.h)
// and draws its pages. refinery report html REPORT.json -o PAGE.html: a saved
// model report, or a batch summary, as HTML (report/, docs/report.md).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "batch/pages.h"
#include "batch/summary.h"
#include "cli/commands.h"
#include "ir/io.h"
#include "report/model_page.h"

namespace refinery::cli {
namespace {

namespace fs = std::filesystem;

struct ReportArgs {
  std::vector<fs::path> out_dirs;
  fs::path output, input, rules_report, measured;
};

int merge(const ReportArgs& a) {
  auto summary = batch::merge_journals(a.out_dirs);
  if (!summary) return report(summary.error());
  fs::path out = a.output.empty() ? a.out_dirs.front() / "summary.json" : a.output;
  std::string text = batch::to_json(*summary);
  if (auto ok = ir::write_files_atomic({{out, text}}); !ok) return report(ok.error());
  fs::path index = out.parent_path() / "index.html";
  auto pages = batch::write_pages(*summary, {.index = index, .rules_report = a.rules_report, .measured = a.measured});
  if (!pages) return report(pages.error());
  fmt::print("refinery report merge: {} jobs, {} failed; wrote {} and {}\n", summary->jobs.size(), summary->failed(),
             out.string(), index.string());
  return summary->failed() ? 1 : 0;
}

int html(const ReportArgs& a) {
  auto text = ir::read_file(a.input);
  if (!text) return report(text.error());
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_object() && j.contains("refinery_batch_summary")) {
    auto summary = batch::load_summary(a.input);
    if (!summary) return report(summary.error());
    auto pages =
        batch::write_pages(*summary, {.index = a.output, .rules_report = a.rules_report, .measured = a.measured});
    if (!pages) return report(pages.error());
    fmt::print("refinery report html: wrote {} and {} model pages\n", a.output.string(), *pages - 1);
    return 0;
  }
  if (!a.measured.empty()) return report(Diag{a.input.string(), {}, "--measured is for a batch summary"});
  auto r = report::parse_report(*text, a.input.string());
  if (!r) return report(r.error());
  std::optional<report::RuleVerdicts> verdicts;
  if (!a.rules_report.empty()) {
    auto v = report::load_rule_verdicts(a.rules_report);
    if (!v) return report(v.error());
    verdicts = std::move(*v);
  }
  auto page = report::model_page(&*r, {.verdicts = verdicts ? &*verdicts : nullptr});
  if (!page) return report(Diag{a.input.string(), {}, page.error().message});
  if (auto ok = ir::write_files_atomic({{a.output, *page}}); !ok) return report(ok.error());
  fmt::print("refinery report html: wrote {}\n", a.output.string());
  return 0;
}

}  // namespace

Command add_report(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  auto action = std::make_shared<std::function<int()>>();
  CLI::App* sub = app.add_subcommand("report", "Batch summaries and HTML reports");
  sub->require_subcommand(1);
  sub->footer(
      "Example:\n  refinery report merge out/   (joins the journals of the batch shards in out/)\n"
      "  refinery report html r.json -o r.html   (a saved report as a page)");
  CLI::App* m = sub->add_subcommand("merge", "Join the journals of batch shards into one summary, with its pages");
  m->add_option("out_dirs", args->out_dirs, "Batch output folders")->required();
  m->add_option("-o,--output", args->output,
                "Summary file (default: FIRST_OUT_DIR/summary.json); index.html is written beside it");
  m->add_option("--rules-report", args->rules_report, "Proof verdicts: a `refinery rules verify --json` file");
  m->add_option("--measured", args->measured, "Measured speedups: a bench/ort/bench.mjs --json file");
  m->footer(
      "Example:\n  refinery report merge out/   (shards that shared out/)\n"
      "Exit: 0 every job written, 1 some failed, 2 bad input.");
  m->callback([args, action] { *action = [args] { return merge(*args); }; });
  CLI::App* h = sub->add_subcommand("html", "Draw a saved model report, or a batch summary, as a static HTML page");
  h->add_option("input", args->input, "A model report (optimize --report) or a batch summary (summary.json)")
      ->required();
  h->add_option("-o,--output", args->output, "The page (a summary: the batch page; model pages go beside their logs)")
      ->required();
  h->add_option("--rules-report", args->rules_report, "Proof verdicts: a `refinery rules verify --json` file");
  h->add_option("--measured", args->measured, "A summary's measured speedups: a bench/ort/bench.mjs --json file");
  h->footer(
      "Example:\n  refinery report html /tmp/r.json -o /tmp/r.html --rules-report verify.json\n"
      "Exit: 0 written, 2 bad input.");
  h->callback([args, action] { *action = [args] { return html(*args); }; });
  return {sub, [action] { return (*action)(); }};
}

}  // namespace refinery::cli
