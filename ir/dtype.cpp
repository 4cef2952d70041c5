#include "ir/dtype.h"

#include <array>

namespace refinery::ir {
namespace {

struct DTypeInfo {
  DType type;
  std::string_view name;
  size_t size;
  int onnx;  // onnx::TensorProto_DataType
};

constexpr std::array<DTypeInfo, kNumDTypes> kInfo{{
    {DType::f32, "f32", 4, 1},
    {DType::f16, "f16", 2, 10},
    {DType::bf16, "bf16", 2, 16},
    {DType::f64, "f64", 8, 11},
    {DType::i64, "i64", 8, 7},
    {DType::i32, "i32", 4, 6},
    {DType::i16, "i16", 2, 5},
    {DType::i8, "i8", 1, 3},
    {DType::u8, "u8", 1, 2},
    {DType::u16, "u16", 2, 4},
    {DType::u32, "u32", 4, 12},
    {DType::u64, "u64", 8, 13},
    {DType::boolean, "bool", 1, 9},
}};

const DTypeInfo& info(DType t) { return kInfo[static_cast<size_t>(t)]; }

}  // namespace

std::string_view dtype_name(DType t) { return info(t).name; }
size_t dtype_size(DType t) { return info(t).size; }
int dtype_to_onnx(DType t) { return info(t).onnx; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& i : kInfo)
    if (i.name == name) return i.type;
  return std::nullopt;
}

std::optional<DType> dtype_from_onnx(int code) {
  for (const auto& i : kInfo)
    if (i.onnx == code) return i.type;
  return std::nullopt;
}

bool is_float(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::f64; }
bool is_integer(DType t) { return !is_float(t) && t != DType::boolean; }
bool is_signed(DType t) {
  return is_float(t) || t == DType::i64 || t == DType::i32 || t == DType::i16 || t == DType::i8;
}

}  // namespace refinery::ir
