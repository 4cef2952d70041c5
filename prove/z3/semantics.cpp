// The symbolic semantics table, filled once per op family, and the
// evaluation of a graph through it; the helpers the family files share.
#include "prove/z3/semantics.h"

#include <cstdlib>

#include <fmt/format.h>

namespace refinery::prove {
namespace semantics {

int64_t numel(const Shape& s) { return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>()); }

Shape unravel(int64_t i, const Shape& s) {
  Shape idx(s.size());
  for (size_t k = s.size(); k-- > 0;) {
    idx[k] = s[k] == 0 ? 0 : i % s[k];
    i = s[k] == 0 ? 0 : i / s[k];
  }
  return idx;
}

int64_t ravel(const Shape& idx, const Shape& s) {
  int64_t i = 0;
  for (size_t k = 0; k < s.size(); ++k) i = i * s[k] + idx[k];
  return i;
}

const z3::expr& bcast(const SymTensor& t, const Shape& idx) {
  size_t off = idx.size() - t.shape.size();
  int64_t i = 0;
  for (size_t k = 0; k < t.shape.size(); ++k) i = i * t.shape[k] + (t.shape[k] == 1 ? 0 : idx[off + k]);
  return t.elems[static_cast<size_t>(i)];
}

SymTensor make(const Shape& s, std::vector<z3::expr> e) { return SymTensor{s, std::move(e), nullptr}; }

Result one(SymTensor t) {
  std::vector<SymTensor> v;
  v.push_back(std::move(t));
  return v;
}

Result fail_sem(Ctx& c, std::string msg) {
  c.error = std::move(msg);
  return std::nullopt;
}

Result same_elems(Ctx& c) { return one(make(c.out[0], c.x(0).elems)); }

z3::expr sum_of(SymDomain& d, const std::vector<z3::expr>& g) {
  if (g.empty()) return d.num(0);  // an empty sum (ONNX: ReduceSum of nothing is 0)
  z3::expr acc = g[0];
  for (size_t i = 1; i < g.size(); ++i) acc = d.add(acc, g[i]);
  return acc;
}

void define(Table& t, ir::Op op, SemanticsFn fn) {
  size_t i = static_cast<size_t>(op);
  if (t[i] != nullptr) {
    fmt::print(stderr, "prove: {} is given symbolic semantics twice\n", ir::op_name(op));
    std::abort();
  }
  t[i] = fn;
}

}  // namespace semantics

namespace {

semantics::Table build_table() {
  semantics::Table t{};
  semantics::fill_elementwise(t);
  semantics::fill_linear(t);
  semantics::fill_nn(t);
  semantics::fill_reduce(t);
  semantics::fill_layout(t);
  semantics::fill_spiking(t);
  semantics::fill_contrib(t);
  return t;
}

const semantics::Table& table() {
  static const semantics::Table t = build_table();
  return t;
}

}  // namespace

bool has_semantics(ir::Op op) { return table()[static_cast<size_t>(op)] != nullptr; }

Expected<std::vector<SymTensor>> eval_symbolic(const ir::Graph& g, const std::vector<SymTensor>& inputs, SymDomain& d) {
  std::vector<std::optional<SymTensor>> val(g.num_values());
  for (size_t i = 0; i < g.inputs().size(); ++i) val[ir::index(g.inputs()[i])] = inputs[i];
  for (ir::ValueId v : g.constants()) {
    const ir::Tensor& t = *g.value(v).constant;
    SymTensor s;
    s.shape = t.dims();
    s.concrete = g.value(v).constant.get();
    for (int64_t i = 0; i < t.numel(); ++i) s.elems.push_back(d.num(t.as_double(i)));
    val[ir::index(v)] = std::move(s);
  }
  for (size_t n = 0; n < g.num_nodes(); ++n) {
    const ir::Node& node = g.nodes()[n];
    semantics::Ctx c{node, d, {}, {}, {}};
    for (ir::ValueId in : node.inputs) c.in.push_back(in == ir::kNoValue ? nullptr : &*val[ir::index(in)]);
    for (ir::ValueId o : node.outputs) c.out.push_back(g.value(o).type.shape.sizes());
    semantics::SemanticsFn fn = table()[static_cast<size_t>(node.op)];
    auto r = fn ? fn(c) : semantics::fail_sem(c, fmt::format("{} has no symbolic semantics", ir::op_name(node.op)));
    if (!r) return fail(c.error, fmt::format("node '{}'", g.node_label(ir::NodeId{static_cast<uint32_t>(n)})));
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      (*r)[o].shape = c.out[o];
      val[ir::index(node.outputs[o])] = std::move((*r)[o]);
    }
  }
  std::vector<SymTensor> out;
  for (ir::ValueId v : g.outputs()) out.push_back(*val[ir::index(v)]);
  return out;
}

}  // namespace refinery::prove
