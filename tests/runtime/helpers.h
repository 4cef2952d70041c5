// Small graphs for the interpreter tests: one op over given tensors, and
// readers that turn results back into plain vectors. Expected values in the
// tests are worked out by hand, never by ATen.
#pragma once
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "ir/graph.h"
#include "runtime/interpreter.h"

namespace refinery::runtime::testing {

ir::Tensor f32(std::vector<int64_t> dims, std::vector<float> v);
ir::Tensor f64(std::vector<int64_t> dims, std::vector<double> v);
ir::Tensor i64(std::vector<int64_t> dims, std::vector<int64_t> v);
ir::Tensor i32(std::vector<int64_t> dims, std::vector<int32_t> v);
ir::Tensor u8(std::vector<int64_t> dims, std::vector<uint8_t> v);
ir::Tensor boolean(std::vector<int64_t> dims, std::vector<bool> v);
ir::Tensor scalar_i64(int64_t v);

// Every tensor becomes a graph input (nullopt: an absent optional input);
// returns the node's outputs.
Expected<std::vector<ir::Tensor>> run_op(ir::Op op, std::vector<std::optional<ir::Tensor>> inputs,
                                         ir::Attributes attrs = {}, int num_outputs = 1);
// As run_op, expecting success and one output.
ir::Tensor run1(ir::Op op, std::vector<std::optional<ir::Tensor>> inputs, ir::Attributes attrs = {});

std::vector<double> values(const ir::Tensor& t);
std::vector<int64_t> ints(const ir::Tensor& t);

ir::Attributes attrs(std::vector<std::pair<std::string, ir::AttrValue>> entries);

// Element-wise |a - b| <= 1e-5 + 1e-5 |b|, NaN matching NaN.
void expect_near(const ir::Tensor& t, const std::vector<double>& expected);

}  // namespace refinery::runtime::testing
