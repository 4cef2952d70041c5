// ONNX import and export. Import accepts any model that ONNX's checker accepts
// at opset 13 to 17; ops Refinery does not know become opaque nodes that keep
// their domain, type and attributes. Export writes a model that passes the
// checker, atomically (temp file + rename).
#pragma once
#include <filesystem>
#include <string_view>
#include <vector>

#include "ir/diag.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace refinery::frontends {

struct OnnxImportOptions {
  bool infer_shapes = true;  // run Refinery's shape inference after import
  // A model whose default-domain opset is below 13 is first converted to
  // opset 13 with ONNX's own version converter (off by default: such a model
  // is an error naming its opset).
  bool upgrade_old_opset = false;
  // ONNX's checker; off to read a runtime's own graph (ONNX Runtime's
  // optimized model: its fused ops are in the default domain at opsets
  // ONNX does not define them in), which is then not given to ONNX's shape
  // inference either (it crashes on some): opaque results stay untyped.
  bool run_checker = true;
  // Where import says what it changed in a model it accepts (nodes out of
  // topological order, which it sorts); null: not said.
  std::vector<Diag>* notes = nullptr;
};

// Reads a model (and its external data, memory-mapped). Errors are one line
// naming the file and the node (or initializer / value) at fault: unreadable
// or corrupt file, default-domain opset outside 13..17, an undefined or twice
// defined value, a cycle, a checker failure, a shape inference failure.
Expected<ir::Graph> import_onnx(const std::filesystem::path& file, const OnnxImportOptions& options = {});

// Whether export can write `op` in a model of this default-domain opset:
// the opset defines it, or export writes it as older ops (docs/onnx.md,
// "Ops newer than the model's opset").
bool onnx_can_write(ir::Op op, int64_t opset);

struct OnnxExportOptions {
  // Tensors of at least this many bytes go to an external data file beside
  // the model when the model would otherwise pass protobuf's 2 GB limit.
  size_t external_threshold = 1024;
  // Use external data even for a small model (the threshold still applies).
  bool force_external = false;
};

// Writes `file` and, when external data is used, `<file name>.data` beside it.
// The model is checked with onnx::checker before anything is renamed into
// place; on any error nothing is left behind. Graph outputs and inputs keep
// their types (symbolic dims as dim_param); ranked intermediate values are
// written as value_info.
Expected<void> export_onnx(const ir::Graph& graph, const std::filesystem::path& file,
                           const OnnxExportOptions& options = {});

// A serialized onnx.TensorProto (the input_0.pb / output_0.pb files of ONNX's
// backend test data).
Expected<ir::Tensor> read_tensor_proto(const std::filesystem::path& file);

}  // namespace refinery::frontends
