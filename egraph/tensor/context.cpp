#include "egraph/tensor/context.h"

#include "egraph/hash.h"
#include "egraph/tensor/tensor_node.h"

namespace refinery::egraph::tensor {

bool NodeAttrs::operator==(const NodeAttrs& o) const {
  return output == o.output && num_outputs == o.num_outputs && present == o.present && domain == o.domain &&
         op_type == o.op_type && declared == o.declared && attrs == o.attrs;
}

namespace {

std::uint64_t hash_bytes(std::string_view s) {
  std::uint64_t h = 1469598103934665603ull;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

std::uint64_t hash_attr(const ir::AttrValue& v) {
  return std::visit(
      [](const auto& x) -> std::uint64_t {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>)
          return static_cast<std::uint64_t>(x);
        else if constexpr (std::is_same_v<T, float>)
          return std::bit_cast<std::uint32_t>(x);
        else if constexpr (std::is_same_v<T, std::string>)
          return hash_bytes(x);
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          std::uint64_t h = x.size();
          for (int64_t i : x) h = hash_combine(h, static_cast<std::uint64_t>(i));
          return h;
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          std::uint64_t h = x.size();
          for (float f : x) h = hash_combine(h, std::bit_cast<std::uint32_t>(f));
          return h;
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          std::uint64_t h = x.size();
          for (const auto& s : x) h = hash_combine(h, hash_bytes(s));
          return h;
        } else if constexpr (std::is_same_v<T, ir::TensorRef>) {
          return x ? x->hash() : 0;
        } else {
          return hash_combine(static_cast<std::uint64_t>(x.onnx_kind), hash_bytes(x.bytes));
        }
      },
      v);
}

}  // namespace

std::uint64_t NodeAttrs::hash() const {
  std::uint64_t h = hash_combine(output, num_outputs);
  for (bool p : present) h = hash_combine(h, p);
  h = hash_combine(h, hash_bytes(domain));
  h = hash_combine(h, hash_bytes(op_type));
  if (declared) h = hash_combine(h, hash_bytes(declared->str()));
  for (const auto& [name, value] : attrs.entries())
    h = hash_combine(hash_combine(h, hash_bytes(name)), hash_attr(value));
  return hash_finalize(h);
}

std::uint32_t TensorContext::intern(NodeAttrs attrs) {
  std::uint64_t h = attrs.hash();
  auto [first, last] = attr_index_.equal_range(h);
  for (auto it = first; it != last; ++it)
    if (attrs_[it->second] == attrs) return it->second;
  auto id = static_cast<std::uint32_t>(attrs_.size());
  attrs_.push_back(std::move(attrs));
  attr_index_.emplace(h, id);
  return id;
}

std::uint32_t TensorContext::add_input(InputInfo in) {
  inputs_.push_back(std::move(in));
  return static_cast<std::uint32_t>(inputs_.size() - 1);
}

std::uint32_t TensorContext::add_constant(ConstantInfo c) {
  constants_.push_back(std::move(c));
  return static_cast<std::uint32_t>(constants_.size() - 1);
}

std::string TensorNode::op_string() const {
  if (op == kInputOp) return "input" + std::to_string(payload);
  if (op == kConstantOp) return "const" + std::to_string(payload);
  return std::string(ir::op_name(ir_op())) + "#" + std::to_string(payload);
}

const std::vector<bool>& TensorContext::zero_pairs(const ir::TensorRef& t) {
  auto it = zero_pairs_.find(t.get());
  if (it != zero_pairs_.end()) return it->second.second;
  std::vector<bool> z;
  if (t->dims().size() >= 2) {
    int64_t pairs = t->dims()[0] * t->dims()[1];
    int64_t per = pairs ? t->numel() / pairs : 0;
    z.assign(static_cast<size_t>(pairs), true);
    const float* f = t->dtype() == ir::DType::f32 ? static_cast<const float*>(t->data()) : nullptr;
    for (int64_t p = 0; p < pairs; ++p)
      for (int64_t e = 0; e < per; ++e)
        if ((f ? f[p * per + e] : t->as_double(p * per + e)) != 0) {
          z[static_cast<size_t>(p)] = false;
          break;
        }
  }
  return zero_pairs_.emplace(t.get(), std::make_pair(t, std::move(z))).first->second.second;
}

}  // namespace refinery::egraph::tensor
