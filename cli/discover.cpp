// refinery rules discover: find, prove and minimise new rewrite rules over a
// small op vocabulary (discover/; docs/discovery.md).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "cli/commands.h"
#include "discover/discover.h"
#include "ir/io.h"
#include "rules/rules.h"

namespace refinery::cli {
namespace {

struct DiscoverFlags {
  std::vector<std::string> ops, shapes, values, against;
  std::vector<float> constants;
  bool against_library = false;
  std::string output;
  bool quiet = false;
  discover::DiscoverOptions options;
};

Expected<discover::DiscoverOptions> options_of(const DiscoverFlags& f) {
  discover::DiscoverOptions o = f.options;
  auto ops = discover::parse_ops(f.ops);
  if (!ops) return std::unexpected(ops.error());
  o.ops = std::move(*ops);
  if (!f.shapes.empty()) {
    o.shapes.clear();
    for (const std::string& s : f.shapes) {
      auto shape = discover::parse_shape(s);
      if (!shape) return std::unexpected(shape.error());
      o.shapes.push_back(std::move(*shape));
    }
  }
  if (!f.values.empty()) {
    o.ranges.clear();
    for (const std::string& v : f.values) {
      auto r = discover::parse_value_range(v);
      if (!r) return std::unexpected(r.error());
      o.ranges.push_back(*r);
    }
  }
  o.constants = f.constants;
  std::vector<std::filesystem::path> files(f.against.begin(), f.against.end());
  if (f.against_library) {
    auto dir = rules::library_dir();
    if (!dir) return std::unexpected(dir.error());
    std::vector<std::filesystem::path> lib;
    for (const auto& e : std::filesystem::directory_iterator(*dir))
      if (e.path().extension() == ".rules") lib.push_back(e.path());
    std::sort(lib.begin(), lib.end());
    files.insert(files.end(), lib.begin(), lib.end());
  }
  if (!files.empty()) {
    auto set = rules::load_rules(files);
    if (!set) return std::unexpected(set.error());
    o.against = std::move(*set);
  }
  return o;
}

}  // namespace

Command add_rules_discover(CLI::App& rules) {
  auto f = std::make_shared<DiscoverFlags>();
  f->constants = f->options.constants;
  auto* sub = rules.add_subcommand("discover", "Find new rewrite rules: enumerate, fingerprint, prove, minimise");
  sub->add_option("--ops", f->ops, "The vocabulary: op names, or (OP :ATTR VALUE ...) with attributes fixed")
      ->delimiter(',')
      ->required();
  sub->add_option("--max-size", f->options.max_size, "Ops per term")->capture_default_str();
  sub->add_option("--vars", f->options.variables, "Tensor variables ?a ?b ...")->capture_default_str();
  sub->add_option("--constants", f->constants, "Scalar constants among the leaves")
      ->delimiter(',')
      ->default_str("0,1,-1,2");
  sub->add_option("--shapes", f->shapes,
                  "Variable shapes: the first types the e-graph (static or symbolic, e.g. NxM); the static ones of "
                  "its rank are where terms are evaluated")
      ->delimiter(',')
      ->default_str("2x3,3x4");
  sub->add_option("--values", f->values, "Ranges of the fingerprint's random inputs: mixed, positive, negative, "
                                         "integers, large")
      ->delimiter(',')
      ->default_str("all five");
  sub->add_option("--draws", f->options.draws, "Random draws per shape and range")->capture_default_str();
  sub->add_option("--seed", f->options.seed, "Seed of the random inputs")->capture_default_str();
  sub->add_option("--time-limit", f->options.time_limit_s, "Seconds; past it no new layer or proof starts")
      ->capture_default_str();
  sub->add_option("--proof-timeout-ms", f->options.verify.timeout_ms,
                  "Z3 limit per query over the reals, ms of CPU time")
      ->capture_default_str();
  sub->add_option("--against", f->against, "Rule files already known: what they derive is not new");
  sub->add_flag("--against-library", f->against_library, "Also the rule library (rules/lib/*.rules)");
  sub->add_option("-o,--output", f->output, "Write the kept rules here (default: print them)");
  sub->add_flag("-q,--quiet", f->quiet, "Print only the summary line");
  sub->footer(
      "Example: refinery rules discover --ops add,mul,neg --max-size 2 -o found.rules\n"
      "Every rule written is proved (prove/); refuted candidates are listed with their counterexamples.");
  return Command{sub, [f]() -> int {
                   f->options.verify.fp_timeout_ms = f->options.verify.timeout_ms;
                   auto options = options_of(*f);
                   if (!options) return report(options.error());
                   if (!f->quiet)
                     options->progress = [](const std::string& line) { fmt::print(stderr, "discover: {}\n", line); };
                   auto result = discover::discover(*options);
                   if (!result) return report(result.error());
                   std::string table = result->table();
                   if (f->quiet) table = table.substr(table.rfind('\n', table.size() - 2) + 1);
                   fmt::print("{}", table);
                   if (!f->quiet)
                     for (const discover::Candidate& c : result->rejected)
                       fmt::print("not kept ({}): {}\n  {}\n", prove::verdict_name(c.verdict), c.text(),
                                  c.counterexample.empty() ? c.message : c.counterexample);
                   std::string text = result->rules_text(command_line());
                   if (f->output.empty()) {
                     fmt::print("{}", text);
                     return 0;
                   }
                   if (auto ok = ir::write_files_atomic({{f->output, text}}); !ok) return report(ok.error());
                   return 0;
                 }};
}

}  // namespace refinery::cli
