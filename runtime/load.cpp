// The calls of runtime/interpreter.h that need a kernel, forwarded to the
// interpreter module, which is loaded on the first of them (runtime/module.h).
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include <fmt/format.h>

#include "ir/data_dir.h"
#include "runtime/interpreter.h"
#include "runtime/module.h"

namespace refinery::runtime {
namespace {

Expected<const ModuleEntry*> open_module() {
  auto path = ir::module_file(kModuleFile);
  if (!path) return std::unexpected(path.error());
  // RTLD_LOCAL: nothing loaded later binds to the module's copy of anything.
  void* handle = ::dlopen(path->c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return fail(fmt::format("cannot load the interpreter module: {}", ::dlerror()));
  auto entry_fn = reinterpret_cast<const ModuleEntry* (*)()>(::dlsym(handle, kEntrySymbol));
  if (!entry_fn) return fail(fmt::format("{} has no {}: {}", path->string(), kEntrySymbol, ::dlerror()));
  const ModuleEntry* entry = entry_fn();
  if (!(entry->abi == ModuleAbi{}))
    return fail(fmt::format("{} was built from another version of Refinery (its interface differs)", path->string()));
  return entry;
}

// Loaded once per process; the module is never unloaded.
const Expected<const ModuleEntry*>& loaded() {
  static const Expected<const ModuleEntry*> entry = [] {
    auto e = open_module();
    if (!e) e.error().limitation = true;  // Refinery's installation, not the model
    return e;
  }();
  return entry;
}

// For the calls whose answer cannot carry an error: without the module no
// answer would be right, so the process ends as the CLI ends on a limitation.
const ModuleEntry& loaded_or_exit() {
  const auto& entry = loaded();
  if (entry) return **entry;
  std::fflush(stdout);
  std::fprintf(stderr, "refinery: error: %s\n", entry.error().str().c_str());
  std::exit(3);
}

}  // namespace

Expected<void> load() {
  if (const auto& entry = loaded(); !entry) return std::unexpected(entry.error());
  return {};
}

Expected<std::vector<ir::Tensor>> run(const ir::Graph& graph, const std::vector<ir::Tensor>& inputs,
                                      const RunOptions& options) {
  const auto& entry = loaded();
  if (!entry) return std::unexpected(entry.error());
  return (*entry)->run(graph, inputs, options);
}

std::vector<std::string> unsupported_ops(const ir::Graph& graph) { return loaded_or_exit().unsupported_ops(graph); }

bool has_kernel(ir::Op op) { return loaded_or_exit().has_kernel(op); }

}  // namespace refinery::runtime
