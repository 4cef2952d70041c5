// Symbolic semantics of the linear-algebra ops (ir/ops/linear.cpp): MatMul
// with batch broadcasting, Gemm with its transposes, alpha and beta.
#include "prove/z3/semantics.h"

#include <algorithm>
#include <map>

#include "ir/einsum.h"

namespace refinery::prove::semantics {
namespace {

Result matmul(Ctx& c) {
  Shape a = c.x(0).shape, b = c.x(1).shape;
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  Shape ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  size_t r = std::max(ba.size(), bb.size());
  Shape batch(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t x = i + ba.size() >= r ? ba[i + ba.size() - r] : 1;
    int64_t y = i + bb.size() >= r ? bb[i + bb.size() - r] : 1;
    batch[i] = x == 1 ? y : x;  // (1 against 0 broadcasts to 0)
  }
  SymTensor A{a, c.x(0).elems}, B{b, c.x(1).elems};
  std::vector<z3::expr> e;
  for (int64_t bi = 0; bi < numel(batch); ++bi) {
    Shape bidx = unravel(bi, batch);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        std::optional<z3::expr> acc;
        for (int64_t kk = 0; kk < k; ++kk) {
          Shape ia = bidx, ib = bidx;
          ia.push_back(i);
          ia.push_back(kk);
          ib.push_back(kk);
          ib.push_back(j);
          z3::expr p = c.d.mul(bcast(A, ia), bcast(B, ib));
          acc = acc ? c.d.add(*acc, p) : p;
        }
        e.push_back(acc ? *acc : c.d.num(0));
      }
  }
  return one(make(c.out[0], std::move(e)));
}

Result gemm(Ctx& c) {
  bool ta = c.attr_int("transA") != 0, tb = c.attr_int("transB") != 0;
  double alpha = c.attr_float("alpha"), beta = c.attr_float("beta");
  const SymTensor& A = c.x(0);
  const SymTensor& B = c.x(1);
  int64_t m = c.out[0][0], n = c.out[0][1];
  int64_t k = ta ? A.shape[0] : A.shape[1];
  std::vector<z3::expr> e;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      std::optional<z3::expr> acc;
      for (int64_t kk = 0; kk < k; ++kk) {
        const z3::expr& x = A.elems[static_cast<size_t>(ta ? kk * A.shape[1] + i : i * A.shape[1] + kk)];
        const z3::expr& y = B.elems[static_cast<size_t>(tb ? j * B.shape[1] + kk : kk * B.shape[1] + j)];
        z3::expr p = c.d.mul(x, y);
        acc = acc ? c.d.add(*acc, p) : p;
      }
      z3::expr v = acc ? *acc : c.d.num(0);
      if (alpha != 1.0) v = c.d.mul(c.d.num(alpha), v);
      if (c.has(2)) {
        z3::expr bias = bcast(c.x(2), {i, j});
        if (beta != 1.0) bias = c.d.mul(c.d.num(beta), bias);
        v = c.d.add(v, bias);
      }
      e.push_back(v);
    }
  return one(make(c.out[0], std::move(e)));
}

// Einsum without an ellipsis: each output element the sum, over the summed
// labels in the equation's order (the last fastest), of the product of the
// inputs' elements in input order; a label of size 1 in one input broadcasts.
Result einsum(Ctx& c) {
  auto eq = ir::parse_einsum(c.attrs().get_string("equation"));
  if (!eq) return fail_sem(c, eq.error());
  std::vector<ir::Shape> shapes;
  std::vector<const ir::Shape*> ptrs;
  for (const SymTensor* t : c.in) {
    std::vector<ir::Dim> dims(t->shape.begin(), t->shape.end());
    shapes.emplace_back(std::move(dims));
  }
  for (const auto& s : shapes) ptrs.push_back(&s);
  auto dims = ir::einsum_dims(*eq, ptrs);
  if (!dims) return fail_sem(c, dims.error());
  for (const auto& t : eq->inputs)
    if (t.has_ellipsis()) return fail_sem(c, "einsum with an ellipsis has no symbolic semantics");
  Shape sum;
  for (char l : dims->summed) sum.push_back(dims->labels.at(l).size());
  const std::string& out = eq->output.labels;
  std::vector<z3::expr> e;
  for (int64_t i = 0; i < numel(c.out[0]); ++i) {
    std::map<char, int64_t> at;
    Shape oi = unravel(i, c.out[0]);
    for (size_t k = 0; k < out.size(); ++k) at[out[k]] = oi[k];
    std::optional<z3::expr> acc;
    for (int64_t j = 0; j < numel(sum); ++j) {
      Shape si = unravel(j, sum);
      for (size_t k = 0; k < dims->summed.size(); ++k) at[dims->summed[k]] = si[k];
      std::optional<z3::expr> p;
      for (size_t t = 0; t < c.in.size(); ++t) {
        const std::string& labels = eq->inputs[t].labels;
        Shape idx;
        for (size_t k = 0; k < labels.size(); ++k) idx.push_back(c.x(t).shape[k] == 1 ? 0 : at[labels[k]]);
        const z3::expr& v = c.x(t).elems[static_cast<size_t>(ravel(idx, c.x(t).shape))];
        p = p ? c.d.mul(*p, v) : v;
      }
      acc = acc ? c.d.add(*acc, *p) : *p;
    }
    e.push_back(acc ? *acc : c.d.num(0));
  }
  return one(make(c.out[0], std::move(e)));
}

}  // namespace

void fill_linear(Table& t) {
  define(t, ir::Op::Einsum, einsum);
  define(t, ir::Op::MatMul, matmul);
  define(t, ir::Op::Gemm, gemm);
}

}  // namespace refinery::prove::semantics
