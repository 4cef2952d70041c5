// Crossing the boundary: ir::Tensor <-> at::Tensor without copies where the
// bytes can be shared, and the dtype mapping between the two.
#include <cstring>
#include <functional>

#include "runtime/aten.h"

namespace refinery::runtime {

at::ScalarType storage_type(ir::DType t) {
  switch (t) {
    case ir::DType::f32: return at::kFloat;
    case ir::DType::f16: return at::kHalf;
    case ir::DType::bf16: return at::kBFloat16;
    case ir::DType::f64: return at::kDouble;
    case ir::DType::i64: return at::kLong;
    case ir::DType::i32: return at::kInt;
    case ir::DType::i16: return at::kShort;
    case ir::DType::i8: return at::kChar;
    case ir::DType::u8: return at::kByte;
    case ir::DType::u16: return at::kInt;
    case ir::DType::u32: return at::kLong;
    case ir::DType::u64: return at::kLong;
    case ir::DType::boolean: return at::kBool;
  }
  return at::kFloat;
}

std::optional<ir::DType> ir_dtype(at::ScalarType s, std::optional<ir::DType> declared) {
  if (declared && storage_type(*declared) == s) return declared;
  switch (s) {
    case at::kFloat: return ir::DType::f32;
    case at::kHalf: return ir::DType::f16;
    case at::kBFloat16: return ir::DType::bf16;
    case at::kDouble: return ir::DType::f64;
    case at::kLong: return ir::DType::i64;
    case at::kInt: return ir::DType::i32;
    case at::kShort: return ir::DType::i16;
    case at::kChar: return ir::DType::i8;
    case at::kByte: return ir::DType::u8;
    case at::kBool: return ir::DType::boolean;
    default: return std::nullopt;
  }
}

namespace {

// Unsigned types wider than ATen knows: widen into their storage type.
template <class From, class To>
at::Tensor widen(const ir::Tensor& t, at::ScalarType storage) {
  at::Tensor out = at::empty(t.dims(), at::TensorOptions().dtype(storage));
  auto* dst = static_cast<To*>(out.data_ptr());
  const std::byte* src = t.bytes().data();
  for (int64_t i = 0; i < t.numel(); ++i) {
    From v;
    std::memcpy(&v, src + i * static_cast<int64_t>(sizeof(From)), sizeof(From));
    dst[i] = static_cast<To>(v);
  }
  return out;
}

template <class Storage, class To>
ir::Tensor narrow_unsigned(const at::Tensor& t, ir::DType dtype) {
  at::Tensor c = t.contiguous();
  const auto* src = static_cast<const Storage*>(c.data_ptr());
  std::vector<std::byte> bytes(static_cast<size_t>(c.numel()) * sizeof(To));
  for (int64_t i = 0; i < c.numel(); ++i) {
    auto v = static_cast<To>(src[i]);
    std::memcpy(bytes.data() + i * static_cast<int64_t>(sizeof(To)), &v, sizeof(To));
  }
  return ir::Tensor(dtype, c.sizes().vec(), std::move(bytes));
}

at::Tensor wrap(const ir::Tensor& t, bool* copied, std::function<void(void*)> keep_alive) {
  if (copied) *copied = false;
  at::ScalarType storage = storage_type(t.dtype());
  if (t.dtype() == ir::DType::u16 || t.dtype() == ir::DType::u32) {
    if (copied) *copied = true;
    return t.dtype() == ir::DType::u16 ? widen<uint16_t, int32_t>(t, storage) : widen<uint32_t, int64_t>(t, storage);
  }
  if (t.numel() == 0) return at::empty(t.dims(), at::TensorOptions().dtype(storage));
  // ATen wants a mutable pointer; the interpreter never writes into inputs.
  void* data = const_cast<std::byte*>(t.bytes().data());
  return at::from_blob(data, t.dims(), std::move(keep_alive), at::TensorOptions().dtype(storage));
}

}  // namespace

at::Tensor to_aten(const ir::TensorRef& t, bool* copied) {
  return wrap(*t, copied, [keep = t](void*) {});
}

at::Tensor to_aten_borrowed(const ir::Tensor& t, bool* copied) {
  return wrap(t, copied, [](void*) {});
}

at::Tensor cast_to(const at::Tensor& t, ir::DType dtype) {
  at::Tensor r = t.to(storage_type(dtype));
  if (dtype == ir::DType::u16) r = at::bitwise_and(r, 0xFFFF);
  if (dtype == ir::DType::u32) r = at::bitwise_and(r, int64_t{0xFFFFFFFF});
  return r;
}

ir::Tensor from_aten(const at::Tensor& t, ir::DType dtype) {
  at::Tensor s = t.scalar_type() == storage_type(dtype) ? t : t.to(storage_type(dtype));
  if (dtype == ir::DType::u16) return narrow_unsigned<int32_t, uint16_t>(s, dtype);
  if (dtype == ir::DType::u32) return narrow_unsigned<int64_t, uint32_t>(s, dtype);
  // Share the ATen buffer: the ir::Tensor keeps the at::Tensor alive.
  auto holder = std::make_shared<const at::Tensor>(s.contiguous());
  std::span<const std::byte> bytes(static_cast<const std::byte*>(holder->data_ptr()),
                                   static_cast<size_t>(holder->nbytes()));
  if (holder->numel() == 0) bytes = {};
  return ir::Tensor(dtype, holder->sizes().vec(), holder, bytes);
}

std::vector<int64_t> int_values(const at::Tensor& t) {
  at::Tensor c = t.to(at::kLong).contiguous();
  const auto* p = c.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}

std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

bool is_low_precision(const at::Tensor& t) { return t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16; }

at::Tensor upcast(const at::Tensor& t) { return is_low_precision(t) ? t.to(at::kFloat) : t; }

at::Tensor restore(const at::Tensor& result, const at::Tensor& like) {
  return result.scalar_type() == like.scalar_type() ? result : result.to(like.scalar_type());
}

}  // namespace refinery::runtime
