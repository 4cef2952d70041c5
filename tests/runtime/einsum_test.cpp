// Einsum's kernel (at::einsum) against a reference that loops over every
// point of the iteration space, on small tensors.
#include <map>

#include "tests/runtime/helpers.h"

namespace refinery::runtime::testing {
namespace {

using ir::Op;
using Ints = std::vector<int64_t>;

ir::Tensor counting(Ints dims, float first) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i)
    v.push_back(first + 0.5f * static_cast<float>(i % 7) - 0.25f * static_cast<float>(i % 3));
  return f32(std::move(dims), v);
}

// out[output labels] = sum over the other labels of the product of the
// inputs, for an explicit equation without "...".
std::vector<double> reference(const std::string& equation, const std::vector<ir::Tensor>& inputs) {
  std::vector<std::string> terms;
  size_t arrow = equation.find("->");
  std::string lhs = equation.substr(0, arrow), out = equation.substr(arrow + 2);
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::map<char, int64_t> size;
  for (size_t k = 0; k < terms.size(); ++k)
    for (size_t i = 0; i < terms[k].size(); ++i) size[terms[k][i]] = inputs[k].dims()[i];
  std::string labels;
  for (const auto& [c, n] : size) labels.push_back(c);
  auto offset = [&](const std::string& term, const Ints& dims, std::map<char, int64_t>& at) {
    int64_t o = 0;
    for (size_t i = 0; i < term.size(); ++i) o = o * dims[i] + at[term[i]];
    return o;
  };
  Ints out_dims;
  int64_t out_n = 1;
  for (char c : out) out_dims.push_back(size[c]), out_n *= size[c];
  std::vector<double> result(static_cast<size_t>(out_n), 0.0);
  std::vector<std::vector<double>> vals;
  for (const auto& t : inputs) vals.push_back(values(t));
  std::map<char, int64_t> at;
  for (char c : labels) at[c] = 0;
  while (true) {
    double p = 1;
    for (size_t k = 0; k < terms.size(); ++k) p *= vals[k][static_cast<size_t>(offset(terms[k], inputs[k].dims(), at))];
    result[static_cast<size_t>(offset(out, out_dims, at))] += p;
    size_t i = labels.size();
    while (i > 0 && ++at[labels[i - 1]] == size[labels[i - 1]]) at[labels[--i]] = 0;
    if (i == 0) break;
  }
  return result;
}

void expect_matches_reference(const std::string& equation, const std::vector<ir::Tensor>& inputs,
                              const std::string& as_written = "") {
  std::vector<std::optional<ir::Tensor>> in(inputs.begin(), inputs.end());
  auto y = run1(Op::Einsum, in, attrs({{"equation", as_written.empty() ? equation : as_written}}));
  SCOPED_TRACE(as_written.empty() ? equation : as_written);
  expect_near(y, reference(equation, inputs));
}

TEST(Einsum, AttentionScoresAndContext) {
  auto q = counting({1, 2, 3, 4}, 1), k = counting({1, 2, 2, 4}, -1);
  expect_matches_reference("bhqd,bhkd->bhqk", {q, k});
  auto p = counting({1, 2, 3, 2}, 0.5);
  expect_matches_reference("bhqk,bhkd->bhqd", {p, k});
}

TEST(Einsum, ProductsSumsPermutations) {
  auto a = counting({2, 3}, 1), b = counting({3, 4}, -2), c = counting({4, 2}, 3);
  expect_matches_reference("ij,jk->ik", {a, b});
  expect_matches_reference("ij,jk,kl->il", {a, b, c});
  expect_matches_reference("ij->ji", {a});
  expect_matches_reference("ij->i", {a});
  expect_matches_reference("ij->", {a});
  expect_matches_reference("i,j->ij", {counting({2}, 1), counting({3}, 2)});
}

TEST(Einsum, ImplicitOutput) {
  auto a = counting({2, 3}, 1), b = counting({3, 4}, -2);
  expect_matches_reference("ij,jk->ik", {a, b}, "ij,jk");
  expect_matches_reference("ba->ab", {a}, "ba");
  expect_matches_reference("bA->Ab", {a}, "bA");
}

TEST(Einsum, DiagonalsAndTraces) {
  auto m = counting({3, 3}, 1);
  expect_matches_reference("ii->i", {m});
  expect_matches_reference("ii->", {m}, "ii");
  expect_matches_reference("bii->b", {counting({2, 3, 3}, 0)});
}

TEST(Einsum, EllipsisBroadcasts) {
  auto a = counting({2, 2, 3}, 1), b = counting({3, 2}, -1);
  // b has no batch dims: "..." of b covers none and broadcasts.
  expect_matches_reference("xij,jk->xik", {a, b}, "...ij,...jk->...ik");
  expect_matches_reference("xij,jk->xik", {a, b}, "...ij,...jk");
}

TEST(Einsum, IntegersStayIntegers) {
  auto y =
      run1(Op::Einsum, {i64({2, 2}, {1, 2, 3, 4}), i64({2}, {10, 100})}, attrs({{"equation", std::string("ij,j->i")}}));
  EXPECT_EQ(y.dtype(), ir::DType::i64);
  EXPECT_EQ(ints(y), (Ints{210, 430}));
}

}  // namespace
}  // namespace refinery::runtime::testing
