// Builds small typed graphs for cost-model tests: zero-filled weights of a
// given shape (or filled with distinct values), nodes whose types come from
// shape inference.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace refinery::testing {

class GraphBuilder {
 public:
  ir::ValueId input(const std::string& name, std::vector<int64_t> dims) {
    return g_.add_input(name, ir::TensorType{ir::DType::f32, ir::Shape::of(dims)});
  }
  ir::ValueId weight(const std::string& name, std::vector<int64_t> dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    auto t = std::make_shared<const ir::Tensor>(
        ir::Tensor::from_values<float>(ir::DType::f32, dims, std::vector<float>(static_cast<size_t>(n), 0.f)));
    return g_.add_constant(name, t);
  }
  // A weight of distinct values, sin(seed + 0.37 i) at flat index i.
  ir::ValueId filled(const std::string& name, std::vector<int64_t> dims, double seed) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(std::sin(seed + 0.37 * i));
    return g_.add_constant(name, std::make_shared<const ir::Tensor>(
                                     ir::Tensor::from_values<float>(ir::DType::f32, std::move(dims), v)));
  }
  ir::ValueId ints(const std::string& name, std::vector<int64_t> v) {
    return g_.add_constant(name, std::make_shared<const ir::Tensor>(ir::Tensor::vector_i64(v)));
  }
  std::vector<ir::ValueId> op(ir::Op op, std::vector<ir::ValueId> inputs, ir::Attributes attrs = {}, int outputs = 1) {
    ir::Node n;
    n.op = op;
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    std::vector<std::string> names;
    for (int i = 0; i < outputs; ++i) names.push_back("v" + std::to_string(counter_++));
    ir::NodeId id =
        g_.add_node(std::move(n), names,
                    std::vector<ir::TensorType>(outputs, ir::TensorType{ir::DType::f32, ir::Shape::unranked()}));
    auto ok = g_.infer_shapes();
    EXPECT_TRUE(ok.has_value()) << ok.error().str();
    return g_.node(id).outputs;
  }
  ir::ValueId op1(ir::Op o, std::vector<ir::ValueId> inputs, ir::Attributes attrs = {}) {
    return op(o, std::move(inputs), std::move(attrs))[0];
  }
  ir::Graph finish(std::vector<ir::ValueId> outputs) {
    g_.set_outputs(std::move(outputs));
    auto ok = g_.verify();
    EXPECT_TRUE(ok.has_value()) << ok.error().str();
    return std::move(g_);
  }
  ir::Graph& graph() { return g_; }

 private:
  ir::Graph g_;
  int counter_ = 0;
};

}  // namespace refinery::testing
