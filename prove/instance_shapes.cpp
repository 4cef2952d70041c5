#include "prove/instance_shapes.h"

#include <algorithm>

#include <fmt/format.h>

namespace refinery::prove {

std::optional<std::string> undefined_on_empty(ir::Op op, const std::vector<Sizes>& ins, const ir::Attributes& attrs) {
  using ir::Op;
  if (ins.empty()) return std::nullopt;
  auto zero_from = [](const Sizes& s, size_t from) {
    return std::any_of(s.begin() + static_cast<int64_t>(std::min(from, s.size())), s.end(),
                       [](int64_t d) { return d == 0; });
  };
  switch (op) {
    case Op::ArgMax:
    case Op::ArgMin: {
      auto r = static_cast<int64_t>(ins[0].size());
      int64_t ax = ir::OpAttrs(op, attrs, r).get_int("axis");
      if (ax < 0) ax += r;
      if (ax >= 0 && ax < r && ins[0][static_cast<size_t>(ax)] == 0)
        return fmt::format("{} over an empty axis", ir::op_name(op));
      return std::nullopt;
    }
    case Op::Conv:
    case Op::ConvTranspose:
    case Op::NirConv1d:
    case Op::NirConv2d:
      if (zero_from(ins[0], 1) || (ins.size() > 1 && zero_from(ins[1], 0)))
        return fmt::format("{} over empty channels or spatial dims", ir::op_name(op));
      return std::nullopt;
    case Op::MaxPool:
    case Op::AveragePool:
    case Op::GlobalAveragePool:
    case Op::GlobalMaxPool:
    case Op::SumPool2d:
    case Op::AvgPool2d:
      if (zero_from(ins[0], 1)) return fmt::format("{} over empty channels or spatial dims", ir::op_name(op));
      return std::nullopt;
    default: return std::nullopt;
  }
}

bool broadcasts(const ir::Graph& g) {
  for (const ir::Node& n : g.nodes()) {
    if (!ir::op_info(n.op).elementwise || n.inputs.size() < 2 || n.outputs.empty()) continue;
    const ir::Shape& out = g.value(n.outputs[0]).type.shape;
    for (ir::ValueId in : n.inputs)
      if (in != ir::kNoValue && !(g.value(in).type.shape == out)) return true;
  }
  return false;
}

bool has_empty(const ir::Graph& g) {
  for (size_t v = 0; v < g.num_values(); ++v) {
    const ir::Shape& s = g.value(ir::ValueId{static_cast<uint32_t>(v)}).type.shape;
    if (s.num_elements() == 0) return true;
  }
  return false;
}

bool collapses(const ir::Graph& g) {
  for (const ir::Node& n : g.nodes()) {
    bool empty_in = std::any_of(n.inputs.begin(), n.inputs.end(), [&](ir::ValueId in) {
      return in != ir::kNoValue && g.value(in).type.shape.num_elements() == 0;
    });
    bool full_out = std::any_of(n.outputs.begin(), n.outputs.end(),
                                [&](ir::ValueId o) { return g.value(o).type.shape.num_elements() != 0; });
    if (empty_in && full_out) return true;
  }
  return false;
}

}  // namespace refinery::prove
