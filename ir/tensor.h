// Constant tensors (weights, initializers). The bytes are immutable and shared:
// a graph refers to a constant by reference and never copies it per use
// (ARCHITECTURE.md, decision 5). Storage may be owned memory or a mapped file.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace refinery::ir {

class Tensor {
 public:
  Tensor() = default;
  // Takes ownership of `bytes`; its size must be numel(dims) * dtype_size(dtype).
  Tensor(DType dtype, std::vector<int64_t> dims, std::vector<std::byte> bytes);
  // Refers to memory kept alive by `owner` (e.g. a mapped external-data file).
  Tensor(DType dtype, std::vector<int64_t> dims, std::shared_ptr<const void> owner, std::span<const std::byte> bytes);

  template <class T>
  static Tensor from_values(DType dtype, std::vector<int64_t> dims, const std::vector<T>& values);
  static Tensor scalar_f32(float v) { return from_values<float>(DType::f32, {}, {v}); }
  static Tensor vector_i64(const std::vector<int64_t>& v) {
    return from_values<int64_t>(DType::i64, {static_cast<int64_t>(v.size())}, v);
  }

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t numel() const;
  std::span<const std::byte> bytes() const { return bytes_; }
  const void* data() const { return bytes_.data(); }

  // Element i converted to double / int64 (for small shape tensors, attributes,
  // printing). Valid for every dtype.
  double as_double(int64_t i) const;
  int64_t as_int(int64_t i) const;
  std::vector<int64_t> to_int_vector() const;

  bool bitwise_equal(const Tensor& other) const;
  uint64_t hash() const;  // of dtype, dims and bytes

 private:
  DType dtype_ = DType::f32;
  std::vector<int64_t> dims_;
  std::shared_ptr<const void> owner_;
  std::span<const std::byte> bytes_;
};

using TensorRef = std::shared_ptr<const Tensor>;

template <class T>
Tensor Tensor::from_values(DType dtype, std::vector<int64_t> dims, const std::vector<T>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return Tensor(dtype, std::move(dims), std::move(bytes));
}

// Half-precision conversions (IEEE binary16 and bfloat16), bit-exact.
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bf16_to_float(uint16_t h);
uint16_t float_to_bf16(float f);

}  // namespace refinery::ir
