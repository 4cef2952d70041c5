// refinery: the command-line driver. Sub-commands parse flags, call the
// libraries and print; they hold no logic of their own.
#include <fmt/format.h>

#include "cli/commands.h"
#include "ir/diag.h"

namespace refinery::cli {

int report(const Diag& diag) {
  fmt::print(stderr, "refinery: error: {}\n", diag.str());
  return kExitBadInput;
}

}  // namespace refinery::cli

int main(int argc, char** argv) {
  using namespace refinery::cli;
  CLI::App app{"refinery: an equality-saturation superoptimizer for neural-network graphs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "refinery 0.1");
  app.footer("Run 'refinery SUBCOMMAND --help' for a sub-command's flags and an example.");
  std::vector<Command> commands{add_inspect(app), add_convert(app), add_run(app)};
#if REFINERY_HAVE_RULES_CLI
  commands.push_back(add_rules(app));
#endif
#if REFINERY_HAVE_OPTIMIZE
  commands.push_back(add_optimize(app));
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : kExitBadInput;
  }
  for (auto& c : commands)
    if (c.app->parsed()) return c.action();
  return kExitBadInput;
}
