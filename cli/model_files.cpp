#include "cli/model_files.h"

#include <fmt/format.h>

#include "frontends/nir.h"
#include "frontends/onnx.h"
#include "ir/text.h"

namespace refinery::cli {

Expected<ModelFormat> format_of(const std::filesystem::path& file) {
  auto ext = file.extension().string();
  if (ext == ".onnx") return ModelFormat::Onnx;
  if (ext == ".ir") return ModelFormat::Ir;
  if (ext == ".nir") return ModelFormat::Nir;
  return fail(fmt::format("unknown model format '{}' (expected .onnx, .ir or .nir)", ext), {}, file.string());
}

Expected<ir::Graph> load_model(const std::filesystem::path& file) {
  auto format = format_of(file);
  if (!format) return std::unexpected(format.error());
  if (!std::filesystem::exists(file)) return fail("no such file", {}, file.string());
  if (*format == ModelFormat::Onnx) {
    std::vector<Diag> notes;
    auto graph = frontends::import_onnx(file, {.notes = &notes});
    if (graph)
      for (const Diag& n : notes) fmt::print(stderr, "refinery: note: {}\n", n.str());
    return graph;
  }
  if (*format == ModelFormat::Nir) {
    std::vector<Diag> notes;
    auto graph = frontends::import_nir(file, {.notes = &notes});
    if (graph)
      for (const Diag& n : notes) fmt::print(stderr, "refinery: warning: {}\n", n.str());
    return graph;
  }
  return ir::read_ir_file(file);
}

Expected<void> save_model(const ir::Graph& graph, const std::filesystem::path& file) {
  auto format = format_of(file);
  if (!format) return std::unexpected(format.error());
  if (*format == ModelFormat::Onnx) return frontends::export_onnx(graph, file);
  if (*format == ModelFormat::Nir) return frontends::export_nir(graph, file);
  return ir::write_ir_file(graph, file);
}

}  // namespace refinery::cli
