// The rule verifier's verdicts for a model page, read from the JSON that
// `refinery rules verify --json FILE` writes (prove/verify.h). The optimizer
// never runs the prover (ARCHITECTURE.md: it never links Z3), so a page shows
// the verdicts of such a file when one is given (--rules-report FILE), and
// says "not verified in this report" for a rule the file does not list.
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "ir/diag.h"

namespace refinery::report {

struct RuleVerdict {
  std::string verdict;    // "proved (binary32-exact)", "refuted", ... (prove::verdict_name)
  std::string condition;  // "proved only if": what the right side needs
  std::string binary32;   // the exactness class after a proof over the reals: exact, rounds, special, unknown
  std::string numeric;    // the interpreter cross-check: "agree", "disagree: ...", "skipped: ..."
  std::vector<std::string> shapes;  // the bounded instances proved
  std::string file;                 // where the rule is, "rules/lib/x.rules:12"
};

struct RuleVerdicts {
  std::filesystem::path source;  // the verify JSON they were read from
  std::map<std::string, RuleVerdict> by_rule;
};

// A file `refinery rules verify --json` wrote; errors name the file.
Expected<RuleVerdicts> load_rule_verdicts(const std::filesystem::path& file);

}  // namespace refinery::report
