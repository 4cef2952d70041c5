// The rewrite rules: `.rules` text files (docs/rules.md) loaded into a
// RuleSet, checked when they load (unbound variables, arity, attribute names
// and kinds, types), and compiled to the generic engine's rewrites over the
// tensor language. Rules are data (ARCHITECTURE.md, decision 6).
//
// The optimizer's use:
//
//   auto lib = rules::load_library();                       // Expected<RuleSet>
//   auto rws = lib->rewrites();                             // every rule
//   auto some = lib->rewrites({.families = {"layout"}});    // one family
//   egraph::Runner<TensorNode, TensorAnalysis> runner(limits, std::move(seeded.egraph));
//   runner.run(rws);
//
// A rewrite needs no context at construction: it interns the attributes and
// the constants of its right-hand side through the e-graph it is applied to
// (`egraph.analysis().context()`). A right-hand side that does not type-check
// (TensorAnalysis::infer) is not added.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "egraph/rewrite.h"
#include "egraph/tensor/analysis.h"
#include "egraph/tensor/tensor_node.h"
#include "ir/diag.h"

namespace refinery::rules {

using TensorRewrite = egraph::Rewrite<egraph::tensor::TensorNode, egraph::tensor::TensorAnalysis>;

struct RuleBody;  // the checked patterns, conditions and applier (rules/rule_ast.h)

// What a rule does to an e-graph, which decides when a saturation schedule
// runs it (optimize/saturate.h). Computed from the rule's form, or stated in
// the DSL with `:ruleset NAME` (docs/rules.md):
//   merge:    two or more left-hand roots (a multi-pattern);
//   permute:  the same operators on both sides, reordered (AC, transposes);
//   explore:  more operators on the right, and only elementwise arithmetic
//             gone from the left (distributing, sub as add neg);
//   simplify: everything else (identities, cancellations, fusions).
enum class RuleKind { Simplify, Explore, Permute, Merge };
std::string_view to_string(RuleKind kind);
std::optional<RuleKind> rule_kind_from_name(std::string_view name);

struct Rule {
  std::string name;    // unique in a RuleSet; the reverse of `a <=> b` is "NAME-rev"
  std::string family;  // the file's stem: "elementwise" for rules/lib/elementwise.rules
  std::string file;    // as given to load_rules
  int line = 0;        // of the rule's opening parenthesis
  bool multi = false;  // two or more left-hand roots
  RuleKind kind = RuleKind::Simplify;
  std::string text;  // "LHS => RHS" as written (with :when conditions)
  std::shared_ptr<const RuleBody> body;
};

// Which rules `rewrites` compiles; empty lists mean "all".
struct RuleFilter {
  std::vector<std::string> families;
  std::vector<std::string> names;
};

class RuleSet {
 public:
  const std::vector<Rule>& rules() const { return rules_; }
  const Rule* find(std::string_view name) const;
  std::vector<std::string> families() const;  // sorted, unique
  std::vector<const Rule*> select(const RuleFilter& filter) const;

  // One engine rewrite per selected rule, in file order.
  std::vector<TensorRewrite> rewrites(const RuleFilter& filter = {}) const;

  void add(Rule rule) { rules_.push_back(std::move(rule)); }

 private:
  std::vector<Rule> rules_;
};

// Loads and checks rule files. The first error found is returned as
// "file:line:col: message". Rule names must be unique across the files.
Expected<RuleSet> load_rules(const std::vector<std::filesystem::path>& files);
// Loads and checks rules from text (`file` names it in messages).
Expected<RuleSet> parse_rules(std::string_view text, const std::string& file);

// The library: every *.rules file of library_dir(), in name order. The folder
// is found by ir::data_dir (ir/data_dir.h): $REFINERY_DATA/rules, else an
// installed <prefix>/share/refinery/rules, else the source tree's rules/lib.
Expected<std::filesystem::path> library_dir();
Expected<RuleSet> load_library();

// The ops a rule's right side makes, each once: what the target must be
// able to run for the rule to be used (targets/spec.h, export_domains).
std::vector<ir::Op> ops_made(const Rule& rule);

}  // namespace refinery::rules
