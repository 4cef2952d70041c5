// Loading and saving models by file extension (.onnx, .ir, .nir), for the CLI.
#pragma once
#include <filesystem>

#include "ir/diag.h"
#include "ir/graph.h"

namespace refinery::cli {

enum class ModelFormat { Onnx, Ir, Nir };

Expected<ModelFormat> format_of(const std::filesystem::path& file);
// What the importer changed in a model it accepted (nodes it sorted) is
// printed to stderr as "refinery: note: ...".
Expected<ir::Graph> load_model(const std::filesystem::path& file);
Expected<void> save_model(const ir::Graph& graph, const std::filesystem::path& file);

}  // namespace refinery::cli
