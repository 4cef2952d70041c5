// Constant folding for export: every node whose inputs are all constants
// (and that foldable() accepts) is evaluated once with the interpreter and
// becomes an initializer; constants left unused are dropped. Float results
// are computed in f64 (a chain of folds rounds once, to the type the graph
// declares); a result that is not a float (a Cast to an integer, a
// comparison), as the graph computes it, in the declared types.
#pragma once

#include <cstddef>

#include "ir/diag.h"
#include "ir/graph.h"

namespace refinery::optimize {

struct Folded {
  ir::Graph graph;
  std::size_t folded = 0;  // nodes evaluated into initializers
  std::size_t constants_dropped = 0;
};

Expected<Folded> fold_constants(const ir::Graph& graph);

}  // namespace refinery::optimize
