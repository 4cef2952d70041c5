// Which models a batch runs: model files, folders (searched recursively for
// .onnx and .nir) and manifests (one path per line), each model with the
// relative name its outputs get under OUT_DIR/<target>/.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "ir/diag.h"

namespace refinery::batch {

struct ModelInput {
  std::filesystem::path path;
  // The model's path relative to the folder it was found in, prefixed with
  // that folder's name ("zoo/mlp.onnx"), or its file name. Unique: a second
  // model with the same name becomes "mlp~2.onnx", in input order.
  std::string name;
};

// Inputs in the order given; a folder's models sorted by path. A model met
// twice (the same file by any path) is kept once; files under `exclude` (the
// output folder) are skipped. A manifest's relative paths are relative to the
// manifest's folder; blank lines and lines starting with '#' are skipped.
Expected<std::vector<ModelInput>> discover_models(const std::vector<std::string>& inputs,
                                                  const std::filesystem::path& exclude = {});

}  // namespace refinery::batch
