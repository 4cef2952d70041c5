// Rule verification (ARCHITECTURE.md, decision 7): each rule is proved with
// Z3 at several small concrete shapes (broadcasting ones among them;
// elements symbolic reals, each side's definedness modelled), classified in
// IEEE binary32 (exact, rounds differently, or refuted on special values),
// and cross-checked numerically through the interpreter on random tensors.
// Every counterexample is replayed in the interpreter, and one that does not
// replay is never a refutation. docs/rules.md
// describes the method and the report. The prover is its own library:
// rules/ (the DSL and its compilation) has no Z3, and the optimizer never
// links this one.
#pragma once

#include <string>
#include <vector>

#include "ir/progress.h"
#include "rules/rules.h"

namespace refinery::prove {

struct VerifyOptions {
  int instances = 3;            // concrete shapes per rule
  int empty_instances = 2;      // and shapes with empty dims (docs/rules.md), after them
  unsigned timeout_ms = 10000;  // per Z3 query over the reals
  unsigned fp_timeout_ms =
      8000;             // the binary32 query (docs/rules.md: bit-exact laws and random inputs settle most first)
  bool fp32 = true;     // classify proved rules in binary32 (off: ProvedReals, binary32 unchecked)
  bool numeric = true;  // the interpreter cross-check
  int threads = 2;
  // Hears of each rule as it is settled: rules done of all, how many
  // refuted so far. Called from the worker threads. Unset: silent.
  ProgressFn progress;
};

// docs/rules.md, Verification: what each verdict claims.
enum class Verdict {
  ProvedExact,  // "proved (binary32-exact)": the same binary32 value on every input, specials included
  ProvedReals,  // "proved (reals; rounds differently in binary32)": equal over the reals where the
                // left side is defined; in binary32 only rounding differs (never NaN or inf
                // produced or lost, unless by overflow or underflow)
  ProvedIf,     // "proved only if CONDITION": equal over the reals where both sides are defined,
                // but the right side is undefined somewhere the left side is defined
  Refuted,      // a counterexample, over the reals or in binary32 (special values)
  Unknown,
  Error
};
std::string_view verdict_name(Verdict v);
// Whether the rule may be used: proved, exactly or up to binary32 rounding.
bool is_proved(Verdict v);

struct RuleReport {
  std::string name, family, file;
  int line = 0;
  Verdict verdict = Verdict::Error;
  std::string domain;               // Refuted, Unknown: "reals" or "binary32"
  std::string condition;            // ProvedIf: what the right side needs ("?y != 0")
  std::vector<std::string> shapes;  // the instances tried
  std::string counterexample;       // Refuted, ProvedIf: the inputs and both sides' values
  std::string rounding;             // ProvedReals: an input where binary32 rounds differently, when one was found
  std::string binary32;             // after a proof over the reals: "exact", "rounds", "special", "unknown"
  std::string numeric;              // "agree", "disagree: ...", "skipped: ..."
  std::string message;              // errors and unknown reasons
  double seconds = 0;
};

struct VerifyReport {
  std::vector<RuleReport> rules;
  double seconds = 0;
  int count(Verdict v) const;
  int refuted_in(std::string_view domain) const;
  int numeric_disagreements() const;
  std::string json() const;
  std::string table() const;
};

RuleReport verify_rule(const rules::Rule& rule, const VerifyOptions& options);
VerifyReport verify_rules(const std::vector<const rules::Rule*>& rules, const VerifyOptions& options);

}  // namespace refinery::prove
