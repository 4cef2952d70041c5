#include "discover/discover.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <tuple>

#include "discover/enumerate.h"
#include "discover/term.h"
#include "rules/rule_ast.h"

namespace refinery::discover {

using egraph::Id;
using Clock = std::chrono::steady_clock;

namespace {

Diag bad(std::string message) { return Diag{"", "", std::move(message)}; }

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A pattern of a parsed rule as a term: variables numbered in order of
// first appearance (?a ?b ... in discovered rules), an attribute variable
// given the vocabulary's value for that op (`attrs`). Nullopt: it uses
// something a discovery term cannot hold (an attribute variable with no
// value, a list).
using VarMap = std::map<std::string, int>;
using AttrChoice = std::map<ir::Op, ir::Attributes>;

std::optional<int> add_pat(const rules::Pat& p, Term& t, VarMap& vars, const AttrChoice& attrs) {
  TermNode n;
  switch (p.kind) {
    case rules::Pat::Kind::Var: {
      n.kind = TermNode::Kind::Var;
      n.var = vars.try_emplace(p.var, static_cast<int>(vars.size())).first->second;
      break;
    }
    case rules::Pat::Kind::Literal:
      n.kind = TermNode::Kind::Const;
      if (auto* f = std::get_if<float>(&p.literal))
        n.value = *f;
      else if (auto* i = std::get_if<int64_t>(&p.literal))
        n.value = static_cast<float>(*i);
      else
        return std::nullopt;
      break;
    case rules::Pat::Kind::Op:
      n.kind = TermNode::Kind::Op;
      n.op = p.op;
      for (const rules::AttrPat& a : p.attrs) {
        if (!a.is_var) {
          n.attrs.set(a.name, a.literal);
          continue;
        }
        auto it = attrs.find(p.op);
        const ir::AttrValue* v = it == attrs.end() ? nullptr : it->second.find(a.name);
        if (!v) return std::nullopt;
        n.attrs.set(a.name, *v);
      }
      for (const rules::Pat& k : p.kids) {
        auto id = add_pat(k, t, vars, attrs);
        if (!id) return std::nullopt;
        n.kids.push_back(*id);
      }
      break;
  }
  t.nodes.push_back(std::move(n));
  return static_cast<int>(t.nodes.size()) - 1;
}

std::optional<Term> term_of(const rules::Pat& p, VarMap& vars, const AttrChoice& attrs = {}) {
  Term t;
  if (!add_pat(p, t, vars, attrs)) return std::nullopt;
  return t;
}

// Both terms in a fresh e-graph at the options' variable shape, the rules
// run: one class?
bool derives_terms(const std::vector<rules::TensorRewrite>& rules, const Term& l, const Term& r, int vars,
                   const DiscoverOptions& options) {
  TermGraph g(ir::TensorType{ir::DType::f32, options.shapes.front()}, std::max(vars, 1));
  auto li = g.add(l), ri = g.add(r);
  if (!li || !ri) return false;
  egraph::Runner<egraph::tensor::TensorNode, egraph::tensor::TensorAnalysis> runner(options.derive, g.release());
  // Stop as soon as the two sides are one class (a derivable candidate
  // then costs the iterations its derivation needs, not the limits).
  const Id lid = *li, rid = *ri;
  runner.add_hook([lid, rid](auto& r) -> std::optional<std::string> {
    if (r.egraph.find(lid) == r.egraph.find(rid)) return "derived";
    return std::nullopt;
  });
  runner.run(rules);
  return runner.egraph.find(lid) == runner.egraph.find(rid);
}

// "disc-neg-neg": the left side's ops in order.
std::string base_name(const Term& lhs) {
  std::string s = "disc";
  for (auto it = lhs.nodes.rbegin(); it != lhs.nodes.rend(); ++it)
    if (it->kind == TermNode::Kind::Op) s += "-" + std::string(ir::op_name(it->op));
  return s;
}

struct Rules {
  rules::RuleSet set;
  std::vector<rules::TensorRewrite> rewrites;
};

// The known rules and the kept ones, compiled; the kept ones read back
// through the rule parser from the text they are written as.
Rules compile(const rules::RuleSet& against, const std::vector<Candidate>& kept, std::size_t skip = SIZE_MAX) {
  Rules r{against, {}};
  std::string text;
  for (std::size_t i = 0; i < kept.size(); ++i)
    if (i != skip) text += kept[i].text() + "\n";
  auto parsed = rules::parse_rules(text, "discovered");
  if (!parsed) throw std::logic_error("discover: a kept rule does not load: " + parsed.error().str());
  for (const rules::Rule& rule : parsed->rules()) r.set.add(rule);
  r.rewrites = r.set.rewrites();
  return r;
}

bool all_proved(const std::vector<prove::RuleReport>& reports) {
  return std::all_of(reports.begin(), reports.end(),
                     [](const prove::RuleReport& r) { return prove::is_proved(r.verdict); });
}

// The ops of a pattern, and how many.
void pattern_ops(const rules::Pat& p, std::set<ir::Op>& ops, int& count) {
  if (p.kind != rules::Pat::Kind::Op) return;
  ops.insert(p.op);
  ++count;
  for (const rules::Pat& k : p.kids) pattern_ops(k, ops, count);
}

// The verifier's axioms (`:axioms`, docs/rules.md) that state laws of each
// op it leaves uninterpreted: a candidate over these ops that is unknown
// without them is tried once more with them (sigmoid(-x) = 1 - sigmoid(x)
// needs sigmoid-def).
std::vector<std::string> axioms_for(const rules::Rule& rule) {
  static const std::map<ir::Op, std::vector<std::string>> kAxioms{
      {ir::Op::Exp, {"exp-add", "exp-pos", "exp-sum"}},
      {ir::Op::Sqrt, {"sqrt-sq", "sqrt-pos"}},
      {ir::Op::Sigmoid, {"sigmoid-def"}},
      {ir::Op::Tanh, {"tanh-def"}}};
  std::set<ir::Op> ops;
  int count = 0;
  for (const auto* side : {&rule.body->lhs, &rule.body->rhs})
    for (const auto& [root, pat] : *side) pattern_ops(pat, ops, count);
  std::vector<std::string> out;
  for (ir::Op op : ops)
    if (auto it = kAxioms.find(op); it != kAxioms.end()) out.insert(out.end(), it->second.begin(), it->second.end());
  return out;
}

// The known rules that can ever fire in an e-graph of terms over the
// vocabulary: a rule whose left side names an op that neither the
// vocabulary nor the right side of a rule that can fire makes never
// matches there. Dropping the others changes no derivation and saves the
// matching of each (most of the library, for a small vocabulary).
rules::RuleSet relevant_rules(const rules::RuleSet& against, const std::vector<OpSpec>& vocabulary) {
  std::set<ir::Op> made;
  for (const OpSpec& s : vocabulary) made.insert(s.op);
  std::vector<bool> fires(against.rules().size(), false);
  for (bool grew = true; grew;) {
    grew = false;
    for (std::size_t i = 0; i < against.rules().size(); ++i) {
      if (fires[i]) continue;
      const rules::Rule& r = against.rules()[i];
      std::set<ir::Op> needs;
      int count = 0;
      for (const auto& [root, pat] : r.body->lhs) pattern_ops(pat, needs, count);
      if (!std::includes(made.begin(), made.end(), needs.begin(), needs.end())) continue;
      fires[i] = grew = true;
      for (ir::Op op : rules::ops_made(r)) made.insert(op);
    }
  }
  rules::RuleSet out;
  for (std::size_t i = 0; i < against.rules().size(); ++i)
    if (fires[i]) out.add(against.rules()[i]);
  return out;
}

// Proves each rule of the candidate's text (both ways: both). The verdict
// is the first unproved one's, else the weakest proved.
void prove_candidate(Candidate& c, const DiscoverOptions& options) {
  auto parsed = rules::parse_rules(c.text(), "discovered");
  if (!parsed) {
    c.verdict = prove::Verdict::Error;
    c.message = parsed.error().str();
    return;
  }
  std::vector<prove::RuleReport> reports;
  for (const rules::Rule& r : parsed->rules()) reports.push_back(prove::verify_rule(r, options.verify));
  c.proof_seconds = 0;
  for (const auto& r : reports) c.proof_seconds += r.seconds;
  for (const auto& r : reports)
    if (!prove::is_proved(r.verdict)) {
      c.verdict = r.verdict;
      c.counterexample = r.counterexample;
      c.message = r.message.empty() ? r.numeric : r.message;
      return;
    }
  c.verdict = prove::Verdict::ProvedExact;
  for (const auto& r : reports)
    if (r.verdict == prove::Verdict::ProvedReals) c.verdict = r.verdict;
  (void)all_proved;
}

}  // namespace

Expected<std::vector<OpSpec>> parse_ops(const std::vector<std::string>& entries) {
  std::vector<OpSpec> out;
  for (const std::string& entry : entries) {
    std::string inner = entry;
    if (inner.starts_with('(') && inner.ends_with(')')) inner = inner.substr(1, inner.size() - 2);
    std::string name = inner.substr(0, inner.find_first_of(" \t"));
    auto op = ir::op_from_name(name);
    if (!op) return std::unexpected(bad(fmt::format("--ops: '{}' is not an op (ir/ops.def names)", name)));
    const ir::OpInfo& info = ir::op_info(*op);
    if (info.min_inputs < 1)
      return std::unexpected(bad(fmt::format("--ops: '{}' takes no tensor inputs", name)));
    // A variadic op (max, min, sum) enumerated with two inputs.
    OpSpec spec{*op, {}, info.max_inputs < 0 ? std::max(info.min_inputs, 2) : info.min_inputs, entry};
    for (int i = 0; i < spec.arity; ++i)
      if (info.takes_int_input(static_cast<size_t>(i))) {
        Diag d = bad(fmt::format(
            "--ops: '{}' takes an integer input (shape, axes): discovery enumerates float terms only", name));
        d.limitation = true;
        return std::unexpected(d);
      }
    // Read through the rule language: `(rule op (INNER ?a ?b) => ?a)`.
    std::string pat = "(" + inner;
    for (int i = 0; i < spec.arity; ++i) pat += " " + var_name(i);
    auto parsed = rules::parse_rules(fmt::format("(rule op {}) => ?a)", pat), "--ops");
    if (!parsed) return std::unexpected(bad(fmt::format("--ops '{}': {}", entry, parsed.error().message)));
    const rules::Pat& p = parsed->rules().front().body->lhs.front().second;
    for (const rules::AttrPat& a : p.attrs) {
      if (a.is_var) return std::unexpected(bad(fmt::format("--ops '{}': attribute :{} needs a value", entry, a.name)));
      ir::AttrValue v = a.literal;
      if (const ir::AttrSpec* s = info.attr(a.name); s && s->kind == ir::AttrKind::Float)
        if (auto* i = std::get_if<int64_t>(&v)) v = static_cast<float>(*i);
      spec.attrs.set(a.name, v);
    }
    out.push_back(std::move(spec));
  }
  return out;
}

Expected<ir::Shape> parse_shape(std::string_view text) {
  std::vector<ir::Dim> dims;
  std::size_t start = 0;
  if (text.empty() || text == "scalar") return ir::Shape{};
  while (start <= text.size()) {
    std::size_t end = text.find('x', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view part = text.substr(start, end - start);
    if (part.empty()) return std::unexpected(bad(fmt::format("--shapes '{}': an empty dim", text)));
    if (std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      int64_t n = std::stoll(std::string(part));
      if (n < 1 || n > 64) return std::unexpected(bad(fmt::format("--shapes '{}': dims are 1..64", text)));
      dims.emplace_back(n);
    } else {
      dims.push_back(ir::Dim::symbol(std::string(part)));
    }
    start = end + 1;
  }
  return ir::Shape(std::move(dims));
}

namespace {
constexpr std::pair<ValueRange, std::string_view> kRanges[] = {{ValueRange::Mixed, "mixed"},
                                                               {ValueRange::Positive, "positive"},
                                                               {ValueRange::Negative, "negative"},
                                                               {ValueRange::Integers, "integers"},
                                                               {ValueRange::Large, "large"}};
}

Expected<ValueRange> parse_value_range(std::string_view name) {
  for (auto [r, n] : kRanges)
    if (n == name) return r;
  return std::unexpected(
      bad(fmt::format("--values: '{}' is none of mixed, positive, negative, integers, large", name)));
}

std::string_view to_string(ValueRange r) {
  for (auto [v, n] : kRanges)
    if (v == r) return n;
  return "?";
}

std::string Candidate::text() const {
  std::string s = fmt::format("(rule {} {} {} {}", name, lhs, both_ways ? "<=>" : "=>", rhs);
  if (same_shape) {
    auto parsed = rules::parse_rules(fmt::format("(rule x {} => {})", lhs, rhs), "discovered");
    std::vector<std::string> vars;
    if (parsed)
      for (const auto& [v, kind] : parsed->rules().front().body->vars)
        if (kind == rules::VarKind::Tensor) vars.push_back(v);
    std::string conds;
    for (std::size_t i = 1; i < vars.size(); ++i)
      conds += fmt::format("{}(same-shape {} {})", i > 1 ? " " : "", vars[0], vars[i]);
    if (!conds.empty()) s += " :when (" + conds + ")";
  }
  if (!axioms.empty()) s += fmt::format(" :axioms ({})", fmt::join(axioms, " "));
  return s + ")";
}

bool derives(const std::vector<rules::TensorRewrite>& rules, const rules::Rule& candidate,
             const DiscoverOptions& options) {
  const auto& body = *candidate.body;
  if (body.lhs.size() != 1 || body.rhs.size() != 1) return false;
  VarMap vars;
  auto l = term_of(body.lhs.front().second, vars), r = term_of(body.rhs.front().second, vars);
  if (!l || !r) return false;
  return derives_terms(rules, *l, *r, static_cast<int>(vars.size()), options);
}

namespace {
// Candidates checked one by one between two saturations of the enumeration
// e-graph with the rules proved meanwhile.
constexpr std::size_t kResaturateEvery = 32;
}  // namespace

Expected<DiscoverResult> discover(const DiscoverOptions& options) {
  if (options.ops.empty()) return std::unexpected(bad("discover: no --ops"));
  if (options.max_size < 1) return std::unexpected(bad("discover: --max-size must be at least 1"));
  if (options.variables < 1 || options.variables > 8) return std::unexpected(bad("discover: --vars must be 1..8"));
  if (options.shapes.empty()) return std::unexpected(bad("discover: no --shapes"));
  if (options.ranges.empty()) return std::unexpected(bad("discover: no --values"));
  const auto rank = options.shapes.front().rank();
  if (std::none_of(options.shapes.begin(), options.shapes.end(),
                   [&](const ir::Shape& s) { return s.is_static() && s.rank() == rank; }))
    return std::unexpected(
        bad(fmt::format("discover: no static shape of rank {} among --shapes to evaluate terms at", rank)));

  const auto start = Clock::now();
  auto out_of_time = [&] { return seconds_since(start) > options.time_limit_s; };
  DiscoverResult result;
  std::vector<Candidate> kept;
  const rules::RuleSet against = relevant_rules(options.against, options.ops);
  Rules known = compile(against, kept);
  if (options.progress && !options.against.rules().empty())
    options.progress(fmt::format("{} of {} known rules can fire over the vocabulary", against.rules().size(),
                                 options.against.rules().size()));
  std::set<std::string> names, seen;
  for (const rules::Rule& r : options.against.rules()) names.insert(r.name);

  Enumerator en(options);
  for (int size = 1; size <= options.max_size; ++size) {
    if (out_of_time()) {
      result.time_limit_hit = true;
      break;
    }
    const auto layer_start = Clock::now();
    LayerStats st;
    st.size = size;
    st.new_terms = en.add_layer(size);
    en.saturate(known.rewrites, options.saturate);
    auto groups = en.groups(size);
    st.classes = en.classes(size).size();
    st.groups = groups.size();

    // Each class of a group against the smallest earlier one whose
    // variables it has: larger => smaller (both ways when of one size).
    std::vector<Candidate> cands;
    std::map<std::string, std::pair<Id, Id>> classes_of;  // candidate name -> its two sides' classes
    for (const auto& group : groups) {
      std::vector<Term> terms;
      for (Id c : group) terms.push_back(*en.term(c));
      for (std::size_t i = 1; i < terms.size(); ++i) {
        auto vi = terms[i].vars();
        // A term without variables is constant folding (optimize/ folds).
        if (terms[i].size() == 0 || vi.empty()) continue;
        for (std::size_t j = 0; j < i; ++j) {
          auto vj = terms[j].vars();
          if (!std::includes(vi.begin(), vi.end(), vj.begin(), vj.end())) continue;
          Candidate c;
          c.lhs = terms[i].dsl();
          c.rhs = terms[j].dsl();
          c.both_ways = terms[i].size() == terms[j].size() && vi == vj;
          c.group = en.fingerprint(group[0]);
          c.group_classes = static_cast<int>(group.size());
          c.size = terms[i].size() + terms[j].size();
          c.constants = terms[i].constants() + terms[j].constants();
          c.variables = static_cast<int>(vi.size());
          if (!seen.insert(c.lhs + " => " + c.rhs).second) break;
          std::string name = base_name(terms[i]);
          for (int k = 2; names.contains(name); ++k) name = fmt::format("{}-{}", base_name(terms[i]), k);
          names.insert(name);
          c.name = name;
          classes_of.emplace(name, std::pair(group[i], group[j]));
          cands.push_back(std::move(c));
          break;
        }
      }
    }
    // Small and general first (fewer constants, more variables), so that
    // the specific instances are derived from the general rule, not kept.
    std::stable_sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
      return std::tuple(a.size, a.constants, -a.variables) < std::tuple(b.size, b.constants, -b.variables);
    });
    st.candidates = cands.size();
    result.candidates += cands.size();
    if (options.progress) {
      // How many candidates of each total size (both sides' ops), the order
      // they are checked in.
      std::map<int, int> by_size;
      for (const Candidate& c : cands) ++by_size[c.size];
      std::string sizes;
      for (auto [n, count] : by_size) sizes += fmt::format("{}{}: {}", sizes.empty() ? "" : ", ", n, count);
      options.progress(fmt::format("size {}: {} new terms, {} classes, {} groups, {} candidates ({:.0f} s){}", size,
                                   st.new_terms, st.classes, st.groups, st.candidates, seconds_since(start),
                                   sizes.empty() ? "" : "; by total size " + sizes));
    }

    // Ruler's loop: once some rules were proved, they run over the
    // enumeration e-graph again, and a candidate whose two classes they
    // merged is derivable, found without a check of its own (most of a
    // layer's candidates are instances of its first few rules).
    std::size_t proved_since = 0, checked_since = 0;
    for (Candidate& c : cands) {
      if (out_of_time()) {
        result.time_limit_hit = true;
        break;
      }
      if (proved_since > 0 && checked_since >= kResaturateEvery) {
        auto sat_start = Clock::now();
        en.saturate(known.rewrites, options.saturate);
        result.derive_seconds += seconds_since(sat_start);
        proved_since = checked_since = 0;
      }
      auto [cl, cr] = classes_of.at(c.name);
      if (en.egraph().find(cl) == en.egraph().find(cr)) {
        ++st.derived;
        ++result.skipped_derivable;
        continue;
      }
      ++checked_since;
      auto parsed = rules::parse_rules(c.text(), "discovered");
      if (!parsed) {
        c.verdict = prove::Verdict::Error;
        c.message = parsed.error().str();
        result.rejected.push_back(std::move(c));
        ++st.unproved;
        continue;
      }
      auto derive_start = Clock::now();
      bool derivable = derives(known.rewrites, parsed->rules().front(), options);
      result.derive_seconds += seconds_since(derive_start);
      if (derivable) {
        ++st.derived;
        ++result.skipped_derivable;
        continue;
      }
      auto proof_start = Clock::now();
      prove_candidate(c, options);
      // Unknown, not refuted: perhaps a law of sigmoid, tanh, exp or sqrt is
      // needed, which the verifier uses only when a rule asks.
      if (c.verdict == prove::Verdict::Unknown && !out_of_time())
        if (auto axioms = axioms_for(parsed->rules().front()); !axioms.empty()) {
          Candidate with = c;
          with.axioms = std::move(axioms);
          prove_candidate(with, options);
          with.proof_seconds += c.proof_seconds;
          c = std::move(with);
        }
      // Equal on the sampled inputs, where every variable has one shape:
      // perhaps only then (a transpose distributed over a broadcasting add).
      if (!prove::is_proved(c.verdict) && c.variables >= 2 && !out_of_time()) {
        Candidate same = c;
        same.same_shape = true;
        prove_candidate(same, options);
        if (prove::is_proved(same.verdict)) {
          same.proof_seconds += c.proof_seconds;
          c = std::move(same);
        }
      }
      result.proof_seconds += seconds_since(proof_start);
      if (prove::is_proved(c.verdict)) {
        ++st.proved;
        ++proved_since;
        kept.push_back(std::move(c));
        known = compile(against, kept);
      } else {
        if (c.verdict == prove::Verdict::Refuted)
          ++st.refuted;
        else
          ++st.unproved;
        result.rejected.push_back(std::move(c));
      }
    }
    if (st.proved > 0) en.saturate(known.rewrites, options.saturate);
    st.seconds = seconds_since(layer_start);
    result.layers.push_back(st);
    if (options.progress)
      options.progress(fmt::format("size {}: {} derivable, {} proved, {} refuted, {} unproved ({:.0f} s)", size,
                                   st.derived, st.proved, st.refuted, st.unproved, seconds_since(start)));
  }

  // Minimise: the largest first, drop a rule the others derive.
  const auto minimise_start = Clock::now();
  for (std::size_t i = kept.size(); i-- > 0;) {
    Rules others = compile(against, kept, i);
    auto parsed = rules::parse_rules(kept[i].text(), "discovered");
    if (parsed && derives(others.rewrites, parsed->rules().front(), options)) {
      result.derived.push_back(kept[i]);
      kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  result.derive_seconds += seconds_since(minimise_start);
  result.kept = std::move(kept);
  result.seconds = seconds_since(start);
  return result;
}

std::string DiscoverResult::rules_text(const std::string& command) const {
  std::string s = fmt::format(
      "; Rules found by `refinery rules discover` (docs/discovery.md), each proved with\n"
      "; prove::verify_rule before it was kept; none derivable from the others or from --against.\n"
      "; command: {}\n",
      command);
  for (const Candidate& c : kept)
    s += fmt::format("; group {:016x} ({} classes), proof {:.2f} s, {}\n{}\n", c.group, c.group_classes,
                     c.proof_seconds, prove::verdict_name(c.verdict), c.text());
  return s;
}

std::string DiscoverResult::table() const {
  std::string s = fmt::format("{:>4} {:>9} {:>8} {:>7} {:>10} {:>8} {:>7} {:>8} {:>9} {:>8}\n", "size", "new terms",
                              "classes", "groups", "candidates", "derived", "proved", "refuted", "unproved", "seconds");
  for (const LayerStats& l : layers)
    s += fmt::format("{:>4} {:>9} {:>8} {:>7} {:>10} {:>8} {:>7} {:>8} {:>9} {:>8.2f}\n", l.size, l.new_terms,
                     l.classes, l.groups, l.candidates, l.derived, l.proved, l.refuted, l.unproved, l.seconds);
  s += fmt::format("time: {:.1f} s proving, {:.1f} s checking derivability, {:.1f} s enumerating and fingerprinting\n",
                   proof_seconds, derive_seconds, seconds - proof_seconds - derive_seconds);
  s += fmt::format(
      "{} candidates: {} derivable before proof, {} proved, {} rejected; "
      "{} dropped by minimisation; {} kept ({:.1f} s{})\n",
      candidates, skipped_derivable, kept.size() + derived.size(), rejected.size(), derived.size(), kept.size(),
      seconds, time_limit_hit ? ", time limit reached" : "");
  return s;
}

std::vector<Coverage> coverage(const DiscoverOptions& options, const rules::RuleSet& rules,
                               const rules::RuleSet& family) {
  std::vector<Coverage> out;
  auto rws = rules.rewrites();
  std::set<ir::Op> vocabulary;
  AttrChoice attrs;
  for (const OpSpec& s : options.ops) {
    vocabulary.insert(s.op);
    attrs[s.op] = s.attrs;
  }
  for (const rules::Rule& rule : family.rules()) {
    Coverage cov{rule.name, "derived", ""};
    const rules::RuleBody& body = *rule.body;
    std::set<ir::Op> ops;
    bool fits = body.lhs.size() == 1 && body.rhs.size() == 1 && body.lets.empty();
    for (const auto* side : {&body.lhs, &body.rhs})
      for (const auto& [root, pat] : *side) {
        int count = 0;
        pattern_ops(pat, ops, count);
        fits = fits && count <= options.max_size;
      }
    fits = fits && std::includes(vocabulary.begin(), vocabulary.end(), ops.begin(), ops.end());
    // Conditions: every variable has one shape here, so same-shape holds;
    // any other condition is outside what the instance shows.
    for (const rules::Cond& c : body.conds) fits = fits && c.name == "same-shape";
    VarMap vars;
    std::optional<Term> l, r;
    if (fits) {
      l = term_of(body.lhs.front().second, vars, attrs);
      r = term_of(body.rhs.front().second, vars, attrs);
      fits = l && r && static_cast<int>(vars.size()) <= std::max(options.variables, 3);
    }
    if (!fits) {
      cov.status = "out of scope";
      out.push_back(std::move(cov));
      continue;
    }
    cov.example = l->dsl() + " = " + r->dsl();
    if (!derives_terms(rws, *l, *r, static_cast<int>(vars.size()), options)) cov.status = "missed";
    out.push_back(std::move(cov));
  }
  return out;
}

}  // namespace refinery::discover
