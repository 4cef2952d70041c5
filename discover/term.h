// Internal to discover/: a term over the discovery vocabulary (ops with
// fixed attributes, variables ?a ?b ?c, scalar constants) as a flat tree,
// its rule-DSL text, and the bridge to and from a tensor e-graph whose
// variables are graph inputs of one shape.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "egraph/tensor/analysis.h"
#include "ir/attribute.h"
#include "ir/op.h"
#include "ir/shape.h"

namespace refinery::discover {

struct TermNode {
  enum class Kind { Var, Const, Op } kind = Kind::Var;
  int var = 0;        // Var: 0 is ?a, 1 is ?b, ...
  float value = 0;    // Const: a scalar f32
  ir::Op op = ir::Op::Opaque;  // Op
  ir::Attributes attrs;        // Op: as the e-node holds them (defaults omitted)
  std::vector<int> kids;       // Op: indexes of earlier nodes
};

// The root is the last node.
struct Term {
  std::vector<TermNode> nodes;
  int size() const;                // ops in the term (variables and constants count 0)
  std::set<int> vars() const;      // the variables it uses
  int constants() const;           // constant leaves
  std::string dsl() const;         // "(add ?a (neg ?b))", as rules/lib writes patterns
};

std::string var_name(int var);  // "?a"

// A tensor e-graph whose leaves are the variables (inputs of one type, all
// the same) and scalar f32 constants, added on demand.
class TermGraph {
 public:
  TermGraph(const ir::TensorType& var_type, int variables);

  egraph::tensor::TensorEGraph& egraph() { return *egraph_; }
  const egraph::tensor::TensorEGraph& egraph() const { return *egraph_; }
  egraph::tensor::TensorEGraph release() { return std::move(*egraph_); }
  void reset(egraph::tensor::TensorEGraph g) { *egraph_ = std::move(g); }

  egraph::Id var(int i) const { return vars_[static_cast<size_t>(i)]; }
  int variables() const { return static_cast<int>(vars_.size()); }
  egraph::Id constant(float value);

  // The attributes as an e-node over children of this rank holds them (and
  // as the rules' right-hand sides build them): a value equal to its default
  // is omitted, so one node has one form. make_node uses it; so does every
  // comparison of a vocabulary entry with an e-node.
  static ir::Attributes node_attrs(ir::Op op, const ir::Attributes& attrs, int64_t rank);
  // The e-node op(children) with these attributes, if it type-checks.
  std::optional<egraph::tensor::TensorNode> make_node(ir::Op op, const ir::Attributes& attrs,
                                                      const std::vector<egraph::Id>& kids) const;
  // Adds the whole term; nullopt when some node does not type-check.
  std::optional<egraph::Id> add(const Term& term);
  // One e-node as a term node (its kids left empty).
  TermNode node_of(const egraph::tensor::TensorNode& n) const;

 private:
  std::shared_ptr<egraph::tensor::TensorContext> ctx_;
  std::unique_ptr<egraph::tensor::TensorEGraph> egraph_;
  std::vector<egraph::Id> vars_;
  std::map<float, egraph::Id> constants_;
};

}  // namespace refinery::discover
