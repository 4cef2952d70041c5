#include "ir/op.h"

#include <unordered_map>

#include "ir/ops/registry.h"

namespace refinery::ir {
namespace {

struct Names {
  std::string_view name, onnx;
};

constexpr std::array<Names, kNumOps> kNames{{
#define OP(e, name, onnx) {name, onnx},
#include "ir/ops.def"
#undef OP
    {"opaque", ""},
}};

ops::Result infer_opaque(InferContext&) { return {}; }

ops::Table build_table() {
  ops::Table t;
  ops::register_elementwise(t);
  ops::register_linear(t);
  ops::register_nn(t);
  ops::register_reduce(t);
  ops::register_layout(t);
  ops::register_shape_ops(t);
  ops::register_spiking(t);
  ops::define(t, OpInfo{.op = Op::Opaque, .min_inputs = 0, .max_inputs = -1, .min_outputs = 0,
                        .max_outputs = -1, .infer = infer_opaque});
  return t;
}

const ops::Table& table() {
  static const ops::Table t = build_table();
  return t;
}

}  // namespace

namespace ops {
void define(Table& t, OpInfo info) {
  size_t i = static_cast<size_t>(info.op);
  info.name = kNames[i].name;
  info.onnx_name = kNames[i].onnx;
  t[i] = std::move(info);
}
}  // namespace ops

const OpInfo& op_info(Op op) { return table()[static_cast<size_t>(op)]; }
std::string_view op_name(Op op) { return kNames[static_cast<size_t>(op)].name; }

std::optional<Op> op_from_name(std::string_view ir_name) {
  static const auto index = [] {
    std::unordered_map<std::string_view, Op> m;
    for (int i = 0; i < kNumOps - 1; ++i) m.emplace(kNames[static_cast<size_t>(i)].name, static_cast<Op>(i));
    return m;
  }();
  auto it = index.find(ir_name);
  if (it == index.end()) return std::nullopt;
  return it->second;
}

std::optional<Op> op_from_onnx(std::string_view domain, std::string_view op_type) {
  if (!domain.empty() && domain != "ai.onnx") return std::nullopt;
  static const auto index = [] {
    std::unordered_map<std::string_view, Op> m;
    for (int i = 0; i < kNumOps - 1; ++i) m.emplace(kNames[static_cast<size_t>(i)].onnx, static_cast<Op>(i));
    return m;
  }();
  auto it = index.find(op_type);
  if (it == index.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> op_table_problems() {
  std::vector<std::string> problems;
  for (int i = 0; i < kNumOps; ++i) {
    const OpInfo& info = table()[static_cast<size_t>(i)];
    if (info.infer == nullptr || static_cast<int>(info.op) != i)
      problems.push_back(fmt::format("op '{}' has no registered entry", kNames[static_cast<size_t>(i)].name));
  }
  return problems;
}

std::optional<std::vector<int64_t>> InferContext::ints(size_t i) const {
  if (!has_input(i)) return std::nullopt;
  if (inputs[i].constant != nullptr) return inputs[i].constant->to_int_vector();
  if (inputs[i].known != nullptr) {
    std::vector<int64_t> out;
    for (const Dim& d : *inputs[i].known) {
      if (!d.is_static()) return std::nullopt;
      out.push_back(d.size());
    }
    return out;
  }
  return std::nullopt;
}

std::optional<std::vector<Dim>> InferContext::dims_value(size_t i) const {
  if (!has_input(i)) return std::nullopt;
  if (inputs[i].known != nullptr) return *inputs[i].known;
  if (inputs[i].constant != nullptr && is_integer(inputs[i].constant->dtype()) &&
      inputs[i].constant->numel() <= 64) {
    std::vector<Dim> out;
    for (int64_t v : inputs[i].constant->to_int_vector()) out.emplace_back(v);
    return out;
  }
  return std::nullopt;
}

}  // namespace refinery::ir
