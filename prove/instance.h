// Internal to prove/: a rule instantiated at concrete shapes. Tensor
// variables get small static shapes (dims 1..3, and 0 in the instances with
// empty dims) that make the left side
// type-check and the conditions hold; integer inputs (reshape targets, axes,
// split sizes) and unbound attributes get values that fit. The two sides
// then become two ir::Graphs over the same inputs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "rules/builtins.h"
#include "rules/rule_ast.h"

namespace refinery::prove {

struct Instance {
  std::vector<std::string> inputs;            // tensor variables that are graph inputs, in order
  std::vector<rules::ValueCond> input_conds;  // per input: the value conditions it must satisfy (a set)
  ir::Graph lhs, rhs;                         // outputs: one per root
  std::string describe;                       // "?x: 2x3, ?p: [1 0]"
  int64_t elements = 0;                       // total input elements (smaller is cheaper)
  bool empty = false;                         // some value of a side has an empty dim (size 0)
};

// Up to `count` distinct instances without empty dims (fewer when the
// search finds fewer), then up to `empty` with empty dims where ONNX
// defines the ops on them (none when the rule admits none); `why` says
// what failed when no instance without empty dims is found.
// `others`, when given, receives the draws not kept (up to 3 x count more):
// verification runs them in the interpreter only, a screen for rules that
// fail at attribute values or shapes the kept instances miss.
std::vector<Instance> make_instances(const rules::RuleBody& body, const std::string& name, int count, int empty,
                                     std::string& why, std::vector<Instance>* others = nullptr);

}  // namespace refinery::prove
