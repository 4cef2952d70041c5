#include "discover/enumerate.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "egraph/egraph.h"
#include "extract/greedy.h"
#include "extract/problem.h"
#include "runtime/interpreter.h"

namespace refinery::discover {

using egraph::Id;
using egraph::tensor::TensorNode;

namespace {

// A draw in [-1, 1) moved into the range.
double in_range(ValueRange r, double u) {
  switch (r) {
    case ValueRange::Mixed: return 3 * u;
    case ValueRange::Positive: return 0.1 + 1.5 * (u + 1);
    case ValueRange::Negative: return -(0.1 + 1.5 * (u + 1));
    case ValueRange::Integers: return std::round(2.5 * u);  // -2..2, zero among them
    case ValueRange::Large: return (u < 0 ? -1 : 1) * (100 + 900 * std::abs(u));
  }
  return u;
}

ir::Tensor f64_tensor(const std::vector<int64_t>& dims, const std::vector<double>& v) {
  return ir::Tensor::from_values<double>(ir::DType::f64, dims, v);
}

// Values agree when they print alike to 6 significant digits (the values are
// computed in f64, so two forms of one function differ far below that).
std::uint64_t quantize(double v) {
  if (std::isnan(v)) return 0x7ff8000000000001ULL;
  if (std::isinf(v)) return v > 0 ? 0x7ff0000000000001ULL : 0xfff0000000000001ULL;
  if (std::abs(v) < 1e-12) return 0;
  int e = static_cast<int>(std::floor(std::log10(std::abs(v))));
  auto m = static_cast<int64_t>(std::llround(v / std::pow(10.0, e) * 1e5));
  return egraph::hash_combine(static_cast<std::uint64_t>(m), static_cast<std::uint64_t>(e + 1000));
}

}  // namespace

Enumerator::Enumerator(const DiscoverOptions& options)
    : options_(options), graph_(ir::TensorType{ir::DType::f32, options.shapes.front()}, options.variables) {
  for (float c : options.constants) graph_.constant(c);
  std::uint64_t seed = options.seed;
  for (const ir::Shape& s : options.shapes) {
    if (!s.is_static() || s.rank() != options.shapes.front().rank()) continue;
    for (ValueRange r : options.ranges)
      for (int d = 0; d < options.draws; ++d) {
        std::vector<ir::Tensor> vars;
        for (int v = 0; v < options.variables; ++v) {
          ir::Tensor u = runtime::random_tensor(ir::TensorType{ir::DType::f32, s}, seed++);
          std::vector<double> vals(static_cast<size_t>(u.numel()));
          for (int64_t i = 0; i < u.numel(); ++i) vals[static_cast<size_t>(i)] = in_range(r, u.as_double(i));
          vars.push_back(f64_tensor(s.sizes(), vals));
        }
        leaves_.push_back(std::move(vars));
      }
  }
  refresh();
}

void Enumerator::enumerate(const OpSpec& spec, int size, std::vector<Id>& kids, int left, std::size_t& added) {
  auto k = static_cast<int>(kids.size());
  if (k == spec.arity) {
    if (left != 0) return;
    // An op over constants only is constant folding (optimize/ folds it):
    // not enumerated, so no rule carries a foldable sub-term.
    if (std::all_of(kids.begin(), kids.end(), [&](Id c) { return ground_[index(graph_.egraph().find(c))]; })) return;
    auto node = graph_.make_node(spec.op, spec.attrs, kids);
    if (!node) return;
    if (graph_.egraph().lookup(*node)) return;
    graph_.egraph().add(std::move(*node));
    ++added;
    return;
  }
  // The last child takes what is left; earlier ones any size up to it.
  for (int s = (k + 1 == spec.arity ? left : 0); s <= left; ++s) {
    if (s >= static_cast<int>(by_size_.size())) break;
    for (Id c : by_size_[static_cast<size_t>(s)]) {
      kids.push_back(c);
      enumerate(spec, size, kids, left - s, added);
      kids.pop_back();
    }
  }
}

std::size_t Enumerator::add_layer(int size) {
  std::size_t added = 0;
  for (const OpSpec& spec : options_.ops) {
    std::vector<Id> kids;
    enumerate(spec, size, kids, size - 1, added);
  }
  refresh();
  return added;
}

std::vector<std::size_t> Enumerator::saturate(const std::vector<rules::TensorRewrite>& rules,
                                              const egraph::RunnerLimits& limits) {
  std::vector<std::size_t> matches(rules.size(), 0);
  if (rules.empty()) return matches;
  egraph::Runner<TensorNode, egraph::tensor::TensorAnalysis> runner(limits, graph_.release());
  runner.run(rules);
  for (const auto& it : runner.iterations)
    for (std::size_t r = 0; r < it.rules.size() && r < matches.size(); ++r) matches[r] += it.rules[r].matches;
  graph_.reset(std::move(runner.egraph));
  refresh();
  return matches;
}

void Enumerator::refresh() {
  auto& g = graph_.egraph();
  g.rebuild();
  std::vector<bool> in_vocab(ir::kNumOps, false);
  for (const OpSpec& s : options_.ops) in_vocab[static_cast<size_t>(s.op)] = true;
  // The smallest term of each class over the vocabulary: an op costs 1, a
  // variable or scalar constant 0; other ops and constants are never chosen.
  std::vector<Id> roots(g.class_ids().begin(), g.class_ids().end());
  auto problem = extract::make_problem(g, roots, [&](Id, const TensorNode& n) -> double {
    if (n.op == egraph::tensor::kInputOp) return 0;
    if (n.op == egraph::tensor::kConstantOp) {
      const auto& t = g.analysis().context().constant(n.payload).tensor;
      return t->dims().empty() && t->dtype() == ir::DType::f32 ? 0 : extract::kInfiniteCost;
    }
    if (n.op >= ir::kNumOps || !in_vocab[n.op]) return extract::kInfiniteCost;
    // The entry's attributes as the e-node holds them (a value at its
    // default omitted: `:perm [1 0]` at rank 2 is no attribute at all).
    int64_t rank = n.kids.empty() ? -1 : g[n.kids[0]].data.type.shape.rank();
    for (const OpSpec& s : options_.ops)
      if (static_cast<std::uint32_t>(s.op) == n.op &&
          TermGraph::node_attrs(s.op, s.attrs, rank) == g.analysis().context().attrs(n.payload).attrs)
        return 1;
    return extract::kInfiniteCost;
  });
  auto solution = extract::extract_greedy_tree(problem.problem);
  choice_.clear();
  size_.clear();
  for (std::size_t i = 0; i < problem.class_of.size(); ++i)
    if (solution.choice[i] != extract::kUnchosen)
      choice_.emplace(index(problem.class_of[i]), problem.chosen(solution, problem.class_of[i]));
  // Sizes by memoised recursion over the (acyclic) choices.
  std::function<int(Id)> size_of = [&](Id c) -> int {
    c = g.find(c);
    if (auto it = size_.find(index(c)); it != size_.end()) return it->second;
    auto ch = choice_.find(index(c));
    if (ch == choice_.end()) return size_[index(c)] = -1;
    int s = ch->second.is_leaf() ? 0 : 1;
    for (Id k : ch->second.kids) {
      int ks = size_of(k);
      if (ks < 0) return size_[index(c)] = -1;
      s += ks;
    }
    return size_[index(c)] = s;
  };
  std::function<bool(Id)> ground_of = [&](Id c) -> bool {
    c = g.find(c);
    if (auto it = ground_.find(index(c)); it != ground_.end()) return it->second;
    const TensorNode& n = choice_.at(index(c));
    bool ground = n.op != egraph::tensor::kInputOp;
    for (Id k : n.kids) ground = ground_of(k) && ground;
    return ground_[index(c)] = ground;
  };
  ground_.clear();
  by_size_.clear();
  for (Id c : g.class_ids()) {
    int s = size_of(c);
    if (s >= 0) ground_of(c);
    if (s < 0) continue;
    if (static_cast<int>(by_size_.size()) <= s) by_size_.resize(static_cast<size_t>(s) + 1);
    by_size_[static_cast<size_t>(s)].push_back(c);
  }
  fingerprints_.clear();
}

int Enumerator::size(Id c) const {
  auto it = size_.find(index(graph_.egraph().find(c)));
  return it == size_.end() ? -1 : it->second;
}

std::vector<Id> Enumerator::classes(int max_size) const {
  std::vector<Id> out;
  for (int s = 0; s <= max_size && s < static_cast<int>(by_size_.size()); ++s)
    out.insert(out.end(), by_size_[static_cast<size_t>(s)].begin(), by_size_[static_cast<size_t>(s)].end());
  return out;
}

std::optional<Term> Enumerator::term(Id c) const {
  if (size(c) < 0) return std::nullopt;
  Term t;
  std::function<int(Id)> build = [&](Id id) -> int {
    const TensorNode& n = choice_.at(index(graph_.egraph().find(id)));
    TermNode tn = graph_.node_of(n);
    for (Id k : n.kids) tn.kids.push_back(build(k));
    t.nodes.push_back(std::move(tn));
    return static_cast<int>(t.nodes.size()) - 1;
  };
  build(c);
  return t;
}

Enumerator::Values Enumerator::eval(const TensorNode& n) {
  Values out(leaves_.size());
  if (n.op == egraph::tensor::kInputOp) {
    for (size_t s = 0; s < leaves_.size(); ++s) out[s] = leaves_[s][n.payload];
    return out;
  }
  if (n.op == egraph::tensor::kConstantOp) {
    const auto& t = graph_.egraph().analysis().context().constant(n.payload).tensor;
    std::vector<double> v(static_cast<size_t>(t->numel()));
    for (int64_t i = 0; i < t->numel(); ++i) v[static_cast<size_t>(i)] = t->as_double(i);
    for (size_t s = 0; s < leaves_.size(); ++s) out[s] = f64_tensor(t->dims(), v);
    return out;
  }
  std::vector<const Values*> kids;
  for (Id k : n.kids) kids.push_back(&values(k));
  const auto& attrs = graph_.egraph().analysis().context().attrs(n.payload).attrs;
  for (size_t s = 0; s < leaves_.size(); ++s) {
    ir::Graph one;
    std::vector<ir::Tensor> inputs;
    ir::Node node;
    node.op = n.ir_op();
    node.attrs = attrs;
    bool ok = true;
    for (size_t i = 0; i < kids.size() && ok; ++i) {
      const auto& v = (*kids[i])[s];
      if (!v) {
        ok = false;
        break;
      }
      node.inputs.push_back(one.add_input("x" + std::to_string(i), {v->dtype(), ir::Shape::of(v->dims())}));
      inputs.push_back(*v);
    }
    if (!ok) continue;
    one.set_outputs({one.node(one.add_node(std::move(node), {"y"}, {ir::TensorType{}})).outputs[0]});
    if (!one.infer_shapes()) continue;
    auto r = runtime::run(one, inputs);
    if (r && r->size() == 1) out[s] = std::move((*r)[0]);
  }
  return out;
}

const Enumerator::Values& Enumerator::values(Id c) {
  c = graph_.egraph().find(c);
  if (auto it = values_.find(index(c)); it != values_.end()) return it->second;
  // A class that rules made, or that a union renamed: evaluate its smallest
  // node (its value is every node's value).
  auto ch = choice_.find(index(c));
  Values v = ch != choice_.end() ? eval(ch->second) : Values(leaves_.size());
  return values_[index(c)] = std::move(v);
}

std::uint64_t Enumerator::fingerprint(Id c) const {
  auto it = fingerprints_.find(index(graph_.egraph().find(c)));
  return it == fingerprints_.end() ? 0 : it->second;
}

std::vector<std::vector<Id>> Enumerator::groups(int max_size) {
  std::map<std::uint64_t, std::vector<Id>> by_print;
  for (Id c : classes(max_size)) {
    const Values& v = values(c);
    std::uint64_t h = 0x9e3779b97f4a7c15ULL;
    bool any = false;
    for (const auto& t : v) {
      if (!t) {
        h = egraph::hash_combine(h, 0xdeadULL);
        continue;
      }
      any = true;
      h = egraph::hash_combine(h, t->dims().size());
      for (int64_t d : t->dims()) h = egraph::hash_combine(h, static_cast<std::uint64_t>(d));
      for (int64_t i = 0; i < t->numel(); ++i) h = egraph::hash_combine(h, quantize(t->as_double(i)));
    }
    if (!any) continue;  // defined on no sample: nothing to compare
    fingerprints_[index(c)] = h;
    by_print[h].push_back(c);
  }
  std::vector<std::vector<Id>> out;
  for (auto& [h, cs] : by_print) {
    if (cs.size() < 2) continue;
    std::stable_sort(cs.begin(), cs.end(), [&](Id a, Id b) { return size(a) < size(b); });
    out.push_back(std::move(cs));
  }
  return out;
}

}  // namespace refinery::discover
