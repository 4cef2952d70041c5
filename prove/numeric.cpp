#include "prove/numeric.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "runtime/interpreter.h"

namespace refinery::prove {

using rules::ValueCond;

std::string numeric_check(const Instance& inst, uint64_t seed, bool& skipped, std::vector<std::vector<double>>* drawn) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f), pos(0.5f, 1.5f);
  std::vector<ir::Tensor> inputs;
  for (size_t i = 0; i < inst.inputs.size(); ++i) {
    const ir::Value& v = inst.lhs.value(inst.lhs.inputs()[i]);
    int64_t n = v.type.shape.num_elements().value_or(0);
    const int64_t rows = v.type.shape.rank() >= 1 ? v.type.shape[0].size() : 1;
    std::vector<float> data(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
      float& x = data[static_cast<size_t>(k)];
      ValueCond c = inst.input_conds[i];
      const bool pruned = rules::verification_pruned_element(k, n, rows);
      if (has(c, ValueCond::Zero) || (pruned && has(c, ValueCond::ZeroPruned)))
        x = 0;
      else if (pruned && has(c, ValueCond::NonNegativePruned))
        x = pos(rng);
      else if (pruned && has(c, ValueCond::NonPositivePruned))
        x = -pos(rng);
      else if (has(c, ValueCond::Positive) || has(c, ValueCond::NonNegative))
        x = pos(rng);
      else if (has(c, ValueCond::Nonzero))
        x = pos(rng) * (u(rng) < 0 ? -1.0f : 1.0f);
      else
        x = u(rng);
    }
    if (has(inst.input_conds[i], ValueCond::Uniform) && !data.empty())
      std::fill(data.begin(), data.end(), data.front());
    if (drawn) drawn->emplace_back(data.begin(), data.end());
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
      if ((std::isnan(p) && std::isnan(q)) || p == q) continue;  // (the same infinity: an empty reduction's)
      if (!std::isfinite(p) || !std::isfinite(q) ||
          !(std::abs(p - q) <= 1e-4 + 1e-3 * std::max(std::abs(p), std::abs(q))))
        return fmt::format("output {} element {}: {} vs {}", o, k, p, q);
    }
  }
  return "";
}

Replay replay(const Instance& inst, std::vector<std::vector<double>> inputs, bool wide) {
  Replay r;
  r.wide = wide;
  std::vector<ir::Tensor> tensors;
  for (size_t i = 0; i < inst.inputs.size(); ++i) {
    const ir::Value& v = inst.lhs.value(inst.lhs.inputs()[i]);
    std::vector<float> data;
    // f32 inputs: the model's values rounded to binary32 (the graphs' input type); a wide run widens them
    for (double x : inputs[i]) data.push_back(static_cast<float>(x));
    for (size_t k = 0; k < data.size(); ++k) inputs[i][k] = data[k];
    tensors.push_back(ir::Tensor::from_values<float>(ir::DType::f32, v.type.shape.sizes(), data));
  }
  r.inputs = std::move(inputs);
  runtime::RunOptions options;
  options.wide_floats = wide;
  auto a = runtime::run(inst.lhs, tensors, options);
  if (!a) {
    r.error = "left side: " + a.error().str();
    return r;
  }
  auto b = runtime::run(inst.rhs, tensors, options);
  if (!b) {
    r.error = "right side: " + b.error().str();
    return r;
  }
  r.lhs = std::move(*a);
  r.rhs = std::move(*b);
  return r;
}

namespace {

// `digits` significant digits: 9 tell binary32 values apart (a rounding
// difference in the last bit shows), 6 are enough over the reals.
std::string nested(const std::vector<int64_t>& shape, const std::vector<double>& v, size_t dim, size_t& pos,
                   int digits) {
  if (dim == shape.size()) {
    double x = v[pos++];
    return std::isnan(x) ? "nan" : fmt::format("{:.{}g}", x, digits);  // a NaN's sign means nothing
  }
  std::vector<std::string> parts;
  for (int64_t i = 0; i < shape[dim]; ++i) parts.push_back(nested(shape, v, dim + 1, pos, digits));
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

std::string show(const std::string& name, const ir::Tensor& t, int digits) {
  std::vector<double> v;
  for (int64_t k = 0; k < t.numel(); ++k) v.push_back(t.as_double(k));
  return show_values(name, t.dims(), v, digits);
}

// Over every output element pair.
template <class F>
bool any_element(const Replay& r, F f) {
  for (size_t o = 0; o < r.lhs.size() && o < r.rhs.size(); ++o) {
    if (r.lhs[o].numel() != r.rhs[o].numel()) return true;
    for (int64_t k = 0; k < r.lhs[o].numel(); ++k)
      if (f(r.lhs[o].as_double(k), r.rhs[o].as_double(k))) return true;
  }
  return false;
}

}  // namespace

std::string show_values(const std::string& name, const std::vector<int64_t>& shape, const std::vector<double>& v,
                        int digits) {
  size_t pos = 0;
  return fmt::format("{} = {}", name, nested(shape, v, 0, pos, digits));
}

std::string Replay::describe(const Instance& inst) const {
  std::vector<std::string> lines;
  int digits = wide ? 6 : 9;
  for (size_t i = 0; i < inst.inputs.size(); ++i)
    lines.push_back(
        show_values(inst.inputs[i], inst.lhs.value(inst.lhs.inputs()[i]).type.shape.sizes(), inputs[i], digits));
  for (size_t o = 0; o < lhs.size(); ++o) {
    lines.push_back(show(lhs.size() > 1 ? fmt::format("lhs{}", o) : "lhs", lhs[o], digits));
    lines.push_back(show(lhs.size() > 1 ? fmt::format("rhs{}", o) : "rhs", rhs[o], digits));
  }
  lines.push_back(wide ? "(replayed in the interpreter, f64)" : "(replayed in the interpreter, f32)");
  return fmt::format("{}", fmt::join(lines, "\n"));
}

bool differs_over_reals(const Replay& r, bool& overflow) {
  overflow = false;
  return any_element(r, [&](double p, double q) {
    if (!std::isfinite(p) || !std::isfinite(q)) {
      overflow = true;
      return false;
    }
    return std::abs(p - q) > 1e-9 * (1 + std::max(std::abs(p), std::abs(q)));
  });
}

bool differs_in_class(const Replay& r) {
  auto cls = [](double x) { return std::isnan(x) ? 0 : std::isinf(x) ? (x > 0 ? 1 : 2) : 3; };
  return any_element(r, [&](double p, double q) { return cls(p) != cls(q); });
}

bool differs_in_bits(const Replay& r) {
  return any_element(r, [](double p, double q) {
    if (std::isnan(p) || std::isnan(q)) return std::isnan(p) != std::isnan(q);
    return p != q || std::signbit(p) != std::signbit(q);
  });
}

}  // namespace refinery::prove
