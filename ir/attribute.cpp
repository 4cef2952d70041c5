#include "ir/attribute.h"

#include <algorithm>

namespace refinery::ir {

AttrKind attr_kind(const AttrValue& v) { return static_cast<AttrKind>(v.index()); }

std::string_view attr_kind_name(AttrKind k) {
  switch (k) {
    case AttrKind::Int: return "int";
    case AttrKind::Float: return "float";
    case AttrKind::String: return "string";
    case AttrKind::Ints: return "ints";
    case AttrKind::Floats: return "floats";
    case AttrKind::Strings: return "strings";
    case AttrKind::Tensor: return "tensor";
    case AttrKind::Opaque: return "opaque";
  }
  return "?";
}

bool attr_equal(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (const auto* ta = std::get_if<TensorRef>(&a)) {
    const auto& tb = std::get<TensorRef>(b);
    if (!*ta || !tb) return *ta == tb;
    return (*ta)->bitwise_equal(*tb);
  }
  if (const auto* fa = std::get_if<float>(&a))  // bitwise, so NaN == NaN and -0 != 0
    return std::memcmp(fa, &std::get<float>(b), sizeof(float)) == 0;
  return a == b;
}

bool operator==(const Attributes& a, const Attributes& b) {
  if (a.entries_.size() != b.entries_.size()) return false;
  for (size_t i = 0; i < a.entries_.size(); ++i) {
    if (a.entries_[i].first != b.entries_[i].first) return false;
    if (!attr_equal(a.entries_[i].second, b.entries_[i].second)) return false;
  }
  return true;
}

void Attributes::set(std::string name, AttrValue value) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const Entry& e, const std::string& n) { return e.first < n; });
  if (it != entries_.end() && it->first == name) {
    it->second = std::move(value);
  } else {
    entries_.insert(it, Entry{std::move(name), std::move(value)});
  }
}

const AttrValue* Attributes::find(std::string_view name) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const Entry& e, std::string_view n) { return e.first < n; });
  if (it != entries_.end() && it->first == name) return &it->second;
  return nullptr;
}

void Attributes::erase(std::string_view name) {
  std::erase_if(entries_, [&](const Entry& e) { return e.first == name; });
}

int64_t Attributes::get_int(std::string_view name, int64_t fallback) const {
  const AttrValue* v = find(name);
  if (v == nullptr) return fallback;
  if (const auto* i = std::get_if<int64_t>(v)) return *i;
  return fallback;
}

float Attributes::get_float(std::string_view name, float fallback) const {
  const AttrValue* v = find(name);
  if (v == nullptr) return fallback;
  if (const auto* f = std::get_if<float>(v)) return *f;
  if (const auto* i = std::get_if<int64_t>(v)) return static_cast<float>(*i);
  return fallback;
}

std::string Attributes::get_string(std::string_view name, std::string fallback) const {
  const AttrValue* v = find(name);
  if (v == nullptr) return fallback;
  if (const auto* s = std::get_if<std::string>(v)) return *s;
  return fallback;
}

std::vector<int64_t> Attributes::get_ints(std::string_view name, std::vector<int64_t> fallback) const {
  return maybe_ints(name).value_or(std::move(fallback));
}

std::optional<std::vector<int64_t>> Attributes::maybe_ints(std::string_view name) const {
  const AttrValue* v = find(name);
  if (v == nullptr) return std::nullopt;
  if (const auto* i = std::get_if<std::vector<int64_t>>(v)) return *i;
  return std::nullopt;
}

std::vector<float> Attributes::get_floats(std::string_view name, std::vector<float> fallback) const {
  const AttrValue* v = find(name);
  if (v == nullptr) return fallback;
  if (const auto* f = std::get_if<std::vector<float>>(v)) return *f;
  return fallback;
}

TensorRef Attributes::get_tensor(std::string_view name) const {
  const AttrValue* v = find(name);
  if (v == nullptr) return nullptr;
  if (const auto* t = std::get_if<TensorRef>(v)) return *t;
  return nullptr;
}

}  // namespace refinery::ir
