// Constant folding for the math language (egg's ConstantFold): a class's
// data is its constant value, with the operator and operand values that
// produced it, so that the fold can be recorded as a proof step.
#pragma once

#include <algorithm>
#include <optional>

#include "egraph/analysis.h"
#include "egraph/rec_expr.h"
#include "tests/egraph/math_lang.h"

namespace refinery::egraph::math {

struct Folded {
  double value = 0;
  MathOp op = MathOp::Constant;  // Constant: a leaf; else op(a, b)
  double a = 0, b = 0;
  bool operator==(const Folded&) const = default;
};

inline constexpr const char* kConstantFold = "constant-fold";

struct ConstantFold {
  using Data = std::optional<Folded>;

  template <class G>
  Data make(const G& g, const MathNode& n) const {
    if (n.op == MathOp::Constant) return Folded{n.value(), MathOp::Constant, 0, 0};
    if (n.arity != 2) return std::nullopt;
    const Data& da = g[n.kids[0]].data;
    const Data& db = g[n.kids[1]].data;
    if (!da || !db) return std::nullopt;
    double a = da->value, b = db->value;
    switch (n.op) {
      case MathOp::Add: return Folded{a + b, n.op, a, b};
      case MathOp::Sub: return Folded{a - b, n.op, a, b};
      case MathOp::Mul: return Folded{a * b, n.op, a, b};
      case MathOp::Div:
        if (b == 0.0) return std::nullopt;
        return Folded{a / b, n.op, a, b};
      default: return std::nullopt;
    }
  }

  DidMerge merge(Data& a, Data&& b) const {
    if (!a && b) {
      a = b;
      return {true, false};
    }
    if (a && !b) return {false, true};
    return {false, false};
  }

  template <class G>
  void modify(G& g, Id id) const {
    const Data data = g[id].data;
    if (!data) return;
    Id c = g.add(MathNode::constant(data->value));
    if (g.explanations_enabled() && data->op != MathOp::Constant) {
      // Record the fold between the exact terms (op a b) and its value.
      RecExpr<MathNode> folded;
      Id ia = folded.add(MathNode::constant(data->a));
      Id ib = folded.add(MathNode::constant(data->b));
      folded.add(MathNode::make(data->op, std::array{ia, ib}));
      g.merge_because(g.add_expr(folded), c, kConstantFold);
    } else {
      g.merge_because(id, c, kConstantFold);
    }
    const auto& nodes = g[id].nodes;
    if (std::any_of(nodes.begin(), nodes.end(), [](const MathNode& n) { return !n.is_leaf(); }))
      g.retain_nodes(id, [](const MathNode& n) { return n.is_leaf(); });
  }
};

}  // namespace refinery::egraph::math
