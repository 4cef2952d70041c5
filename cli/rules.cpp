// refinery rules: list the rule library (rules/), or verify rules with Z3
// and the interpreter (prove/; docs/rules.md).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "prove/verify.h"
#include "rules/rules.h"

namespace refinery::cli {
namespace {

struct RulesFlags {
  std::vector<std::string> files;
  std::vector<std::string> families, names;
  std::string json;
  prove::VerifyOptions verify;
  ProgressFlags progress;
};

Expected<rules::RuleSet> load(const RulesFlags& f) {
  if (f.files.empty()) return rules::load_library();
  std::vector<std::filesystem::path> paths(f.files.begin(), f.files.end());
  return rules::load_rules(paths);
}

}  // namespace

Command add_rules(CLI::App& app) {
  auto flags = std::make_shared<RulesFlags>();
  auto* cmd = app.add_subcommand("rules", "List, verify or discover rewrite rules");
  cmd->require_subcommand(1);
  auto* list = cmd->add_subcommand("list", "List the rules of the library (or of FILES)");
  list->add_option("files", flags->files, ".rules files (default: the library)");
  list->add_option("--family", flags->families, "Only this family (repeatable)");
  list->add_option("--json", flags->json, "Write the list as JSON here instead (- for stdout)");
  list->footer("Example: refinery rules list --family layout\n         refinery rules list --json -");
  auto* verify = cmd->add_subcommand("verify", "Prove each rule with Z3 and cross-check it numerically");
  verify->add_option("files", flags->files, ".rules files (default: the library)");
  verify->add_option("--family", flags->families, "Only this family (repeatable)");
  verify->add_option("--rule", flags->names, "Only this rule (repeatable)");
  verify->add_option("--json", flags->json, "Write the JSON report here (- for stdout, instead of the table)");
  verify->add_option("--instances", flags->verify.instances, "Concrete shapes per rule")->capture_default_str();
  verify
      ->add_option("--empty-instances", flags->verify.empty_instances,
                   "Shapes with empty dims per rule, after the others")
      ->capture_default_str();
  verify->add_option("--timeout-ms", flags->verify.timeout_ms, "Z3 limit per query over the reals, ms of CPU time")
      ->capture_default_str();
  verify->add_option("--threads", flags->verify.threads, "Rules verified in parallel")->capture_default_str();
  verify->add_flag("--no-fp32{false}", flags->verify.fp32, "Skip the binary32 exactness check");
  verify->add_flag("--no-numeric{false}", flags->verify.numeric, "Skip the interpreter cross-check");
  add_progress_flags(verify, flags->progress, "No progress, and print only the summary line");
  verify->footer(
      "Example: refinery rules verify --family elementwise --json report.json\n"
      "Exit code 1 when a rule is not proved or the interpreter disagrees with a proof.");
  Command discover = add_rules_discover(*cmd);
  return Command{cmd, [flags, list, verify, discover]() -> int {
                   if (discover.app->parsed()) return discover.action();
                   auto set = load(*flags);
                   if (!set) return report(set.error());
                   rules::RuleFilter filter{flags->families, flags->names};
                   auto selected = set->select(filter);
                   if (list->parsed() && !flags->json.empty()) {
                     nlohmann::json out = nlohmann::json::array();
                     for (const rules::Rule* r : selected)
                       out.push_back({{"name", r->name},
                                      {"family", r->family},
                                      {"kind", rules::to_string(r->kind)},
                                      {"file", r->file},
                                      {"line", r->line},
                                      {"text", r->text}});
                     return write_json(flags->json, out.dump(2) + "\n");
                   }
                   if (list->parsed()) {
                     for (const rules::Rule* r : selected)
                       fmt::print("{:<34} {:<13} {:<8} {}:{}  {}\n", r->name, r->family, rules::to_string(r->kind),
                                  r->file, r->line, r->text);
                     fmt::print("{} rules\n", selected.size());
                     return 0;
                   }
                   (void)verify;
                   ProgressDisplay display("verify", flags->progress.effective());
                   flags->verify.progress = display.callback();
                   auto rep = prove::verify_rules(selected, flags->verify);
                   display.finish();
                   std::string table = rep.table();
                   if (flags->progress.quiet) table = table.substr(table.rfind('\n', table.size() - 2) + 1);
                   if (flags->json != "-") fmt::print("{}", table);
                   if (!flags->json.empty())
                     if (int code = write_json(flags->json, rep.json())) return code;
                   bool ok = rep.count(prove::Verdict::ProvedExact) + rep.count(prove::Verdict::ProvedReals) ==
                                 static_cast<int>(rep.rules.size()) &&
                             rep.numeric_disagreements() == 0;
                   return ok ? 0 : 1;
                 }};
}

}  // namespace refinery::cli
