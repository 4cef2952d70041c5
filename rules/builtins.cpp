// The rule language's literal values (equality, printing, as tensors) and
// the resolution of a builtin's arguments; the builtins themselves are in
// conditions.cpp and lets.cpp.
#include "rules/builtins.h"

#include <fmt/format.h>

namespace refinery::rules {

bool int_position(ir::Op op, size_t i) { return ir::op_info(op).takes_int_input(i); }

bool literal_equal(const Literal& a, const Literal& b) {
  auto num = [](const Literal& v) -> std::optional<double> {
    if (auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
    if (auto* f = std::get_if<float>(&v)) return static_cast<double>(*f);
    return std::nullopt;
  };
  if (auto x = num(a), y = num(b); x && y) return *x == *y;
  return ir::attr_equal(a, b);
}

std::string literal_str(const Literal& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>)
          return std::to_string(x);
        else if constexpr (std::is_same_v<T, float>)
          return fmt::format("{}", x);
        else if constexpr (std::is_same_v<T, std::string>)
          return "\"" + x + "\"";
        else if constexpr (std::is_same_v<T, std::vector<int64_t>> || std::is_same_v<T, std::vector<float>>)
          return fmt::format("[{}]", fmt::join(x, " "));
        else
          return "<value>";
      },
      v);
}

ir::Tensor literal_tensor(const Literal& v, bool int_scalar) {
  if (auto* i = std::get_if<int64_t>(&v)) {
    if (int_scalar) return ir::Tensor::from_values<int64_t>(ir::DType::i64, {}, {*i});
    return ir::Tensor::scalar_f32(static_cast<float>(*i));
  }
  if (auto* f = std::get_if<float>(&v)) return ir::Tensor::scalar_f32(*f);
  if (auto* l = std::get_if<std::vector<int64_t>>(&v)) return ir::Tensor::vector_i64(*l);
  if (auto* l = std::get_if<std::vector<float>>(&v))
    return ir::Tensor::from_values<float>(ir::DType::f32, {static_cast<int64_t>(l->size())}, *l);
  return ir::Tensor::scalar_f32(0);
}

std::vector<ArgVal> resolve(const Env& env, std::span<const Arg> args) {
  std::vector<ArgVal> out;
  for (const Arg& a : args) {
    ArgVal v;
    if (!a.is_var) {
      v.value = a.literal;
    } else if (auto t = env.tensors.find(a.var); t != env.tensors.end()) {
      v.tensor = &t->second;
    } else if (auto at = env.attrs.find(a.var); at != env.attrs.end()) {
      v.value = at->second;
    }
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace refinery::rules
