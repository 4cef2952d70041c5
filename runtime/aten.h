// Internal to runtime/: the one header that includes ATen. Kernel files and
// the interpreter include it; nothing outside runtime/ may (the torch include
// directories and libraries are PRIVATE to refinery_runtime).
#pragma once
#include <ATen/ATen.h>

#include <array>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ir/graph.h"

namespace refinery::runtime {

// What a kernel sees of one node: its attributes, its inputs as ATen tensors
// (undefined where an optional input is absent) and the declared types.
struct KernelCall {
  const ir::Graph& graph;
  const ir::Node& node;
  std::span<const at::Tensor> inputs;

  const ir::Attributes& attrs() const { return node.attrs; }
  // The attributes with the op table's defaults for those that are absent.
  ir::OpAttrs op_attrs() const {
    return ir::OpAttrs(node.op, node.attrs, inputs.empty() || !inputs[0].defined() ? -1 : inputs[0].dim());
  }
  size_t num_inputs() const { return inputs.size(); }
  size_t num_outputs() const { return node.outputs.size(); }
  bool has(size_t i) const { return i < inputs.size() && inputs[i].defined(); }
  const at::Tensor& in(size_t i) const { return inputs[i]; }
  ir::DType input_dtype(size_t i) const { return graph.value(node.inputs[i]).type.dtype; }
};

using KernelResult = std::expected<std::vector<at::Tensor>, std::string>;
using Kernel = KernelResult (*)(const KernelCall&);
using KernelTable = std::array<Kernel, ir::kNumOps>;

inline KernelResult one(at::Tensor t) { return std::vector<at::Tensor>{std::move(t)}; }
inline std::unexpected<std::string> kernel_error(std::string message) { return std::unexpected(std::move(message)); }

// Each family file fills the entries of its ops; interpreter.cpp calls them once.
void register_elementwise_kernels(KernelTable& t);
void register_linear_kernels(KernelTable& t);
void register_pool_kernels(KernelTable& t);
void register_norm_kernels(KernelTable& t);
void register_reduce_kernels(KernelTable& t);
void register_layout_kernels(KernelTable& t);
void register_shape_kernels(KernelTable& t);
void register_contrib_kernels(KernelTable& t);
const KernelTable& kernel_table();

// --- dtypes and conversions (convert.cpp) ---
// The ATen type that holds an IR dtype. ATen 1.13 has no u16/u32/u64: they
// live in the next wider signed type (u64 in i64, bit for bit).
at::ScalarType storage_type(ir::DType t);
// The IR dtype of an ATen tensor; `declared` decides for the wide-signed
// storage of unsigned types.
std::optional<ir::DType> ir_dtype(at::ScalarType s, std::optional<ir::DType> declared = {});
// Without a copy when ATen can use the bytes as they are (`copied` says).
at::Tensor to_aten(const ir::TensorRef& t, bool* copied = nullptr);
at::Tensor to_aten_borrowed(const ir::Tensor& t, bool* copied = nullptr);  // caller keeps `t` alive
ir::Tensor from_aten(const at::Tensor& t, ir::DType dtype);
// Converts to the storage of `dtype`, wrapping to the range of a narrow unsigned type.
at::Tensor cast_to(const at::Tensor& t, ir::DType dtype);

// --- helpers shared by kernels ---
std::vector<int64_t> int_values(const at::Tensor& t);  // a small integer tensor's contents
std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank);
bool is_low_precision(const at::Tensor& t);                            // f16 / bf16
at::Tensor upcast(const at::Tensor& t);                                // f16 / bf16 -> f32, others unchanged
at::Tensor restore(const at::Tensor& result, const at::Tensor& like);  // back to like's dtype

}  // namespace refinery::runtime
