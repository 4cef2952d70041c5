// Node attributes: a small sorted map from name to value. Floats are float32
// as in ONNX, so they print and round-trip exactly. Kinds Refinery does not
// model (subgraphs, sparse tensors, type protos) are kept as opaque bytes so
// that unknown ops still pass through unchanged.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ir/tensor.h"

namespace refinery::ir {

// A serialized ONNX AttributeProto of a kind Refinery keeps but does not read.
struct OpaqueAttr {
  int onnx_kind = 0;  // onnx::AttributeProto::AttributeType
  std::string bytes;
  friend bool operator==(const OpaqueAttr&, const OpaqueAttr&) = default;
};

using AttrValue = std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>,
                               std::vector<std::string>, TensorRef, OpaqueAttr>;

enum class AttrKind : uint8_t { Int, Float, String, Ints, Floats, Strings, Tensor, Opaque };

AttrKind attr_kind(const AttrValue& v);
std::string_view attr_kind_name(AttrKind k);
bool attr_equal(const AttrValue& a, const AttrValue& b);  // tensors compared by bytes

class Attributes {
 public:
  using Entry = std::pair<std::string, AttrValue>;

  void set(std::string name, AttrValue value);
  bool has(std::string_view name) const { return find(name) != nullptr; }
  const AttrValue* find(std::string_view name) const;
  void erase(std::string_view name);

  // Typed getters; the fallback is returned when the attribute is absent.
  int64_t get_int(std::string_view name, int64_t fallback) const;
  float get_float(std::string_view name, float fallback) const;
  std::string get_string(std::string_view name, std::string fallback) const;
  std::vector<int64_t> get_ints(std::string_view name, std::vector<int64_t> fallback = {}) const;
  std::optional<std::vector<int64_t>> maybe_ints(std::string_view name) const;
  std::vector<float> get_floats(std::string_view name, std::vector<float> fallback = {}) const;
  TensorRef get_tensor(std::string_view name) const;

  const std::vector<Entry>& entries() const { return entries_; }  // sorted by name
  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  friend bool operator==(const Attributes& a, const Attributes& b);

 private:
  std::vector<Entry> entries_;
};

}  // namespace refinery::ir
