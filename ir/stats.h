// Summary figures of a graph for `refinery inspect` and reports: op
// histogram, parameter count, FLOPs.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "ir/graph.h"

namespace refinery::ir {

struct GraphStats {
  std::map<std::string, int64_t> op_histogram;  // op name (ONNX type for opaque ops) -> count
  int64_t num_nodes = 0;
  int64_t num_parameters = 0;  // elements of constants
  int64_t parameter_bytes = 0;
  int64_t flops = 0;                // ir::node_work's, summed; static shapes only
  int64_t nodes_without_flops = 0;  // nodes whose FLOPs are unknown (dynamic shapes, opaque)
};

GraphStats compute_stats(const Graph& graph);

}  // namespace refinery::ir
