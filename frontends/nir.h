// NIR import and export: the HDF5 files of the Neuromorphic Intermediate
// Representation (github.com/neuromorphs/NIR), as NIR 0.1 to 1.0.x write them.
// A NIR graph becomes a spiking ir::Graph (ops in ir/spiking.h; the mapping,
// the evaluation order and the errors are in docs/nir.md).
#pragma once
#include <filesystem>
#include <vector>

#include "ir/diag.h"
#include "ir/graph.h"

namespace refinery::frontends {

struct NirImportOptions {
  // Receives what was read leniently (an Output with an empty stored shape
  // takes the shape that arrives), each naming the node.
  std::vector<Diag>* notes = nullptr;
};

// Errors name the file and the node, graph or edge at fault.
Expected<ir::Graph> import_nir(const std::filesystem::path& file, const NirImportOptions& options = {});

struct NirExportOptions {
  bool compress = true;  // gzip array datasets, as NIR's writer does by default
};

// Writes the graph atomically. Fails, naming the node, on an op NIR has no
// primitive for or a parameter that is not a constant.
Expected<void> export_nir(const ir::Graph& graph, const std::filesystem::path& file,
                          const NirExportOptions& options = {});

}  // namespace refinery::frontends
