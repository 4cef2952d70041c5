// Rule verification (ARCHITECTURE.md, decision 7): each rule is proved with
// Z3 at several small concrete shapes (elements symbolic reals), classified
// as exact in IEEE binary32 or over the reals only, and cross-checked
// numerically through the interpreter on random tensors. docs/rules.md
// describes the method and the report. The prover is its own library:
// rules/ (the DSL and its compilation) has no Z3, and the optimizer never
// links this one.
#pragma once

#include <string>
#include <vector>

#include "rules/rules.h"

namespace refinery::prove {

struct VerifyOptions {
  int instances = 3;             // concrete shapes per rule
  unsigned timeout_ms = 10000;   // per Z3 query over the reals
  unsigned fp_timeout_ms = 8000;  // the binary32 query (docs/rules.md: bit-exact laws and random inputs settle most first)
  bool fp32 = true;              // classify proved rules as exact in binary32 or not
  bool numeric = true;           // the interpreter cross-check
  int threads = 2;
};

enum class Verdict { Proved, Refuted, Unknown, Error };
std::string_view verdict_name(Verdict v);

struct RuleReport {
  std::string name, family, file;
  int line = 0;
  Verdict verdict = Verdict::Error;
  std::vector<std::string> shapes;   // the instances tried
  std::string counterexample;        // when refuted: the inputs and both sides' values
  std::string fp32;                  // "exact", "reals-only", "unknown" (proved rules), else ""
  std::string numeric;               // "agree", "disagree: ...", "skipped: ..."
  std::string message;               // errors and unknown reasons
  double seconds = 0;
};

struct VerifyReport {
  std::vector<RuleReport> rules;
  double seconds = 0;
  int count(Verdict v) const;
  int exact_fp32() const;
  int numeric_disagreements() const;
  std::string json() const;
  std::string table() const;
};

RuleReport verify_rule(const rules::Rule& rule, const VerifyOptions& options);
VerifyReport verify_rules(const std::vector<const rules::Rule*>& rules, const VerifyOptions& options);

}  // namespace refinery::prove
