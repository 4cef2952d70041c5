// The kernels ONNX Runtime (CPU, graph optimization 'all') runs for a graph,
// and each kernel as a graph of its own (a micro-model) to time it: the
// learned CPU cost model is trained on such timings (docs/targets.md,
// "The learned CPU model"). A kernel is a head node and the nodes fused into
// it as epilogues (ort_cpu_fused_epilogue: Conv+BatchNorm/bias/activation/
// residual Add, MatMul+Add as Gemm, Gemm+activation).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir/diag.h"
#include "ir/graph.h"

namespace refinery::targets {

struct Kernel {
  std::vector<std::size_t> nodes;  // node indices, the head first
};

// The graph's kernels in graph order. Views (OpClass::Free), constant
// expressions (folded at export) and nodes removed_by_runtime run none.
std::vector<Kernel> ort_cpu_kernels(const ir::Graph& graph);

// A micro-model's shapes varied around the graph's: the leading (batch) dim
// of every non-constant input times `batch`, and its spatial dims (NCHW's
// H and W; the sequence dim of a rank-3 tensor) times `spatial`.
struct Variation {
  int64_t batch = 1;
  double spatial = 1;
};

// The kernel's nodes alone as a graph: its non-constant inputs become graph
// inputs (symbolic dims as 1, then varied), its constants are kept (constant
// expressions with the nodes computing them, which ONNX Runtime folds at
// load), its last node's results are the outputs; types re-inferred. Fails
// when the varied shapes do not fit the op (a Reshape to a fixed shape) or
// a result's shape is not static.
Expected<ir::Graph> kernel_graph(const ir::Graph& graph, const Kernel& kernel, const Variation& variation = {});

}  // namespace refinery::targets
