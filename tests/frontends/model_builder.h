// Builds small ONNX models in C++ for the frontend tests, and compares
// imported graphs structurally.
#pragma once
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/graph.h"

namespace refinery::frontends::testing {

using DimSpec = std::variant<int64_t, std::string>;  // a size or a symbol

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 17);
  ModelBuilder& input(const std::string& name, int elem_type, const std::vector<DimSpec>& dims);
  ModelBuilder& output(const std::string& name, int elem_type, const std::vector<DimSpec>& dims);
  onnx::NodeProto& node(const std::string& op_type, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "",
                        const std::string& domain = "");
  onnx::TensorProto& initializer_f32(const std::string& name, const std::vector<int64_t>& dims,
                                     const std::vector<float>& values);
  // An f32 initializer whose bytes live in `location` (external data), with
  // offset and length keys when given.
  onnx::TensorProto& initializer_external(const std::string& name, const std::vector<int64_t>& dims,
                                          const std::string& location, std::optional<uint64_t> offset = {},
                                          std::optional<uint64_t> length = {});
  ModelBuilder& import_domain(const std::string& domain, int64_t version);
  onnx::ModelProto& model() { return model_; }
  // Serializes the model to dir/file_name and returns the path.
  std::filesystem::path write(const std::filesystem::path& dir, const std::string& file_name) const;

 private:
  onnx::ModelProto model_;
};

void set_dims(onnx::TypeProto* type, int elem_type, const std::vector<DimSpec>& dims);
onnx::AttributeProto& add_attr(onnx::NodeProto& node, const std::string& name, int64_t value);
onnx::AttributeProto& add_attr(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& value);
onnx::AttributeProto& add_attr(onnx::NodeProto& node, const std::string& name, const std::string& value);
onnx::AttributeProto& add_attr(onnx::NodeProto& node, const std::string& name, float value);

onnx::ModelProto read_model_proto(const std::filesystem::path& file);

// A graph of `depth` If nodes each inside the then_branch of the one before
// (the main graph reads bool input "c" and gives f32 output "y").
ModelBuilder nested_ifs(int depth);

// A chain of `length` Relu nodes from input "x" [1] to output "y".
ModelBuilder relu_chain(int length);

// A fresh, empty folder under the test's temp dir.
std::filesystem::path fresh_dir(const std::string& name);

// Differences between two graphs (ops, names, attributes, constant bytes,
// inputs/outputs and their types); empty when they match.
std::vector<std::string> graph_differences(const ir::Graph& a, const ir::Graph& b);

// Runs `node tools/ort/compare.mjs a b --exact --opt OPT` (ONNX Runtime's
// graph optimizations: disable, basic, extended or all): its exit status and output.
// ONNX Runtime is part of the set-up (scripts/setup.sh installs it), so its
// absence is a failure with a message that says so, never a skip.
struct OrtResult {
  int status;
  std::string output;
};
OrtResult ort_compare_exact(const std::filesystem::path& a, const std::filesystem::path& b,
                            const std::string& opt = "disable");

// Runs `node tools/ort/profile.mjs model --runs 1 --optimized out` (ONNX
// Runtime at `all`, one thread) and returns the op types of the optimized
// graph it wrote, in its order; empty with the tool's output in `why` when it failed.
std::vector<std::string> ort_optimized_ops(const std::filesystem::path& model, const std::filesystem::path& out,
                                           std::string* why);

}  // namespace refinery::frontends::testing
