// Rewrites written straight against the e-graph for pipeline tests (the rule
// library is tested in tests/rules): relu(relu(x)) = relu(x); two MatMuls of
// one input by constant weights = one MatMul by the concatenated weights,
// split; and a wrong one, relu(x) = x, to see validation catch it.
#pragma once

#include <utility>
#include <vector>

#include "optimize/saturate.h"

namespace refinery::optimize::testing {

using egraph::Id;
using egraph::tensor::NodeAttrs;
using egraph::tensor::TensorNode;

inline std::uint32_t op_key(ir::Op op) { return static_cast<std::uint32_t>(op); }

// Every node of `op` with its class.
inline std::vector<std::pair<Id, TensorNode>> nodes_of(const TensorEGraph& g, ir::Op op) {
  std::vector<std::pair<Id, TensorNode>> out;
  for (Id c : g.classes_with_op(op_key(op)))
    for (const TensorNode& n : g[c].nodes)
      if (n.op == op_key(op)) out.emplace_back(c, n);
  return out;
}

inline GraphRewriter relu_relu() {
  return {"relu-relu", [](TensorEGraph& g) {
            std::vector<std::pair<Id, Id>> merges;
            for (auto& [c, n] : nodes_of(g, ir::Op::Relu))
              for (const TensorNode& inner : g[n.kids[0]].nodes)
                if (inner.op == op_key(ir::Op::Relu)) merges.emplace_back(c, n.kids[0]);
            std::size_t changed = 0;
            for (auto [a, b] : merges) changed += g.merge(a, b);
            return changed;
          }};
}

inline GraphRewriter wrong_relu_is_identity() {
  return {"relu-is-identity (wrong)", [](TensorEGraph& g) {
            std::vector<std::pair<Id, Id>> merges;
            for (auto& [c, n] : nodes_of(g, ir::Op::Relu)) merges.emplace_back(c, n.kids[0]);
            std::size_t changed = 0;
            for (auto [a, b] : merges) changed += g.merge(a, b);
            return changed;
          }};
}

// matmul(x, w1), matmul(x, w2) with constant 2-D weights of equal rows =>
// split(matmul(x, concat(w1, w2, axis 1)), axis -1).
inline GraphRewriter merge_parallel_matmuls() {
  return {"merge-parallel-matmuls", [](TensorEGraph& g) {
            auto mms = nodes_of(g, ir::Op::MatMul);
            std::vector<std::tuple<Id, Id, Id, Id, Id>> groups;  // x, w1, w2, m1, m2
            for (std::size_t i = 0; i < mms.size(); ++i)
              for (std::size_t j = i + 1; j < mms.size(); ++j) {
                auto& [c1, n1] = mms[i];
                auto& [c2, n2] = mms[j];
                if (g.find(c1) == g.find(c2) || g.find(n1.kids[0]) != g.find(n2.kids[0])) continue;
                const auto &w1 = g[n1.kids[1]].data, &w2 = g[n2.kids[1]].data;
                if (!w1.constant || !w2.constant || w1.type.shape.rank() != 2 || w2.type.shape.rank() != 2) continue;
                if (w1.type.shape[0] != w2.type.shape[0]) continue;
                groups.emplace_back(n1.kids[0], n1.kids[1], n2.kids[1], c1, c2);
              }
            std::size_t changed = 0;
            auto& ctx = g.analysis().context();
            for (auto [x, w1, w2, m1, m2] : groups) {
              if (g.find(m1) == g.find(m2)) continue;
              NodeAttrs axis1;
              axis1.attrs.set("axis", int64_t{1});
              Id wc = g.add(TensorNode{op_key(ir::Op::Concat), ctx.intern(axis1), {w1, w2}});
              Id y = g.add(TensorNode{op_key(ir::Op::MatMul), ctx.intern(NodeAttrs{}), {x, wc}});
              int64_t n1 = g[w1].data.type.shape[1].size(), n2 = g[w2].data.type.shape[1].size();
              // One constant per (n1, n2), so that reapplying adds nothing new.
              std::uint32_t k = 0;
              while (k < ctx.num_constants() && !(ctx.constant(k).name == "split_sizes" &&
                                                  ctx.constant(k).tensor->to_int_vector() == std::vector<int64_t>{n1, n2}))
                ++k;
              if (k == ctx.num_constants())
                ctx.add_constant({"split_sizes", std::make_shared<const ir::Tensor>(ir::Tensor::vector_i64({n1, n2}))});
              Id s = g.add(TensorNode::constant(k));
              NodeAttrs split;
              split.attrs.set("axis", int64_t{-1});
              split.num_outputs = 2;
              Id a = g.add(TensorNode{op_key(ir::Op::Split), ctx.intern(split), {y, s}});
              split.output = 1;
              Id b = g.add(TensorNode{op_key(ir::Op::Split), ctx.intern(split), {y, s}});
              changed += g.merge(a, m1);
              changed += g.merge(b, m2);
            }
            return changed;
          }};
}

}  // namespace refinery::optimize::testing
