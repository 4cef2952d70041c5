// Internal to prove/z3/: how the op families fill the symbolic semantics
// table, and the tensor helpers they share. Each family file mirrors
// ir/ops/<family>.cpp and defines one fill_<family>; semantics.cpp calls
// them all once. A new family (spiking ops) adds a file and a call, not a
// switch arm.
#pragma once

#include <array>
#include <functional>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "prove/z3/symbolic.h"

namespace refinery::prove::semantics {

using Shape = std::vector<int64_t>;

int64_t numel(const Shape& s);
Shape unravel(int64_t i, const Shape& s);
int64_t ravel(const Shape& idx, const Shape& s);
// The element of `t` that broadcasts to output index `idx`.
const z3::expr& bcast(const SymTensor& t, const Shape& idx);

// One node being evaluated: its inputs' symbolic values and its output shapes.
struct Ctx {
  const ir::Node& n;
  SymDomain& d;
  std::vector<const SymTensor*> in;  // nullptr for an absent optional input
  std::vector<Shape> out;            // output shapes
  std::string error;

  const SymTensor& x(size_t i) const { return *in[i]; }
  bool has(size_t i) const { return i < in.size() && in[i] != nullptr; }
  // Attributes as the op table gives them: an absent one reads as its
  // default (ir::OpAttrs; the kernels and shape rules read the same).
  ir::OpAttrs attrs() const {
    return ir::OpAttrs(n.op, n.attrs, has(0) ? static_cast<int64_t>(x(0).shape.size()) : -1);
  }
  int64_t attr_int(std::string_view name) const { return attrs().get_int(name); }
  double attr_float(std::string_view name) const { return static_cast<double>(attrs().get_float(name)); }
  std::optional<std::vector<int64_t>> ints(size_t i) const {
    if (!has(i) || !in[i]->concrete) return std::nullopt;
    return in[i]->concrete->to_int_vector();
  }
  int64_t axis(int64_t a, size_t rank) const { return a < 0 ? a + static_cast<int64_t>(rank) : a; }
};

// The node's outputs, or nullopt with Ctx::error saying why not.
using Result = std::optional<std::vector<SymTensor>>;
using SemanticsFn = Result (*)(Ctx&);
// One entry per ir::Op; nullptr: the op has no symbolic semantics.
using Table = std::array<SemanticsFn, ir::kNumOps>;

// Sets the entry for `op`; an op defined twice is a bug and aborts.
void define(Table& t, ir::Op op, SemanticsFn fn);

void fill_elementwise(Table& t);
void fill_linear(Table& t);
void fill_nn(Table& t);
void fill_reduce(Table& t);
void fill_layout(Table& t);
void fill_spiking(Table& t);
void fill_contrib(Table& t);

SymTensor make(const Shape& s, std::vector<z3::expr> e);
Result one(SymTensor t);
Result fail_sem(Ctx& c, std::string msg);
// Output 0 has input 0's elements (reshapes, identity).
Result same_elems(Ctx& c);
// The sum of `g`, left to right; 0 when `g` is empty.
z3::expr sum_of(SymDomain& d, const std::vector<z3::expr>& g);

template <class F>
Result map_unary(Ctx& c, F f) {
  std::vector<z3::expr> e;
  for (const auto& x : c.x(0).elems) e.push_back(f(x));
  return one(make(c.x(0).shape, std::move(e)));
}

template <class F>
Result map_nary(Ctx& c, F f) {
  const Shape& s = c.out[0];
  std::vector<z3::expr> e;
  for (int64_t i = 0; i < numel(s); ++i) {
    Shape idx = unravel(i, s);
    z3::expr acc = bcast(c.x(0), idx);
    for (size_t k = 1; k < c.in.size(); ++k)
      if (c.has(k)) acc = f(acc, bcast(c.x(k), idx));
    e.push_back(acc);
  }
  return one(make(s, std::move(e)));
}

// Groups of elements that reduce together: for each output index, the input indexes.
template <class F>
Result reduce_with(Ctx& c, const std::vector<bool>& reduced, F combine) {
  const SymTensor& X = c.x(0);
  Shape kept;
  for (size_t k = 0; k < X.shape.size(); ++k) kept.push_back(reduced[k] ? 1 : X.shape[k]);
  std::vector<std::vector<z3::expr>> groups(static_cast<size_t>(numel(kept)));
  for (int64_t i = 0; i < numel(X.shape); ++i) {
    Shape idx = unravel(i, X.shape);
    for (size_t k = 0; k < idx.size(); ++k)
      if (reduced[k]) idx[k] = 0;
    groups[static_cast<size_t>(ravel(idx, kept))].push_back(X.elems[static_cast<size_t>(i)]);
  }
  std::vector<z3::expr> e;
  for (auto& g : groups) e.push_back(combine(g));
  return one(make(c.out[0], std::move(e)));
}

}  // namespace refinery::prove::semantics
