// Rule discovery (docs/discovery.md), Ruler/Enumo style: terms over a small
// vocabulary are enumerated layer by layer in an e-graph, fingerprinted by
// evaluation in the interpreter, and classes with equal fingerprints give
// candidate rules; each candidate that the rules kept so far (and the known
// rules) do not already derive is proved with the library's verifier
// (prove/), and only proved rules are kept. The fingerprint is a filter, never
// evidence: a candidate it suggests wrongly is refuted and reported.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "egraph/runner.h"
#include "ir/attribute.h"
#include "ir/diag.h"
#include "ir/op.h"
#include "ir/shape.h"
#include "prove/verify.h"
#include "rules/rules.h"

namespace refinery::discover {

// One op of the vocabulary with its attributes fixed: "add", or
// "(transpose :perm [1 0])" in the rule language's attribute syntax.
struct OpSpec {
  ir::Op op = ir::Op::Opaque;
  ir::Attributes attrs;  // as e-nodes hold them: values equal to the default omitted
  int arity = 0;
  std::string text;
};
// Each entry through the rule parser (rules/, one reader of the language).
Expected<std::vector<OpSpec>> parse_ops(const std::vector<std::string>& entries);

// "2x3", "N x M" written "NxM": static sizes or symbols.
Expected<ir::Shape> parse_shape(std::string_view text);

// The ranges the fingerprint's random inputs are drawn from.
enum class ValueRange { Mixed, Positive, Negative, Integers, Large };
Expected<ValueRange> parse_value_range(std::string_view name);
std::string_view to_string(ValueRange r);

struct DiscoverOptions {
  std::vector<OpSpec> ops;
  int max_size = 2;                            // ops per term
  int variables = 2;                           // ?a ?b ...
  std::vector<float> constants{0, 1, -1, 2};  // scalar f32 leaves
  // The first shape types the e-graph (every variable has it); the static
  // ones of the same rank are the fingerprint's input shapes.
  std::vector<ir::Shape> shapes{ir::Shape{2, 3}, ir::Shape{3, 4}};
  std::vector<ValueRange> ranges{ValueRange::Mixed, ValueRange::Positive, ValueRange::Negative,
                                 ValueRange::Integers, ValueRange::Large};
  int draws = 1;           // random draws per shape and range
  std::uint64_t seed = 1;  // of the random inputs
  double time_limit_s = 600;
  rules::RuleSet against;  // rules already known: what they derive is not a new rule
  prove::VerifyOptions verify{.timeout_ms = 3000, .fp_timeout_ms = 3000, .threads = 1};
  // Saturation of the enumeration e-graph after each layer, and of each
  // derivability check.
  egraph::RunnerLimits saturate{.iter_limit = 8, .node_limit = 20'000, .time_limit = std::chrono::seconds(10)};
  // Hears a line as each layer's candidates are made and as it ends. Unset: silent.
  std::function<void(const std::string&)> progress;
  egraph::RunnerLimits derive{.iter_limit = 8, .node_limit = 4'000, .time_limit = std::chrono::seconds(2)};
};

// A candidate rule and what became of it.
struct Candidate {
  std::string name;     // "disc-neg-neg"
  std::string lhs, rhs;  // DSL patterns
  bool both_ways = false;     // written `<=>` (sides of one size)
  bool same_shape = false;    // holds only when the variables share a shape (:when same-shape)
  std::vector<std::string> axioms;  // the prover's laws of its functions it needed (:axioms)
  std::uint64_t group = 0;    // the fingerprint the two sides shared
  int group_classes = 0;      // classes in that group
  int size = 0;               // ops on both sides
  int constants = 0;          // constant leaves on both sides
  int variables = 0;          // distinct variables
  prove::Verdict verdict = prove::Verdict::Unknown;
  double proof_seconds = 0;
  std::string counterexample;  // refuted: the verifier's
  std::string message;         // unknown / error: why
  std::string text() const;    // "(rule NAME LHS => RHS ...)"
};

struct LayerStats {
  int size = 0;
  std::size_t new_terms = 0, classes = 0, groups = 0, candidates = 0, derived = 0, proved = 0, refuted = 0,
              unproved = 0;
  double seconds = 0;
};

struct DiscoverResult {
  std::vector<Candidate> kept;      // proved and not derivable from the others (nor from `against`)
  std::vector<Candidate> rejected;  // refuted or not proved, with the reason
  std::vector<Candidate> derived;   // proved but found derivable by the final minimisation
  std::vector<LayerStats> layers;
  std::size_t candidates = 0, skipped_derivable = 0;
  bool time_limit_hit = false;
  double seconds = 0, proof_seconds = 0, derive_seconds = 0;
  // The output file: a header, then each kept rule with its provenance
  // comment. Loads through rules::parse_rules.
  std::string rules_text(const std::string& command) const;
  std::string table() const;  // per layer, then the totals
};

Expected<DiscoverResult> discover(const DiscoverOptions& options);

// Whether `rules` make the two terms of `candidate` (a rule's text, one way)
// equal in an e-graph at the options' variable shape: both sides added,
// the rules run, one class?
bool derives(const std::vector<rules::TensorRewrite>& rules, const rules::Rule& candidate,
             const DiscoverOptions& options);

// How far `rules` cover a family (Ruler's derivability test): each family
// rule within the vocabulary (its ops among --ops, attribute variables
// taking the vocabulary's values, no condition but same-shape, no :let) and
// the size, its two sides in one e-graph, `rules` run: "derived" when they
// end in one class, else "missed"; "out of scope" otherwise. `example` is
// the instance checked.
struct Coverage {
  std::string rule, status, example;
};
std::vector<Coverage> coverage(const DiscoverOptions& options, const rules::RuleSet& rules,
                               const rules::RuleSet& family);

}  // namespace refinery::discover
