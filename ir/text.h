// The textual IR: an SSA listing that prints and parses back to the identical
// graph. The format is specified in docs/ir.md; in short:
//
//   graph @main(%x: tensor<"N"x784xf32>) attributes {ir_version = 8, opsets = {"" = 17}} {
//     %w = const blob<0> : tensor<256x784xf32>
//     %b = const dense<[0.5, -1.0]> : tensor<2xf32>
//     %1 = gemm(%x, %w, %b) {transB = 1} : tensor<"N"x256xf32> loc("/fc1/Gemm")
//     %2 = relu(%1) : tensor<"N"x256xf32>
//     return %2
//   }
//
// Constants of more than kInlineElements elements are stored in a sidecar
// weights file (raw bytes, `blob<offset>`), or inline as hex when no sidecar is
// wanted.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

#include "ir/diag.h"
#include "ir/graph.h"

namespace refinery::ir {

inline constexpr int64_t kInlineElements = 16;

enum class WeightsMode {
  Hex,    // large constants inline as hex<"..."> (self-contained text)
  Blob,   // large constants in a sidecar file, referenced as blob<offset>
  Elide,  // large constants printed as elided<...> (for display; does not parse)
};

struct PrintOptions {
  WeightsMode weights = WeightsMode::Hex;
};

// Prints the graph. With WeightsMode::Blob, the sidecar bytes are appended to
// `*blob` (offsets are positions in it).
std::string print_graph(const Graph& graph, const PrintOptions& options = {}, std::string* blob = nullptr);

// Parses a graph. `file` is used in messages ("file:line:col: message") and,
// for blob<> constants, the sidecar is read from `file` + ".bin".
Expected<Graph> parse_graph(std::string_view text, const std::string& file = "<input>");

// Reads and parses a .ir file (and its sidecar .ir.bin when it has one).
Expected<Graph> read_ir_file(const std::filesystem::path& file);
// Writes a .ir file (and its sidecar when a constant is large), atomically.
Expected<void> write_ir_file(const Graph& graph, const std::filesystem::path& file);

// Structural equality: names, types, attributes, constant bytes, node order.
// Returns an empty string when equal, else the first difference.
std::string graph_difference(const Graph& a, const Graph& b);

}  // namespace refinery::ir
