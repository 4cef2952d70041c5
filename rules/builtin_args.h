// Internal to rules/: reading a builtin's resolved arguments (builtins.h's
// ArgVal), shared by the conditions (conditions.cpp) and the lets
// (lets.cpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/shape.h"
#include "rules/builtins.h"

namespace refinery::rules::args {

inline const ir::Shape* shape(const ArgVal& a) { return a.tensor ? &a.tensor->type.shape : nullptr; }

inline std::optional<int64_t> as_int(const ArgVal& a) {
  if (!a.value) return std::nullopt;
  if (auto* i = std::get_if<int64_t>(&*a.value)) return *i;
  if (auto* f = std::get_if<float>(&*a.value)) return static_cast<int64_t>(*f);
  return std::nullopt;
}

inline std::optional<std::vector<int64_t>> as_ints(const ArgVal& a) {
  if (a.tensor) return a.tensor->ints;
  if (!a.value) return std::nullopt;
  if (auto* v = std::get_if<std::vector<int64_t>>(&*a.value)) return *v;
  return std::nullopt;
}

// The entries of an integer constant of any length: `as_ints` reads a
// tensor's `ints`, which the rule compiler fills for small constants only
// (64 entries), where a channel selection can hold hundreds.
inline std::optional<std::vector<int64_t>> as_index_list(const ArgVal& a) {
  if (auto v = as_ints(a)) return v;
  if (a.tensor && a.tensor->constant && ir::is_integer(a.tensor->constant->dtype()))
    return a.tensor->constant->to_int_vector();
  return std::nullopt;
}

// The contents of a small integer tensor as dims (symbolic ones included), when known.
inline std::optional<std::vector<ir::Dim>> as_dims(const ArgVal& a) {
  if (!a.tensor) return std::nullopt;
  if (a.tensor->dims) return *a.tensor->dims;
  if (!a.tensor->ints) return std::nullopt;
  std::vector<ir::Dim> v;
  for (int64_t i : *a.tensor->ints) v.push_back(ir::Dim::integer(i));
  return v;
}

// The elements of a constant as doubles (nullopt when not a constant).
inline std::optional<std::vector<double>> values(const ArgVal& a) {
  if (!a.tensor || !a.tensor->constant) return std::nullopt;
  std::vector<double> v(static_cast<size_t>(a.tensor->constant->numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = a.tensor->constant->as_double(static_cast<int64_t>(i));
  return v;
}

inline std::optional<int64_t> axis_of(const ArgVal& axis, const ArgVal& x) {
  auto a = as_int(axis);
  if (!a || !shape(x)) return std::nullopt;
  return ir::normalize_axis(*a, shape(x)->rank());
}

// A constant of one element as a float, when it is finite and exact in
// binary32 (an attribute value read from the graph).
inline std::optional<float> exact_f32_scalar(const ArgVal& a) {
  auto v = values(a);
  if (!v || v->size() != 1 || !std::isfinite((*v)[0])) return std::nullopt;
  float f = static_cast<float>((*v)[0]);
  if (static_cast<double>(f) != (*v)[0]) return std::nullopt;
  return f;
}

}  // namespace refinery::rules::args
