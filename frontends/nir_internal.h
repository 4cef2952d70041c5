// Internal to the NIR frontend: the NIR primitive names and how they map to
// IR ops, shared by import and export.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/diag.h"
#include "ir/graph.h"
#include "ir/op.h"

namespace refinery::frontends {

// The reader itself, in this process: import_nir (frontends/nir.h) runs it in
// a child so that a crash or a loop inside libhdf5 becomes an error. The fuzz
// target (bench/fuzz) calls it directly, since a child's coverage is not seen.
Expected<ir::Graph> import_nir_named(const std::filesystem::path& file, std::vector<Diag>* notes = nullptr);

}  // namespace refinery::frontends

namespace refinery::frontends::nir {

// The file's NIR version is kept in ModelInfo::metadata under this key (so
// it survives .ir files too) and written back; a graph from elsewhere gets 1.0.0.
inline constexpr std::string_view kVersionKey = "nir_version";
inline constexpr std::string_view kVersionWritten = "1.0.0";

inline std::string version_of(const ir::ModelInfo& info) {
  for (const auto& [key, value] : info.metadata)
    if (key == kVersionKey) return value;
  return std::string(kVersionWritten);
}

// "LIF" -> Op::LIF, ...; nullopt for Input, Output, NIRGraph and unknown names.
std::optional<ir::Op> op_of_type(std::string_view nir_type);
std::string_view type_of_op(ir::Op op);

}  // namespace refinery::frontends::nir
