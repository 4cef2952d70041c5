#include "ir/tensor.h"

#include <bit>
#include <cassert>
#include <functional>
#include <stdexcept>
#include <string_view>

namespace refinery::ir {
namespace {

int64_t product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

template <class T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace

Tensor::Tensor(DType dtype, std::vector<int64_t> dims, std::vector<std::byte> bytes)
    : dtype_(dtype), dims_(std::move(dims)) {
  if (bytes.size() != static_cast<size_t>(product(dims_)) * dtype_size(dtype_))
    throw std::invalid_argument("Tensor: byte size does not match dtype and dims");
  auto owned = std::make_shared<const std::vector<std::byte>>(std::move(bytes));
  bytes_ = std::span<const std::byte>(owned->data(), owned->size());
  owner_ = std::move(owned);
}

Tensor::Tensor(DType dtype, std::vector<int64_t> dims, std::shared_ptr<const void> owner,
               std::span<const std::byte> bytes)
    : dtype_(dtype), dims_(std::move(dims)), owner_(std::move(owner)), bytes_(bytes) {
  if (bytes.size() != static_cast<size_t>(product(dims_)) * dtype_size(dtype_))
    throw std::invalid_argument("Tensor: byte size does not match dtype and dims");
}

int64_t Tensor::numel() const { return product(dims_); }

double Tensor::as_double(int64_t i) const {
  const std::byte* p = bytes_.data() + static_cast<size_t>(i) * dtype_size(dtype_);
  switch (dtype_) {
    case DType::f32: return load<float>(p);
    case DType::f16: return half_to_float(load<uint16_t>(p));
    case DType::bf16: return bf16_to_float(load<uint16_t>(p));
    case DType::f64: return load<double>(p);
    case DType::i64: return static_cast<double>(load<int64_t>(p));
    case DType::i32: return load<int32_t>(p);
    case DType::i16: return load<int16_t>(p);
    case DType::i8: return load<int8_t>(p);
    case DType::u8: return load<uint8_t>(p);
    case DType::u16: return load<uint16_t>(p);
    case DType::u32: return load<uint32_t>(p);
    case DType::u64: return static_cast<double>(load<uint64_t>(p));
    case DType::boolean: return load<uint8_t>(p) != 0;
  }
  return 0;
}

int64_t Tensor::as_int(int64_t i) const {
  const std::byte* p = bytes_.data() + static_cast<size_t>(i) * dtype_size(dtype_);
  switch (dtype_) {
    case DType::i64: return load<int64_t>(p);
    case DType::i32: return load<int32_t>(p);
    case DType::i16: return load<int16_t>(p);
    case DType::i8: return load<int8_t>(p);
    case DType::u8: return load<uint8_t>(p);
    case DType::u16: return load<uint16_t>(p);
    case DType::u32: return load<uint32_t>(p);
    case DType::u64: return static_cast<int64_t>(load<uint64_t>(p));
    case DType::boolean: return load<uint8_t>(p) != 0;
    default: return static_cast<int64_t>(as_double(i));
  }
}

std::vector<int64_t> Tensor::to_int_vector() const {
  std::vector<int64_t> out(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) out[static_cast<size_t>(i)] = as_int(i);
  return out;
}

bool Tensor::bitwise_equal(const Tensor& o) const {
  return dtype_ == o.dtype_ && dims_ == o.dims_ && bytes_.size() == o.bytes_.size() &&
         (bytes_.empty() || std::memcmp(bytes_.data(), o.bytes_.data(), bytes_.size()) == 0);
}

// The header mixed FNV-style; the bytes by the standard library's string
// hash, which reads them a word at a time (a byte-wise FNV made hashing a
// weight a visible part of optimize: rules/compile.cpp keys the constants it
// computes by this). Users compare with bitwise_equal on a hit: a collision
// costs a duplicate, never a wrong answer.
uint64_t Tensor::hash() const {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  mix(static_cast<uint64_t>(dtype_));
  for (int64_t d : dims_) mix(static_cast<uint64_t>(d));
  mix(std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(bytes_.data()), bytes_.size())));
  return h;
}

float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: renormalise
      int e = -1;
      do {
        ++e;
        man <<= 1;
      } while ((man & 0x400u) == 0);
      bits = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  return std::bit_cast<float>(bits);
}

uint16_t float_to_half(float f) {  // round to nearest even
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0));
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow to inf
  if (absx < 0x38800000u) {                                               // subnormal or zero in half
    float a = std::bit_cast<float>(absx);
    float scaled = a * 16777216.0f;  // 2^24: half subnormal unit
    uint32_t m = static_cast<uint32_t>(scaled);
    float rem = scaled - static_cast<float>(m);
    if (rem > 0.5f || (rem == 0.5f && (m & 1u))) ++m;
    return static_cast<uint16_t>(sign | m);
  }
  uint32_t mant = absx & 0x7fffffu;
  uint32_t exp = (absx >> 23) - 127 + 15;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

float bf16_to_float(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

uint16_t float_to_bf16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return static_cast<uint16_t>(x >> 16);
}

}  // namespace refinery::ir
