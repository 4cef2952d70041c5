#include "ir/shape.h"

#include <fmt/format.h>

namespace refinery::ir {

std::string Dim::str() const {
  if (is_static()) return std::to_string(size_);
  if (is_symbol()) return fmt::format("\"{}\"", symbol_);
  return "?";
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

std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

}  // namespace refinery::ir
