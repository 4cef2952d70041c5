// Internal to the NIR frontend: the NIR primitive names and how they map to
// IR ops, shared by import and export.
#pragma once
#include <optional>
#include <string_view>

#include "ir/op.h"

namespace refinery::frontends::nir {

inline constexpr std::string_view kVersionWritten = "1.0.0";

// "LIF" -> Op::LIF, ...; nullopt for Input, Output, NIRGraph and unknown names.
std::optional<ir::Op> op_of_type(std::string_view nir_type);
std::string_view type_of_op(ir::Op op);

}  // namespace refinery::frontends::nir
