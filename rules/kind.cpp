// A rule's kind from its parsed form (rules.h, RuleKind): which operators
// each side has, and how many roots.
#include <algorithm>
#include <iterator>
#include <vector>

#include "rules/rule_ast.h"

namespace refinery::rules {

namespace {

void operators(const Pat& p, std::vector<ir::Op>& out) {
  if (p.kind != Pat::Kind::Op) return;
  out.push_back(p.op);
  for (const Pat& k : p.kids) operators(k, out);
}

std::vector<ir::Op> operators(const std::vector<std::pair<std::string, Pat>>& side) {
  std::vector<ir::Op> ops;
  for (const auto& [root, pat] : side) operators(pat, ops);
  std::sort(ops.begin(), ops.end());
  return ops;
}

// Elementwise arithmetic: an expansion may drop these from the left side
// (mul-distrib-add, sub-as-add-neg, div-as-mul-recip); a fusion that drops a
// structural op (conv-bn-fold drops batch_norm) is a simplification.
bool arithmetic(ir::Op op) {
  switch (op) {
    case ir::Op::Add:
    case ir::Op::Sub:
    case ir::Op::Mul:
    case ir::Op::Div:
    case ir::Op::Neg:
    case ir::Op::Reciprocal:
    case ir::Op::Pow:
    case ir::Op::Sqrt:
    case ir::Op::Exp:
    case ir::Op::Max:
    case ir::Op::Min:
    case ir::Op::Abs: return true;
    default: return false;
  }
}

}  // namespace

RuleKind kind_of(const RuleBody& body) {
  // A multi-pattern merge has more operators on its right too (a concat of
  // the weights, a split per root) but is no expansion.
  if (body.lhs.size() > 1) return RuleKind::Merge;
  auto l = operators(body.lhs), r = operators(body.rhs);
  if (!l.empty() && l == r) return RuleKind::Permute;
  if (r.size() > l.size()) {
    std::vector<ir::Op> gone;
    std::set_difference(l.begin(), l.end(), r.begin(), r.end(), std::back_inserter(gone));
    if (std::all_of(gone.begin(), gone.end(), arithmetic)) return RuleKind::Explore;
  }
  return RuleKind::Simplify;
}

std::string_view to_string(RuleKind kind) {
  switch (kind) {
    case RuleKind::Simplify: return "simplify";
    case RuleKind::Explore: return "explore";
    case RuleKind::Permute: return "permute";
    case RuleKind::Merge: return "merge";
  }
  return "?";
}

std::optional<RuleKind> rule_kind_from_name(std::string_view name) {
  for (RuleKind k : {RuleKind::Simplify, RuleKind::Explore, RuleKind::Permute, RuleKind::Merge})
    if (to_string(k) == name) return k;
  return std::nullopt;
}

}  // namespace refinery::rules
