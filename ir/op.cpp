#include "ir/op.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <unordered_map>

#include "ir/ops/registry.h"

namespace refinery::ir {
namespace {

struct Names {
  std::string_view name, onnx, domain;  // domain: "" for the default ONNX domain
};

constexpr std::array<Names, kNumOps> kNames{{
#define OP(e, name, onnx) {name, onnx, ""},
#define OP_IN(e, name, domain, onnx) {name, onnx, domain},
#include "ir/ops.def"
#undef OP_IN
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
  ops::register_contrib(t);
  ops::define(t, OpInfo{.op = Op::Opaque,
                        .min_inputs = 0,
                        .max_inputs = -1,
                        .min_outputs = 0,
                        .max_outputs = -1,
                        .shape_rule = infer_opaque});
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
  info.onnx_domain = kNames[i].domain;
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
  if (domain == "ai.onnx") domain = "";
  static const auto index = [] {
    std::map<std::pair<std::string_view, std::string_view>, Op> m;
    for (int i = 0; i < kNumOps - 1; ++i) {
      const Names& n = kNames[static_cast<size_t>(i)];
      m.emplace(std::pair{n.domain, n.onnx}, static_cast<Op>(i));
    }
    return m;
  }();
  auto it = index.find({domain, op_type});
  if (it == index.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> op_table_problems() {
  std::vector<std::string> problems;
  for (int i = 0; i < kNumOps; ++i) {
    const OpInfo& info = table()[static_cast<size_t>(i)];
    if (info.shape_rule == nullptr || static_cast<int>(info.op) != i)
      problems.push_back(fmt::format("op '{}' has no registered entry", kNames[static_cast<size_t>(i)].name));
  }
  return problems;
}

std::expected<void, InferError> OpInfo::infer(InferContext& ctx) const {
  if (auto ok = shape_rule(ctx); !ok) return ok;
  for (size_t i = 0; i < ctx.outputs.size(); ++i)
    if (auto bad = size_error(ctx.outputs[i].shape)) {
      ctx.limitation = bad->limit;
      return std::unexpected(fmt::format("output {} {}", i, bad->message));
    }
  return {};
}

const AttrSpec* OpInfo::attr(std::string_view attr_name) const {
  for (const AttrSpec& s : attrs)
    if (s.name == attr_name) return &s;
  return nullptr;
}

bool OpInfo::takes_int_input(size_t i) const {
  return std::find(int_inputs.begin(), int_inputs.end(), static_cast<int>(i)) != int_inputs.end();
}

std::optional<AttrValue> AttrDefault::resolve(int64_t input_rank, const Attributes* attrs) const {
  auto spatial = [&]() -> std::optional<size_t> {
    if (input_rank <= leading_axes) return std::nullopt;  // unknown, or no spatial axis
    return static_cast<size_t>(input_rank - leading_axes);
  };
  switch (rule) {
    case Rule::None: return std::nullopt;
    case Rule::Value: return value;
    case Rule::PerAxis:
      if (auto n = spatial()) return std::vector<int64_t>(*n, std::get<int64_t>(value));
      return std::nullopt;
    case Rule::PerAxisEnds:
      if (auto n = spatial()) return std::vector<int64_t>(2 * *n, std::get<int64_t>(value));
      return std::nullopt;
    case Rule::ReversedAxes: {
      if (input_rank < 0) return std::nullopt;
      std::vector<int64_t> perm;
      for (int64_t i = input_rank - 1; i >= 0; --i) perm.push_back(i);
      return perm;
    }
    case Rule::InputRank:
      if (input_rank < 0) return std::nullopt;
      return input_rank;
    case Rule::SameAs:
      if (attrs == nullptr) return std::nullopt;
      if (const AttrValue* v = attrs->find(other)) return *v;
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<AttrValue> attr_default(Op op, std::string_view name, int64_t input_rank, const Attributes* attrs) {
  const AttrSpec* spec = op_info(op).attr(name);
  if (spec == nullptr) return std::nullopt;
  return spec->fallback.resolve(input_rank, attrs);
}

std::optional<AttrValue> OpAttrs::get(std::string_view name) const {
  if (const AttrValue* v = attrs_.find(name)) return *v;
  return attr_default(op_, name, input_rank_, &attrs_);
}

const AttrValue& OpAttrs::require(std::string_view name, AttrKind kind, std::optional<AttrValue>& holder) const {
  if (const AttrValue* v = attrs_.find(name); v != nullptr && attr_kind(*v) == kind) return *v;
  holder = get(name);
  if (!holder || attr_kind(*holder) != kind) {
    // A caller asked for an attribute the op table gives no value for: a bug.
    std::fprintf(stderr, "refinery: %s has no %s attribute '%.*s' and no default for it (input rank %lld)\n",
                 std::string(op_name(op_)).c_str(), std::string(attr_kind_name(kind)).c_str(),
                 static_cast<int>(name.size()), name.data(), static_cast<long long>(input_rank_));
    std::abort();
  }
  return *holder;
}

int64_t OpAttrs::get_int(std::string_view name) const {
  std::optional<AttrValue> h;
  return std::get<int64_t>(require(name, AttrKind::Int, h));
}
float OpAttrs::get_float(std::string_view name) const {
  std::optional<AttrValue> h;
  return std::get<float>(require(name, AttrKind::Float, h));
}
std::string OpAttrs::get_string(std::string_view name) const {
  std::optional<AttrValue> h;
  return std::get<std::string>(require(name, AttrKind::String, h));
}
std::vector<int64_t> OpAttrs::get_ints(std::string_view name) const {
  std::optional<AttrValue> h;
  return std::get<std::vector<int64_t>>(require(name, AttrKind::Ints, h));
}
TensorRef OpAttrs::get_tensor(std::string_view name) const {
  std::optional<AttrValue> h;
  return std::get<TensorRef>(require(name, AttrKind::Tensor, h));
}
std::optional<std::vector<int64_t>> OpAttrs::maybe_ints(std::string_view name) const {
  auto v = get(name);
  if (!v) return std::nullopt;
  if (auto* l = std::get_if<std::vector<int64_t>>(&*v)) return *l;
  return std::nullopt;
}

OpAttrs InferContext::op_attrs() const {
  return OpAttrs(op, *attrs, has_input(0) && inputs[0].type->shape.ranked() ? inputs[0].type->shape.rank() : -1);
}

std::optional<std::vector<int64_t>> InferContext::ints(size_t i) const {
  if (!has_input(i)) return std::nullopt;
  if (inputs[i].constant != nullptr) return inputs[i].constant->to_int_vector();
  if (inputs[i].known != nullptr) {
    std::vector<int64_t> out;
    for (const Dim& d : *inputs[i].known) {
      if (!d.is_integer()) return std::nullopt;
      out.push_back(d.value());
    }
    return out;
  }
  return std::nullopt;
}

std::optional<std::vector<Dim>> InferContext::contents(size_t i) const {
  if (!has_input(i)) return std::nullopt;
  if (inputs[i].known != nullptr) return *inputs[i].known;
  if (inputs[i].constant != nullptr && is_integer(inputs[i].constant->dtype()) && inputs[i].constant->numel() <= 64) {
    std::vector<Dim> out;
    for (int64_t v : inputs[i].constant->to_int_vector()) out.push_back(Dim::integer(v));
    return out;
  }
  return std::nullopt;
}

std::optional<std::vector<Dim>> InferContext::dims_value(size_t i) const {
  auto v = contents(i);
  if (v)
    for (Dim& d : *v)
      if (d.is_negative()) d = Dim::unknown();
  return v;
}

}  // namespace refinery::ir
