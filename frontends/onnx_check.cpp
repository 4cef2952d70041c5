// The ONNX checker and ONNX's own shape inference, wrapped so that their
// exceptions become one-line Diags.
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <fmt/format.h>

#include "frontends/onnx_internal.h"

namespace onnx::checker {
// Exported by libonnx 1.12 but not declared in its header: the overload that
// takes a context, so external data resolves against the model's folder
// without reading the model file a second time.
void check_model(const ModelProto& model, CheckerContext& ctx);
}  // namespace onnx::checker

namespace refinery::frontends::detail {
namespace {

// The checker's message is "what\n\n==> Context: Bad node spec for node.
// Name: X OpType: Y"; keep the first line and the node's name.
Diag checker_diag(const std::string& what, const std::string& file) {
  std::string first = what.substr(0, what.find('\n'));
  std::string where;
  const std::string key = "Bad node spec for node. Name: ";
  if (auto at = what.find(key); at != std::string::npos) {
    auto begin = at + key.size();
    auto end = what.find(" OpType: ", begin);
    std::string name = what.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    std::string op = end == std::string::npos ? "" : what.substr(end + 9, what.find('\n', end) - end - 9);
    where = name.empty() ? fmt::format("node ({})", op) : fmt::format("node '{}'", name);
  }
  return Diag{file, std::move(where), "ONNX checker: " + first};
}

}  // namespace

Expected<void> run_checker(const onnx::ModelProto& model, const std::filesystem::path& model_dir,
                           const std::string& file) {
  onnx::checker::CheckerContext ctx;
  std::string dir = model_dir.empty() ? std::string(".") : model_dir.string();
  ctx.set_model_dir(dir);
  try {
    onnx::checker::check_model(model, ctx);
  } catch (const std::exception& e) {
    return std::unexpected(checker_diag(e.what(), file));
  }
  return {};
}

std::map<std::string, onnx::TypeProto> onnx_inferred_types(const onnx::ModelProto& model) {
  // Inference reads only small initializers (shapes, axes); leave the weights
  // out of the copy so a large model is not held twice.
  static constexpr size_t kKeepBytes = 64 * 1024;
  onnx::ModelProto copy;
  copy.set_ir_version(model.ir_version());
  *copy.mutable_opset_import() = model.opset_import();
  *copy.mutable_functions() = model.functions();
  const auto& from = model.graph();
  auto* graph = copy.mutable_graph();
  graph->set_name(from.name());
  *graph->mutable_node() = from.node();
  *graph->mutable_input() = from.input();
  *graph->mutable_output() = from.output();
  *graph->mutable_value_info() = from.value_info();
  *graph->mutable_sparse_initializer() = from.sparse_initializer();
  for (const auto& init : from.initializer()) {
    auto* to = graph->add_initializer();
    if (init.data_location() != onnx::TensorProto::EXTERNAL && init.ByteSizeLong() <= kKeepBytes) {
      to->CopyFrom(init);
    } else {
      to->set_name(init.name());
      to->set_data_type(init.data_type());
      *to->mutable_dims() = init.dims();
    }
  }
  std::map<std::string, onnx::TypeProto> types;
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/false, /*error_mode=*/0, /*data_prop=*/true);
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception&) {
    return types;
  }
  for (const auto& vi : copy.graph().value_info()) types[vi.name()] = vi.type();
  for (const auto& vi : copy.graph().output()) types[vi.name()] = vi.type();
  return types;
}

std::map<std::string, onnx::TypeProto> onnx_node_types(const onnx::ModelProto& model, const onnx::NodeProto& node,
                                                       const std::map<std::string, ir::TensorType>& inputs) {
  static constexpr size_t kKeepBytes = 64 * 1024;  // small constants (shapes, axes) go in as values
  onnx::ModelProto one;
  one.set_ir_version(model.ir_version());
  *one.mutable_opset_import() = model.opset_import();
  *one.mutable_functions() = model.functions();
  auto* graph = one.mutable_graph();
  graph->set_name(model.graph().name());
  *graph->add_node() = node;
  for (const auto& [name, type] : inputs) {
    auto* vi = graph->add_input();
    vi->set_name(name);
    type_to_proto(type, vi->mutable_type());
  }
  for (const auto& init : model.graph().initializer())
    if (inputs.contains(init.name()) && init.data_location() != onnx::TensorProto::EXTERNAL &&
        init.ByteSizeLong() <= kKeepBytes)
      *graph->add_initializer() = init;
  std::map<std::string, onnx::TypeProto> types;
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/false, /*error_mode=*/0, /*data_prop=*/true);
    onnx::shape_inference::InferShapes(one, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception&) {
    return types;
  }
  for (const auto& vi : one.graph().value_info()) types[vi.name()] = vi.type();
  return types;
}

}  // namespace refinery::frontends::detail
