#include "ir/shape.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace refinery::ir {

std::string Dim::str() const {
  if (is_integer()) return std::to_string(size_);
  if (is_symbol()) return fmt::format("\"{}\"", symbol_);
  return "?";
}

std::optional<Dim> refine(const Dim& a, const Dim& b) {
  if (a.is_integer() && b.is_integer()) return a.value() == b.value() ? std::optional<Dim>(a) : std::nullopt;
  if (a.is_unknown() && b.is_unknown()) return a.is_min() ? a : b;  // a min says more than "?"
  if (b.is_unknown()) return a;
  if (a.is_unknown()) return b;
  if (a.is_negative() || b.is_negative()) return std::nullopt;  // a symbol names a size, never negative
  if (a.is_static()) return a;
  if (b.is_static()) return b;
  return a;  // two symbols: names of one size; a's stays
}

std::expected<TensorType, std::string> refine(const TensorType& a, const TensorType& b) {
  auto contradiction = [&](const char* what) {
    return std::unexpected(fmt::format("{} and {} differ in {}", a.str(), b.str(), what));
  };
  if (a.dtype != b.dtype) return contradiction("element type");
  if (!b.shape.ranked()) return a;
  if (!a.shape.ranked()) return b;
  if (a.shape.rank() != b.shape.rank()) return contradiction("rank");
  TensorType out = a;
  for (int64_t i = 0; i < a.shape.rank(); ++i) {
    auto d = refine(a.shape[i], b.shape[i]);
    if (!d) return std::unexpected(fmt::format("{} and {} differ in dim {}", a.str(), b.str(), i));
    out.shape[i] = std::move(*d);
  }
  return out;
}

std::expected<int64_t, ShapeError> element_count(std::span<const int64_t> dims) {
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 0)
      return std::unexpected(ShapeError{fmt::format("has a negative dimension {} (axis {})", dims[i], i)});
  if (std::find(dims.begin(), dims.end(), 0) != dims.end()) return 0;
  int64_t n = 1;
  bool past_limit = false;
  for (int64_t d : dims) {
    if (n > INT64_MAX / d)
      return std::unexpected(
          ShapeError{fmt::format("has dims [{}], whose element count overflows int64", fmt::join(dims, ", "))});
    n *= d;
    past_limit = past_limit || n > kMaxElements;
  }
  if (past_limit)
    return std::unexpected(ShapeError{
        fmt::format("has dims [{}]: more than 2^40 elements, Refinery's limit", fmt::join(dims, ", ")), true});
  return n;
}

std::optional<ShapeError> size_error(const Shape& shape) {
  std::vector<int64_t> sizes;
  for (const Dim& d : shape.dims())
    if (d.is_static()) sizes.push_back(d.size());
  if (auto count = element_count(sizes); !count) return count.error();
  return std::nullopt;
}

Shape Shape::of(const std::vector<int64_t>& sizes) {
  std::vector<Dim> dims;
  dims.reserve(sizes.size());
  for (int64_t s : sizes) dims.emplace_back(s);
  return Shape(std::move(dims));
}

bool Shape::is_static() const {
  if (!ranked_) return false;
  for (const auto& d : dims_)
    if (!d.is_static()) return false;
  return true;
}

std::optional<int64_t> Shape::num_elements() const {
  if (!is_static()) return std::nullopt;
  int64_t n = 1;
  for (const auto& d : dims_)
    if (d.size() == 0) return 0;  // before a product of the others could overflow
  for (const auto& d : dims_) n *= d.size();
  return n;
}

std::vector<int64_t> Shape::sizes() const {
  std::vector<int64_t> out;
  out.reserve(dims_.size());
  for (const auto& d : dims_) out.push_back(d.size());
  return out;
}

std::string Shape::str() const {
  if (!ranked_) return "*";
  std::string out;
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) out += 'x';
    out += dims_[i].str();
  }
  return out;
}

std::string TensorType::str() const {
  std::string s = shape.str();
  if (!s.empty()) s += 'x';
  return fmt::format("tensor<{}{}>", s, dtype_name(dtype));
}

__int128 window_count(__int128 in, __int128 begin, __int128 end, __int128 effective, __int128 stride, bool ceil_mode) {
  __int128 span = in + begin + end - effective;
  // floor or ceil of span / stride for a span of either sign
  __int128 out = (ceil_mode ? (span >= 0 ? (span + stride - 1) / stride : -(-span / stride))
                            : (span >= 0 ? span / stride : -((-span + stride - 1) / stride))) +
                 1;
  if (ceil_mode && out > 0 && (out - 1) * stride >= in + begin) --out;
  return out;
}

std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

}  // namespace refinery::ir
