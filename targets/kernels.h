// The kernels ONNX Runtime (CPU, graph optimization 'all') runs for a graph,
// and each kernel as a graph of its own (a micro-model) to time it: the
// learned CPU cost model is trained on such timings (docs/targets.md,
// "The learned CPU model"). A kernel is a head node and the nodes fused into
// it as epilogues (ort_cpu_fused_epilogue: Conv+BatchNorm/bias/activation/
// residual Add, MatMul+Add as Gemm, Gemm+activation).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
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

class CostModel;
struct OpDesc;

// A node the learned CPU model prices as a kernel of its own: not a
// constant expression, a view, a fused epilogue or removed_by_runtime.
bool ort_cpu_priced(const OpDesc& op);

// One kernel of ONNX Runtime's optimized graph as its profiler timed it
// inside a whole run (tools/ort/profile.mjs): the optimized graph's node
// name and the median microseconds.
struct ProfiledKernel {
  std::string name;
  double us = 0;
};

// Each node's share of a whole run of `graph`, measured in context:
// `optimized` is ONNX Runtime's optimized graph of it (its fusions done,
// NCHWc reorders inserted), `kernels` its profile, `run_ms` the run's
// measured time less the session's fixed overhead. A kernel's nodes are
// found by value names: the node computing its result (or, for an NCHWc
// kernel named "<value>_nchwc", that value), with every node upstream of it
// whose result ORT no longer holds (fused away). The profiler's kernel
// times count its own cost per kernel and leave out ORT's dispatch between
// kernels, so one time per kernel is added to each (`dispatch_ms`, negative
// where the profiler's cost is the larger) to make the kernels sum to
// `run_ms`, at most kMaxDispatchMs either way: a larger difference is not
// the profiler's (the profile and the run timed under different loads) and
// the kernels' times are scaled (`scale`) to make up the rest; none below
// kMinNodeMs a priced node. A kernel's time is then
// shared among its priced nodes by `baseline`'s price of each as its own
// kernel; a group fused_by_runtime is one priced node, its last, as the
// fused op (runtime_descs). Per node of `graph`: its milliseconds, or -1
// where it is not priced or no kernel ran it.
struct InContextTimes {
  std::vector<double> ms;
  std::size_t kernels = 0, unmatched = 0;  // profiled kernels; those with no node of `graph`
  double dispatch_ms = 0;
  double scale = 1;
};
inline constexpr double kMinNodeMs = 1e-4;
inline constexpr double kMaxDispatchMs = 0.02;
Expected<InContextTimes> in_context_times(const ir::Graph& graph, const ir::Graph& optimized,
                                          const std::vector<ProfiledKernel>& kernels, double run_ms,
                                          const CostModel& baseline);

// The factor that turns a profile's kernel times into CPU time, as the run
// (`run_ms`) is timed: the profiler's times are wall time, which on a
// shared machine counts the time other processes held the core, but each
// is a kernel's median over the profiled runs, and a kernel much shorter
// than the scheduler's slice is not preempted in most runs. So the factor
// lies between the profiled runs' CPU time over their wall time
// (`runs_cpu_per_wall`: every kernel counted its share of the others'
// time) and 1 (none did): within that, the one that makes the kernels
// (`profiled_ms`) sum to the run. Scaled by the runs' figure alone,
// bert_encoder's 111 kernels (8.8 ms, at CPU per wall 0.48) summed to half
// its timed run, and in_context_times's dispatch made up the rest at +0.02
// ms a kernel (its Adds 8 us -> 34 us).
double profile_cpu_factor(double profiled_ms, double run_ms, double runs_cpu_per_wall);

}  // namespace refinery::targets
