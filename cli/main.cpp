// refinery: the command-line driver. Sub-commands parse flags, call the
// libraries and print; they hold no logic of their own.
#include <fmt/format.h>

#include <charconv>

#include "cli/commands.h"
#include "ir/diag.h"
#include "ir/io.h"
#include "report/command.h"

namespace refinery::cli {

namespace {
std::string the_command_line;  // set once, in main, before any command runs
}  // namespace

const std::string& command_line() { return the_command_line; }

int report(const Diag& diag) {
  if (diag.limitation) {
    fmt::print(stderr, "refinery: error: {} (a limitation of Refinery, not a fault of the model)\n", diag.str());
    return kExitLimitation;
  }
  fmt::print(stderr, "refinery: error: {}\n", diag.str());
  return kExitBadInput;
}

int report(Diag diag, std::string file) {
  diag.file = std::move(file);
  return report(diag);
}

void add_progress_flags(CLI::App* sub, ProgressFlags& flags, const std::string& quiet_help) {
  sub->add_option_no_stream("--progress", flags.mode,
                            "Progress on stderr: auto (a live line on a terminal, else a plain line per phase and at "
                            "most every 10 s), always (the live line), plain, never")
      ->transform(CLI::CheckedTransformer(std::map<std::string, ProgressMode>{{"auto", ProgressMode::Auto},
                                                                              {"always", ProgressMode::Live},
                                                                              {"plain", ProgressMode::Plain},
                                                                              {"never", ProgressMode::Never}}))
      ->default_str("auto");
  sub->add_flag("--quiet", flags.quiet, quiet_help);
}

int write_json(const std::string& dest, const std::string& text) {
  if (dest == "-") {
    fmt::print("{}{}", text, text.ends_with('\n') ? "" : "\n");
    return 0;
  }
  if (auto ok = ir::write_files_atomic({{dest, text}}); !ok) return report(ok.error());
  return 0;
}

Expected<std::map<std::string, int64_t>> parse_dims(const std::vector<std::string>& flags) {
  std::map<std::string, int64_t> dims;
  for (const std::string& d : flags) {
    auto eq = d.find('=');
    int64_t v = 0;
    const char* end = d.data() + d.size();
    auto [p, ec] = eq == std::string::npos ? std::from_chars_result{d.data(), std::errc::invalid_argument}
                                           : std::from_chars(d.data() + eq + 1, end, v);
    if (eq == std::string::npos || eq == 0 || ec != std::errc() || p != end || v < 1)
      return fail(fmt::format("--dim expects NAME=VALUE with VALUE a positive integer, got '{}'", d));
    dims[d.substr(0, eq)] = v;
  }
  return dims;
}

int main_entry(int argc, char** argv) {
  the_command_line = refinery::report::shell_command({argv, argv + argc});
  CLI::App app{"refinery: an equality-saturation superoptimizer for neural-network graphs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "refinery 0.1");
  app.footer("Run 'refinery SUBCOMMAND --help' for a sub-command's flags and an example.");
  std::vector<Command> commands{add_inspect(app),  add_convert(app), add_run(app),   add_rules(app),
                                add_optimize(app), add_batch(app),   add_report(app),
                                add_cost(app),     add_measure(app), add_calibrate(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : kExitBadInput;
  }
  // Every failure the libraries foresee is a Diag; this is the last guard,
  // so that nothing ends in an abort.
  try {
    for (auto& c : commands)
      if (c.app->parsed()) return c.action();
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "refinery: error: out of memory\n");
    return kExitBadInput;
  } catch (const std::exception& e) {
    fmt::print(stderr, "refinery: internal error: {}\n", e.what());
    return kExitInternal;
  }
  return kExitBadInput;
}

}  // namespace refinery::cli

int main(int argc, char** argv) { return refinery::cli::main_entry(argc, argv); }
