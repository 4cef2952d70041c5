// The reference interpreter: executes an ir::Graph on the CPU with ATen
// kernels. Only runtime/ includes torch headers; tensors cross the boundary
// as ir::Tensor.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/diag.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace refinery::runtime {

// Counters a caller may ask for (tests use them to check that constants are
// shared, not copied, and that values are freed after their last use).
struct RunStats {
  size_t constants_converted = 0;  // constants wrapped as ATen tensors this run
  size_t constants_copied = 0;     // of those, how many needed a copy (u16/u32 only)
  size_t peak_live_values = 0;     // most values held at once
};

// Stands in for an opaque node (which has no kernel): given the node and its
// input values, returns its results. Validation uses one to compare graphs
// that keep a custom op: both runs get the same results for the same node,
// and the node's inputs are compared instead.
using OpaqueStandIn =
    std::function<Expected<std::vector<ir::Tensor>>(const ir::Node& node, const std::vector<ir::Tensor>& inputs)>;

struct RunOptions {
  int threads = 1;            // ATen intra-op threads (0: leave ATen's setting)
  RunStats* stats = nullptr;  // filled when given
  OpaqueStandIn opaque;       // when set, opaque nodes run through it instead of failing
  // Computes every floating value in f64: float inputs and constants are
  // widened as they enter, and a float result of lower precision (a Cast to
  // f32, a stand-in's result) is widened as it is made. Float outputs come
  // back as f64. The same graph's f32 run and its wide run differ by the f32
  // rounding of the graph's own computation (verify/ uses it to tell
  // rounding from a change of meaning).
  bool wide_floats = false;
};

// The kernels live in a module with libtorch, loaded on the first call of
// run, unsupported_ops or has_kernel (runtime/module.h). load() loads it now:
// `refinery batch` does so before it forks its children, so they share it.
// A module that cannot be loaded is a Diag marked as Refinery's limitation;
// unsupported_ops and has_kernel, which cannot return it, print it and end
// the process with the CLI's limitation status (3).
Expected<void> load();

// Runs the graph on `inputs` (one per graph input, in order). Errors name the
// node that failed. Opaque or unsupported ops fail with a Diag naming them.
Expected<std::vector<ir::Tensor>> run(const ir::Graph& graph, const std::vector<ir::Tensor>& inputs,
                                      const RunOptions& options = {});

// Ops of the graph that the interpreter cannot execute (empty when it can run
// it): IR op names, and opaque ops by their ONNX type ("domain:Type" outside
// the default domain), each once, in order of first use.
std::vector<std::string> unsupported_ops(const ir::Graph& graph);

// Random integer inputs are drawn from [0, kIntHigh) unless told otherwise.
inline constexpr int64_t kIntHigh = 10;

// One seeded random tensor of `type`, drawn as random_inputs draws an input.
ir::Tensor random_tensor(const ir::TensorType& type, uint64_t seed, const std::map<std::string, int64_t>& dims = {},
                         int64_t int_high = kIntHigh);

// Whether the kernel table has an entry for `op` (dispatch keys off ir::Op).
bool has_kernel(ir::Op op);

// Seeded random inputs for the graph's inputs: floats uniform in [-1, 1),
// integers in [0, int_high), bools fair. Symbolic dims take their value from
// `dims` (default 1).
std::vector<ir::Tensor> random_inputs(const ir::Graph& graph, uint64_t seed,
                                      const std::map<std::string, int64_t>& dims = {}, int64_t int_high = kIntHigh);

}  // namespace refinery::runtime
