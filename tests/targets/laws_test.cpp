// Laws every target's cost model obeys (ARCHITECTURE.md decision 11): a
// rewrite that only relabels the same work costs the same, within 5% (the
// operands of a commutative op swapped, Add, Sub and Mul of the same
// operands, an Einsum that is a MatMul: one-sided for the learned model, a
// Gemm by a constant weight and its MatMul + Add). Each
// law is checked for every target spec (targets/specs/*.json), and the cpu's
// learned model (targets/learned.h) beside its analytic one, on instances
// drawn from every zoo model's ops (build/zoo, docs/zoo.md) and from a small
// built-in block that has each law's pattern; the table laws x targets
// prints how many instances held, and the worst that did not.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <functional>
#include <limits>
#include <map>

#include "frontends/onnx.h"
#include "targets/cost_model.h"
#include "targets/spec.h"
#include "targets/workload.h"

namespace refinery::targets {
namespace {

namespace fs = std::filesystem;
using ir::Op;

constexpr double kTolerance = 0.05;

// One instance of a law: the same work before and after the relabelling.
struct Instance {
  std::string where;  // "model: node"
  ir::Graph before, after;
};

// Adds nodes to a graph under construction; infer_shapes types them all at
// the end.
struct Builder {
  ir::Graph& g;
  int counter = 0;

  std::vector<ir::ValueId> op(Op o, std::vector<ir::ValueId> inputs, ir::Attributes attrs = {}, int outputs = 1) {
    ir::Node n;
    n.op = o;
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    std::vector<std::string> names;
    for (int i = 0; i < outputs; ++i) names.push_back(fmt::format("law{}", counter++));
    ir::NodeId id = g.add_node(std::move(n), names,
                               std::vector<ir::TensorType>(outputs, {ir::DType::f32, ir::Shape::unranked()}));
    return g.node(id).outputs;
  }
  ir::ValueId op1(Op o, std::vector<ir::ValueId> inputs, ir::Attributes attrs = {}) {
    return op(o, std::move(inputs), std::move(attrs))[0];
  }
  ir::ValueId ints(std::vector<int64_t> v) {
    return g.add_constant(fmt::format("law{}", counter++), std::make_shared<const ir::Tensor>(ir::Tensor::vector_i64(v)));
  }
};

ir::Attributes attr(const char* name, int64_t v) {
  ir::Attributes a;
  a.set(name, v);
  return a;
}
ir::Attributes attr(const char* name, std::vector<int64_t> v) {
  ir::Attributes a;
  a.set(name, std::move(v));
  return a;
}

bool is_constant(const ir::Graph& zoo, ir::ValueId v) { return zoo.value(v).kind == ir::ValueKind::Constant; }

// A relabelling of one value: the value the consumer reads instead, or
// nullopt where the law does not apply to this value.
using Relabel = std::function<std::optional<ir::ValueId>(Builder&, ir::ValueId, const ir::TensorType&)>;

// Node `n` of `zoo` alone: its constant inputs stay constants, the others
// become graph inputs of their zoo types; input `at` goes through `relabel`
// (none: the node as it is).
std::optional<ir::Graph> alone(const ir::Graph& zoo, const ir::Node& n, std::size_t at, const Relabel* relabel) {
  ir::Graph g;
  Builder b{g};
  std::vector<ir::ValueId> inputs;
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    ir::ValueId v = n.inputs[i];
    if (v == ir::kNoValue) {
      inputs.push_back(v);
      continue;
    }
    const ir::Value& zv = zoo.value(v);
    ir::ValueId x = is_constant(zoo, v) ? g.add_constant(zv.name, zv.constant) : g.add_input(zv.name, zv.type);
    if (relabel && i == at) {
      auto y = (*relabel)(b, x, zv.type);
      if (!y) return std::nullopt;
      x = *y;
    }
    inputs.push_back(x);
  }
  auto outs = b.op(n.op, inputs, n.attrs, static_cast<int>(n.outputs.size()));
  g.set_outputs(outs);
  if (!g.infer_shapes() || !g.verify()) return std::nullopt;
  return g;
}

std::optional<std::vector<int64_t>> static_dims(const ir::TensorType& t) {
  if (!t.shape.ranked() || !t.shape.is_static()) return std::nullopt;
  return t.shape.sizes();
}

// Laws over one value and the zoo op that reads it: the op reading the
// value costs the same as the op reading its relabelled form.
std::map<std::string, Relabel> value_laws() {
  std::map<std::string, Relabel> laws;
  laws["identity"] = [](Builder& b, ir::ValueId x, const ir::TensorType&) -> std::optional<ir::ValueId> {
    return b.op1(Op::Identity, {x});
  };
  laws["reshape"] = [](Builder& b, ir::ValueId x, const ir::TensorType& t) -> std::optional<ir::ValueId> {
    auto d = static_dims(t);
    if (!d || d->size() < 2) return std::nullopt;
    int64_t n = 1;
    for (int64_t s : *d) n *= s;
    return b.op1(Op::Reshape, {b.op1(Op::Reshape, {x, b.ints({n})}), b.ints(*d)});
  };
  laws["flatten"] = [](Builder& b, ir::ValueId x, const ir::TensorType& t) -> std::optional<ir::ValueId> {
    auto d = static_dims(t);
    if (!d || d->size() < 3) return std::nullopt;
    return b.op1(Op::Reshape, {b.op1(Op::Flatten, {x}, attr("axis", 1)), b.ints(*d)});
  };
  laws["squeeze-unsqueeze"] = [](Builder& b, ir::ValueId x, const ir::TensorType& t) -> std::optional<ir::ValueId> {
    if (!t.shape.ranked()) return std::nullopt;
    return b.op1(Op::Squeeze, {b.op1(Op::Unsqueeze, {x, b.ints({0})}), b.ints({0})});
  };
  laws["transpose-pair"] = [](Builder& b, ir::ValueId x, const ir::TensorType& t) -> std::optional<ir::ValueId> {
    if (!t.shape.ranked() || t.shape.rank() < 2) return std::nullopt;
    // A rotation of the axes and its inverse.
    std::vector<int64_t> p, q;
    int64_t r = t.shape.rank();
    for (int64_t i = 0; i < r; ++i) p.push_back((i + 1) % r), q.push_back((i + r - 1) % r);
    return b.op1(Op::Transpose, {b.op1(Op::Transpose, {x}, attr("perm", p))}, attr("perm", q));
  };
  return laws;
}

// Laws over one op of the zoo as a whole.
using OpLaw = std::function<std::optional<Instance>(const ir::Graph&, const ir::Node&)>;

// A unary elementwise op computes the same on its input flattened and
// reshaped back (the rules reshape-relu, reshape-exp, ...).
std::optional<Instance> elementwise_through_reshape(const ir::Graph& zoo, const ir::Node& n) {
  if (classify(n.op) != OpClass::Elementwise || n.outputs.size() != 1 || n.inputs.empty()) return std::nullopt;
  const ir::TensorType& t = zoo.value(n.inputs[0]).type;
  auto d = static_dims(t);
  if (!d || d->size() < 2 || is_constant(zoo, n.inputs[0]) || !(t == zoo.value(n.outputs[0]).type)) return std::nullopt;
  for (std::size_t i = 1; i < n.inputs.size(); ++i)  // other inputs: scalars only
    if (n.inputs[i] != ir::kNoValue && ir::counted_elements(zoo.value(n.inputs[i]).type) != 1) return std::nullopt;
  auto before = alone(zoo, n, 0, nullptr);
  if (!before) return std::nullopt;
  ir::Graph g;
  Builder b{g};
  int64_t count = 1;
  for (int64_t s : *d) count *= s;
  std::vector<ir::ValueId> inputs;
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    ir::ValueId v = n.inputs[i];
    if (v == ir::kNoValue) {
      inputs.push_back(v);
      continue;
    }
    const ir::Value& zv = zoo.value(v);
    inputs.push_back(is_constant(zoo, v) ? g.add_constant(zv.name, zv.constant) : g.add_input(zv.name, zv.type));
  }
  inputs[0] = b.op1(Op::Reshape, {inputs[0], b.ints({count})});
  g.set_outputs({b.op1(Op::Reshape, {b.op1(n.op, inputs, n.attrs), b.ints(*d)})});
  if (!g.infer_shapes() || !g.verify()) return std::nullopt;
  return Instance{"", std::move(*before), std::move(g)};
}

// A Concat reads the same pieces when they went through a Concat and a
// Split into the same pieces (the rules concat-split, split-concat-*).
std::optional<Instance> concat_split(const ir::Graph& zoo, const ir::Node& n) {
  if (n.op != Op::Concat || n.inputs.size() < 2) return std::nullopt;
  const ir::Shape& y = zoo.value(n.outputs[0]).type.shape;
  if (!y.ranked()) return std::nullopt;
  int64_t axis = ir::OpAttrs(n.op, n.attrs, y.rank()).get_int("axis");
  if (axis < 0) axis += y.rank();
  std::vector<int64_t> sizes;
  for (ir::ValueId v : n.inputs) {
    const ir::TensorType& t = zoo.value(v).type;
    if (is_constant(zoo, v) || !t.shape.ranked() || !t.shape[axis].is_static()) return std::nullopt;
    sizes.push_back(t.shape[axis].size());
  }
  auto before = alone(zoo, n, 0, nullptr);
  if (!before) return std::nullopt;
  ir::Graph g;
  Builder b{g};
  std::vector<ir::ValueId> pieces;
  for (ir::ValueId v : n.inputs) pieces.push_back(g.add_input(zoo.value(v).name, zoo.value(v).type));
  auto split = b.op(Op::Split, {b.op1(Op::Concat, pieces, n.attrs), b.ints(sizes)}, attr("axis", axis),
                    static_cast<int>(sizes.size()));
  g.set_outputs({b.op1(Op::Concat, split, n.attrs)});
  if (!g.infer_shapes() || !g.verify()) return std::nullopt;
  return Instance{"", std::move(*before), std::move(g)};
}

// A 1x1 Conv (group 1, unit strides and dilations, no padding) and its
// MatMul form, the rule conv-1x1-as-matmul's: reshape(matmul(reshape(w,
// [K, C]), reshape(x, [N, C, D1*D2*...])), [N, K, D1, D2, ...]). Without
// the bias, which the rule leaves to conv-bias-split.
std::optional<Instance> conv_1x1_as_matmul(const ir::Graph& zoo, const ir::Node& n) {
  if (n.op != Op::Conv || n.inputs.size() < 2 || !is_constant(zoo, n.inputs[1])) return std::nullopt;
  auto x = static_dims(zoo.value(n.inputs[0]).type);
  auto w = static_dims(zoo.value(n.inputs[1]).type);
  if (!x || !w || x->size() < 3 || w->size() != x->size()) return std::nullopt;
  for (std::size_t i = 2; i < w->size(); ++i)
    if ((*w)[i] != 1) return std::nullopt;
  ir::OpAttrs a(n.op, n.attrs, static_cast<int64_t>(x->size()));
  auto all = [](const std::vector<int64_t>& v, int64_t k) {
    return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e == k; });
  };
  if (a.get_int("group") != 1 || !all(a.get_ints("strides"), 1) || !all(a.get_ints("dilations"), 1) ||
      !all(a.get_ints("pads"), 0) || a.get_string("auto_pad") != "NOTSET")
    return std::nullopt;
  ir::Node conv = n;
  conv.inputs.resize(2);
  auto before = alone(zoo, conv, 0, nullptr);
  if (!before) return std::nullopt;
  ir::Graph g;
  Builder b{g};
  ir::ValueId xi = g.add_input(zoo.value(n.inputs[0]).name, zoo.value(n.inputs[0]).type);
  ir::ValueId wi = g.add_constant(zoo.value(n.inputs[1]).name, zoo.value(n.inputs[1]).constant);
  int64_t spatial = 1;
  for (std::size_t i = 2; i < x->size(); ++i) spatial *= (*x)[i];
  std::vector<int64_t> ys = *x;
  ys[1] = (*w)[0];
  auto mm = b.op1(Op::MatMul, {b.op1(Op::Reshape, {wi, b.ints({(*w)[0], (*w)[1]})}),
                               b.op1(Op::Reshape, {xi, b.ints({(*x)[0], (*x)[1], spatial})})});
  g.set_outputs({b.op1(Op::Reshape, {mm, b.ints(ys)})});
  if (!g.infer_shapes() || !g.verify()) return std::nullopt;
  return Instance{"", std::move(*before), std::move(g)};
}

// The node alone with `edit` applied to it (its inputs reordered, its op
// relabelled): nullopt where the edited node does not type.
std::optional<Instance> edited(const ir::Graph& zoo, const ir::Node& n, const std::function<void(ir::Node&)>& edit) {
  auto before = alone(zoo, n, 0, nullptr);
  ir::Node m = n;
  edit(m);
  auto after = alone(zoo, m, 0, nullptr);
  if (!before || !after) return std::nullopt;
  return Instance{"", std::move(*before), std::move(*after)};
}

// A commutative op (Add, Mul, Max, Min, And, Or, Equal, ...) reads its
// operands in either order; where they differ (in type or in being
// constant), reversed.
std::optional<Instance> commutative_operands(const ir::Graph& zoo, const ir::Node& n) {
  if (!ir::op_info(n.op).commutative || n.inputs.size() < 2) return std::nullopt;
  const ir::ValueId a = n.inputs.front(), b = n.inputs.back();
  if (a == ir::kNoValue || b == ir::kNoValue ||
      (zoo.value(a).type == zoo.value(b).type && is_constant(zoo, a) == is_constant(zoo, b)))
    return std::nullopt;
  return edited(zoo, n, [](ir::Node& m) { std::reverse(m.inputs.begin(), m.inputs.end()); });
}

// ONNX Runtime runs Add, Sub and Mul of the same operands in one kernel
// shape (timed alike: docs/measurements.md, session 21; Div, Max and Min
// ran dearer), so each is priced as the others: one instance per other label.
const std::vector<Op> kAlikeLabels{Op::Add, Op::Sub, Op::Mul};
std::vector<Instance> alike_labels(const ir::Graph& zoo, const ir::Node& n) {
  std::vector<Instance> out;
  if (std::find(kAlikeLabels.begin(), kAlikeLabels.end(), n.op) == kAlikeLabels.end()) return out;
  for (Op other : kAlikeLabels)
    if (other != n.op)
      if (auto inst = edited(zoo, n, [&](ir::Node& m) { m.op = other; })) out.push_back(std::move(*inst));
  return out;
}

// A MatMul of operands of rank 2 or more as the Einsum that is it:
// "...mk,...kn->...mn" with the batch letters spelled out, the shorter
// operand's batch right-aligned (MatMul's broadcasting and the Einsum's).
// Before: the MatMul, after: the Einsum (a one-sided law, see the test).
std::optional<Instance> einsum_as_matmul(const ir::Graph& zoo, const ir::Node& n) {
  if (n.op != Op::MatMul || n.inputs.size() != 2) return std::nullopt;
  const ir::Shape &a = zoo.value(n.inputs[0]).type.shape, &b = zoo.value(n.inputs[1]).type.shape;
  if (!a.ranked() || !b.ranked() || a.rank() < 2 || b.rank() < 2) return std::nullopt;
  const std::string batch = "abcdefgh";
  const int64_t longest = std::max(a.rank(), b.rank()) - 2;
  if (longest > static_cast<int64_t>(batch.size())) return std::nullopt;
  auto prefix = [&](int64_t rank) { return batch.substr(longest - (rank - 2), rank - 2); };
  const std::string equation = prefix(a.rank()) + "mk," + prefix(b.rank()) + "kn->" + batch.substr(0, longest) + "mn";
  return edited(zoo, n, [&](ir::Node& m) {
    m.op = Op::Einsum;
    m.attrs.set("equation", equation);
  });
}
// A Gemm by a constant 2-D weight (transA 0, alpha 1, beta 1 with a
// constant C or none) and its MatMul form, the rules gemm-as-matmul(-add)
// and gemm-transB(-bias)'s, the transpose of a constant folded: MatMul(a, w
// as [K, N]), plus Add(., c) where it has a C.
// ONNX Runtime runs both as one Gemm kernel (MatMulAddFusion).
std::optional<Instance> gemm_as_matmul(const ir::Graph& zoo, const ir::Node& n) {
  if (n.op != Op::Gemm || n.inputs.size() < 2 || !is_constant(zoo, n.inputs[1])) return std::nullopt;
  const ir::Shape& a = zoo.value(n.inputs[0]).type.shape;
  auto w = static_dims(zoo.value(n.inputs[1]).type);
  if (!a.ranked() || a.rank() != 2 || !w || w->size() != 2 || is_constant(zoo, n.inputs[0])) return std::nullopt;
  const bool has_c = n.inputs.size() > 2 && n.inputs[2] != ir::kNoValue;
  if (n.attrs.get_int("transA", 0) != 0 || n.attrs.get_float("alpha", 1.0f) != 1.0f ||
      (has_c && (!is_constant(zoo, n.inputs[2]) || n.attrs.get_float("beta", 1.0f) != 1.0f)))
    return std::nullopt;
  const bool transposed = n.attrs.get_int("transB", 0) != 0;
  const int64_t k = (*w)[transposed ? 1 : 0], cols = (*w)[transposed ? 0 : 1];
  auto before = alone(zoo, n, 0, nullptr);
  if (!before) return std::nullopt;
  ir::Graph g;
  Builder b{g};
  ir::ValueId x = g.add_input(zoo.value(n.inputs[0]).name, zoo.value(n.inputs[0]).type);
  // The weight as [K, N]: the cost models read its type, not its values.
  ir::ValueId wk = g.add_constant("w_kn", std::make_shared<const ir::Tensor>(ir::Tensor::from_values<float>(
                                              ir::DType::f32, {k, cols}, std::vector<float>(k * cols, 0.5f))));
  ir::ValueId y = b.op1(Op::MatMul, {x, wk});
  if (has_c) y = b.op1(Op::Add, {y, g.add_constant(zoo.value(n.inputs[2]).name, zoo.value(n.inputs[2]).constant)});
  g.set_outputs({y});
  if (!g.infer_shapes() || !g.verify()) return std::nullopt;
  return Instance{"", std::move(*before), std::move(g)};
}

std::map<std::string, OpLaw> op_laws() {
  return {{"conv-1x1-as-matmul", conv_1x1_as_matmul},
          {"concat-split", concat_split},
          {"elementwise-through-reshape", elementwise_through_reshape},
          {"commutative-operands", commutative_operands},
          {"einsum-as-matmul", einsum_as_matmul},
          {"gemm-as-matmul", gemm_as_matmul}};
}

// Every law's instances in one model.
void collect(const std::string& model, const ir::Graph& zoo, std::map<std::string, std::vector<Instance>>& out) {
  auto values = value_laws();
  auto ops = op_laws();
  for (std::size_t k = 0; k < zoo.num_nodes(); ++k) {
    const ir::Node& n = zoo.nodes()[k];
    if (n.op == Op::Opaque || n.op == Op::Constant || ir::op_info(n.op).stateful) continue;
    std::string where = fmt::format("{}: {}", model, zoo.node_label(ir::NodeId(k)));
    const auto& int_inputs = ir::op_info(n.op).int_inputs;
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] == ir::kNoValue || is_constant(zoo, n.inputs[i])) continue;
      if (std::find(int_inputs.begin(), int_inputs.end(), static_cast<int>(i)) != int_inputs.end()) continue;
      for (const auto& [law, relabel] : values) {
        auto before = alone(zoo, n, i, nullptr);
        auto after = alone(zoo, n, i, &relabel);
        if (before && after)
          out[law].push_back(Instance{fmt::format("{} (input {})", where, i), std::move(*before), std::move(*after)});
      }
    }
    for (const auto& [law, make] : ops)
      if (auto inst = make(zoo, n)) {
        inst->where = where;
        out[law].push_back(std::move(*inst));
      }
    for (Instance& inst : alike_labels(zoo, n)) {
      inst.where = fmt::format("{} as {}", where, ir::op_name(inst.after.nodes().back().op));
      out["add-sub-mul-alike"].push_back(std::move(inst));
    }
  }
}

// A block with each law's pattern, so that every law has instances without
// the zoo too: a 1x1 Conv on 24 channels of 7x7 (NCHW's last two dims far
// from 8x128 tiles), a ReLU, an Add of a per-channel constant (the
// commutative and Add/Sub/Mul laws), a Concat, a Transpose, a MatMul and a
// Gemm.
ir::Graph builtin_block() {
  ir::Graph g;
  Builder b{g};
  auto weight = [&](const char* name, std::vector<int64_t> dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return g.add_constant(name, std::make_shared<const ir::Tensor>(ir::Tensor::from_values<float>(
                                    ir::DType::f32, dims, std::vector<float>(static_cast<size_t>(n), 0.5f))));
  };
  auto x = g.add_input("x", {ir::DType::f32, ir::Shape::of({1, 24, 7, 7})});
  auto y = b.op1(Op::Relu, {b.op1(Op::Conv, {x, weight("w", {48, 24, 1, 1})})});
  auto biased = b.op1(Op::Add, {y, weight("bias", {1, 48, 1, 1})});
  auto c = b.op1(Op::Concat, {biased, x}, attr("axis", 1));
  auto t = b.op1(Op::Transpose, {c}, attr("perm", std::vector<int64_t>{0, 2, 3, 1}));
  auto r = b.op1(Op::Reshape, {t, b.ints({49, 72})});
  auto m = b.op1(Op::MatMul, {r, weight("w2", {72, 10})});
  ir::Attributes trans_b = attr("transB", 1);
  g.set_outputs({b.op1(Op::Gemm, {m, weight("w3", {4, 10}), weight("c3", {4})}, trans_b)});
  auto ok = g.infer_shapes();
  EXPECT_TRUE(ok.has_value()) << ok.error().str();
  return g;
}

std::vector<std::pair<std::string, ir::Graph>> models() {
  std::vector<std::pair<std::string, ir::Graph>> out;
  out.emplace_back("builtin", builtin_block());
  fs::path dir = fs::path(REFINERY_BINARY_DIR) / "zoo";
  std::vector<fs::path> files;
  if (fs::exists(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".onnx") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    auto g = frontends::import_onnx(f);
    EXPECT_TRUE(g.has_value()) << g.error().str();
    if (g) out.emplace_back(f.stem().string(), std::move(*g));
  }
  if (files.empty()) std::printf("no zoo in %s/zoo (build 'zoo_small'): the built-in block only\n", REFINERY_BINARY_DIR);
  return out;
}

std::vector<Target> all_targets() {
  std::vector<Target> out;
  auto dir = specs_dir();
  EXPECT_TRUE(dir.has_value()) << dir.error().str();
  if (!dir) return out;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(*dir))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    // A spec with a learned model: the one shipped beside it (not a user's
    // calibrated one, which may not be there), and its analytic model
    // ("cpu-analytic") beside it.
    auto spec = find_spec(name);
    const bool learned = spec && !spec->learned_model.empty();
    auto t = learned ? load_target(name, (spec->folder / spec->learned_model).string()) : load_target(name);
    EXPECT_TRUE(t.has_value()) << t.error().str();
    if (t) out.push_back(std::move(*t));
    if (!learned) continue;
    auto analytic = load_target(name + std::string(kAnalyticSuffix));
    EXPECT_TRUE(analytic.has_value()) << analytic.error().str();
    if (analytic) out.push_back(std::move(*analytic));
  }
  return out;
}

struct Failure {
  std::string where;
  double before, after;
  double ratio() const {
    double low = std::min(before, after);
    return low > 0 ? std::max(before, after) / low : std::numeric_limits<double>::infinity();
  }
};

TEST(CostLaws, RelabellingTheSameWorkCostsTheSameOnEveryTarget) {
  std::map<std::string, std::vector<Instance>> instances;
  for (const auto& [name, g] : models()) collect(name, g, instances);
  auto targets = all_targets();
  ASSERT_FALSE(targets.empty());
  std::string table = fmt::format("{:<28}", "law (instances held/all)");
  for (const auto& t : targets) table += fmt::format(" {:>13}", t.name);
  table += "\n";
  std::string failures;
  for (const auto& law :
       {"conv-1x1-as-matmul", "transpose-pair", "identity", "reshape", "flatten", "squeeze-unsqueeze", "concat-split",
        "elementwise-through-reshape", "commutative-operands", "add-sub-mul-alike", "einsum-as-matmul",
        "gemm-as-matmul"}) {
    const auto& list = instances[law];
    EXPECT_FALSE(list.empty()) << law << " has no instance";
    table += fmt::format("{:<28}", law);
    for (const auto& t : targets) {
      std::vector<Failure> failed;
      // ONNX Runtime runs an Einsum dearer than the MatMul it is (1.03-1.22x,
      // docs/measurements.md session 21): the learned model, trained on its
      // timings, may price it above the MatMul, never below; the others price
      // the GEMM and so alike.
      const bool at_least = std::string_view(law) == "einsum-as-matmul" && !t.learned_model_file.empty();
      // The learned cpu model describes a kernel by its label, and prices
      // labels apart (Sub up to 25% below the Add of the same tensors): a
      // canonical form, tried with its model retrained, made extractions
      // slower under ONNX Runtime (torch_encoder 0.72-0.78x), where ORT
      // fuses an Add that it does not fuse as a Sub (docs/measurements.md,
      // session 21). Counted, not held. (Operand order it prices alike,
      // session 22.)
      const bool counted_only = !t.learned_model_file.empty() && std::string_view(law) == "add-sub-mul-alike";
      for (const Instance& inst : list) {
        double a = graph_cost(*t.model, inst.before), b = graph_cost(*t.model, inst.after);
        if (at_least ? b < a * (1 - kTolerance) : std::abs(a - b) > kTolerance * std::max(std::abs(a), std::abs(b)))
          failed.push_back({inst.where, a, b});
      }
      table += fmt::format(" {:>13}", fmt::format("{}/{}", list.size() - failed.size(), list.size()));
      std::sort(failed.begin(), failed.end(), [](const Failure& x, const Failure& y) { return x.ratio() > y.ratio(); });
      for (std::size_t i = 0; i < std::min<std::size_t>(failed.size(), 3); ++i)
        failures += fmt::format("  {} on {}: {}: {:.4g} s before, {:.4g} s after ({:.2f}x)\n", law, t.name,
                                failed[i].where, failed[i].before, failed[i].after, failed[i].ratio());
      if (counted_only) continue;
      EXPECT_TRUE(failed.empty()) << law << " fails on " << t.name << " for " << failed.size() << " of "
                                  << list.size() << " instances";
    }
    table += "\n";
  }
  std::printf("%s%s", table.c_str(), failures.empty() ? "" : ("worst failures:\n" + failures).c_str());
}

}  // namespace
}  // namespace refinery::targets
