#include "tests/runtime/helpers.h"

#include <cmath>

namespace refinery::runtime::testing {

ir::Tensor f32(std::vector<int64_t> dims, std::vector<float> v) {
  return ir::Tensor::from_values(ir::DType::f32, std::move(dims), v);
}
ir::Tensor f64(std::vector<int64_t> dims, std::vector<double> v) {
  return ir::Tensor::from_values(ir::DType::f64, std::move(dims), v);
}
ir::Tensor i64(std::vector<int64_t> dims, std::vector<int64_t> v) {
  return ir::Tensor::from_values(ir::DType::i64, std::move(dims), v);
}
ir::Tensor i32(std::vector<int64_t> dims, std::vector<int32_t> v) {
  return ir::Tensor::from_values(ir::DType::i32, std::move(dims), v);
}
ir::Tensor u8(std::vector<int64_t> dims, std::vector<uint8_t> v) {
  return ir::Tensor::from_values(ir::DType::u8, std::move(dims), v);
}
ir::Tensor boolean(std::vector<int64_t> dims, std::vector<bool> v) {
  std::vector<uint8_t> bytes(v.begin(), v.end());
  return ir::Tensor::from_values(ir::DType::boolean, std::move(dims), bytes);
}
ir::Tensor scalar_i64(int64_t v) { return i64({}, {v}); }

Expected<std::vector<ir::Tensor>> run_op(ir::Op op, std::vector<std::optional<ir::Tensor>> inputs,
                                         ir::Attributes attributes, int num_outputs) {
  ir::Graph g;
  ir::Node node;
  node.op = op;
  node.attrs = std::move(attributes);
  std::vector<ir::Tensor> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) {
      node.inputs.push_back(ir::kNoValue);
      continue;
    }
    node.inputs.push_back(
        g.add_input(fmt::format("x{}", i), ir::TensorType{inputs[i]->dtype(), ir::Shape::of(inputs[i]->dims())}));
    feeds.push_back(*inputs[i]);
  }
  std::vector<std::string> names;
  for (int i = 0; i < num_outputs; ++i) names.push_back(fmt::format("y{}", i));
  ir::NodeId n = g.add_node(std::move(node), names, {});
  g.set_outputs(g.node(n).outputs);
  (void)g.infer_shapes();  // declared output types (u16/u32 need them); kernels do not rely on it
  return run(g, feeds);
}

ir::Tensor run1(ir::Op op, std::vector<std::optional<ir::Tensor>> inputs, ir::Attributes attributes) {
  auto r = run_op(op, std::move(inputs), std::move(attributes));
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().str());
  if (!r || r->empty()) return ir::Tensor();
  return (*r)[0];
}

std::vector<double> values(const ir::Tensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.as_double(i));
  return out;
}

std::vector<int64_t> ints(const ir::Tensor& t) { return t.to_int_vector(); }

ir::Attributes attrs(std::vector<std::pair<std::string, ir::AttrValue>> entries) {
  ir::Attributes a;
  for (auto& [k, v] : entries) a.set(k, std::move(v));
  return a;
}

void expect_near(const ir::Tensor& t, const std::vector<double>& expected) {
  std::vector<double> got = values(t);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "at " << i;
      continue;
    }
    EXPECT_NEAR(got[i], expected[i], 1e-5 + 1e-5 * std::fabs(expected[i])) << "at " << i;
  }
}

}  // namespace refinery::runtime::testing
