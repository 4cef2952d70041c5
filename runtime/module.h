// The boundary between the interpreter module (librefinery_aten.so: the
// kernels and libtorch) and everything that calls it through
// runtime/interpreter.h. Private to runtime/.
//
// Why a module: loading libtorch and its ~290 shared libraries costs about
// 0.9 s of CPU per process, and most commands (convert, inspect, cost,
// report, a model refused at load) never run a graph. The module is loaded
// on the first call that needs a kernel (runtime/load.cpp), found by
// ir::module_file. It links its own copy of refinery_ir and exports only
// kEntrySymbol, so the two copies never bind to each other's symbols; values
// cross the boundary as the plain ir types below.
#pragma once
#include <cstddef>
#include <cstdint>

#include "runtime/interpreter.h"

namespace refinery::runtime {

inline constexpr const char* kModuleFile = "librefinery_aten.so";
inline constexpr const char* kEntrySymbol = "refinery_aten_entry";

// Both sides are built from one tree; the layout check catches a module from
// another build (an old install) before a call reads a misplaced field.
struct ModuleAbi {
  uint32_t version = 1;
  uint32_t graph = sizeof(ir::Graph), tensor = sizeof(ir::Tensor), options = sizeof(RunOptions);
  uint32_t diag = sizeof(Diag), node = sizeof(ir::Node);
  bool operator==(const ModuleAbi&) const = default;
};

struct ModuleEntry {
  ModuleAbi abi;
  Expected<std::vector<ir::Tensor>> (*run)(const ir::Graph&, const std::vector<ir::Tensor>&, const RunOptions&);
  std::vector<std::string> (*unsupported_ops)(const ir::Graph&);
  bool (*has_kernel)(ir::Op);
};

// The module's definitions (interpreter.cpp), behind the entry.
namespace module {
Expected<std::vector<ir::Tensor>> run(const ir::Graph& graph, const std::vector<ir::Tensor>& inputs,
                                      const RunOptions& options);
std::vector<std::string> unsupported_ops(const ir::Graph& graph);
bool has_kernel(ir::Op op);
}  // namespace module

}  // namespace refinery::runtime

extern "C" const refinery::runtime::ModuleEntry* refinery_aten_entry();
