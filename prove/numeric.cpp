#include "prove/numeric.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "runtime/interpreter.h"

namespace refinery::prove {

using rules::ValueCond;

std::string numeric_check(const Instance& inst, uint64_t seed, bool& skipped) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f), pos(0.5f, 1.5f);
  std::vector<ir::Tensor> inputs;
  for (size_t i = 0; i < inst.inputs.size(); ++i) {
    const ir::Value& v = inst.lhs.value(inst.lhs.inputs()[i]);
    int64_t n = v.type.shape.num_elements().value_or(0);
    std::vector<float> data(static_cast<size_t>(n));
    for (auto& x : data) {
      ValueCond c = inst.input_conds[i];
      if (has(c, ValueCond::Positive) || has(c, ValueCond::NonNegative))
        x = pos(rng);
      else if (has(c, ValueCond::Nonzero))
        x = pos(rng) * (u(rng) < 0 ? -1.0f : 1.0f);
      else
        x = u(rng);
    }
    inputs.push_back(ir::Tensor::from_values<float>(ir::DType::f32, v.type.shape.sizes(), data));
  }
  auto a = runtime::run(inst.lhs, inputs);
  if (!a) {
    skipped = true;
    return "left side: " + a.error().str();
  }
  auto b = runtime::run(inst.rhs, inputs);
  if (!b) {
    skipped = true;
    return "right side: " + b.error().str();
  }
  for (size_t o = 0; o < a->size(); ++o) {
    const ir::Tensor& x = (*a)[o];
    const ir::Tensor& y = (*b)[o];
    if (x.numel() != y.numel()) return fmt::format("output {} has {} and {} elements", o, x.numel(), y.numel());
    for (int64_t k = 0; k < x.numel(); ++k) {
      double p = x.as_double(k), q = y.as_double(k);
      if (std::isnan(p) && std::isnan(q)) continue;
      if (!(std::abs(p - q) <= 1e-4 + 1e-3 * std::max(std::abs(p), std::abs(q))))
        return fmt::format("output {} element {}: {} vs {}", o, k, p, q);
    }
  }
  return "";
}

}  // namespace refinery::prove
