// File helpers shared by every writer: outputs are written atomically (a temp
// file in the same folder, then rename), so a failed run leaves nothing
// half-written (ARCHITECTURE.md, decision 8).
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/diag.h"

namespace refinery::ir {

// Writes each (path, bytes) pair to a temp file, then renames them all into
// place; on any failure the temps are removed and nothing is left behind.
Expected<void> write_files_atomic(const std::vector<std::pair<std::filesystem::path, std::string_view>>& files);

Expected<std::string> read_file(const std::filesystem::path& file);

}  // namespace refinery::ir
