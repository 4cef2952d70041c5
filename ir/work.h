// The work of one op: its FLOPs and the bytes it reads and writes, from its
// op, attributes and types alone. The one count (ARCHITECTURE.md, decision
// 12): `refinery inspect` sums it over a graph (ir/stats.h) and the cost
// models (targets/) price an e-node or a node with it.
#pragma once
#include <span>

#include "ir/graph.h"

namespace refinery::ir {

struct Work {
  double flops = 0;           // multiply-adds count 2; elementwise ops 1 per element
  double epilogue_flops = 0;  // of those, a matrix op's bias add (1 per output)
  double bytes_read = 0;      // all present inputs
  double bytes_written = 0;   // the result(s) counted
  bool exact = true;          // false: a dim the FLOPs depend on is symbolic, counted as 1
};

// One result `output` of an op with these inputs (nullptr: an absent
// optional input). An op's FLOPs do not depend on which of its results is
// counted; bytes_written is that result's. Symbolic and unknown dims count
// as 1 element.
Work op_work(Op op, const Attributes& attrs, std::span<const TensorType* const> inputs, const TensorType& output);

// A node of a graph, all its results written.
Work node_work(const Graph& graph, const Node& node);

// Elements and bytes of a type, symbolic and unknown dims counted as 1.
double counted_elements(const TensorType& t);
double counted_bytes(const TensorType& t);

}  // namespace refinery::ir
