// Element types of tensors, with their ONNX codes and textual names.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace refinery::ir {

enum class DType : uint8_t {
  f32,
  f16,
  bf16,
  f64,
  i64,
  i32,
  i16,
  i8,
  u8,
  u16,
  u32,
  u64,
  boolean,
};

inline constexpr int kNumDTypes = 13;

std::string_view dtype_name(DType t);  // "f32", "bool", ...
std::optional<DType> dtype_from_name(std::string_view name);
size_t dtype_size(DType t);  // bytes per element
int dtype_to_onnx(DType t);  // TensorProto::DataType
std::optional<DType> dtype_from_onnx(int onnx_code);
bool is_float(DType t);
bool is_integer(DType t);  // signed or unsigned, not bool
bool is_signed(DType t);

}  // namespace refinery::ir
