// Internal to frontends/: the pieces that import and export share. Tensor and
// type conversion, attribute conversion, external data, the checker wrapper,
// and node ordering. Not a public header: it pulls in the ONNX protobufs.
#pragma once
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <expected>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/diag.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace refinery::frontends::detail {

// --- external data (onnx_external.cpp) --------------------------------------

// Read-only memory maps of external-data files, shared by every tensor that
// refers into them (a tensor keeps its map alive).
class ExternalFiles {
 public:
  explicit ExternalFiles(std::filesystem::path model_dir) : dir_(std::move(model_dir)) {}
  // The bytes [offset, offset + length) of `location` (relative to the model's
  // folder), with the map that keeps them alive. The error says what is wrong
  // (without naming the tensor: the caller does).
  struct Slice {
    std::shared_ptr<const void> owner;
    std::span<const std::byte> bytes;
  };
  std::expected<Slice, std::string> map(const std::string& location, uint64_t offset, std::optional<uint64_t> length);
  // The file `location` names, refused unless it is a regular file inside
  // the model's folder: not absolute, no "..", no link that leads out, not a
  // directory, device or FIFO (ONNX's CVE-2022-25882). Nothing is opened.
  std::expected<std::filesystem::path, std::string> resolve(const std::string& location) const;

 private:
  struct Mapping;
  std::filesystem::path dir_;
  std::map<std::string, std::shared_ptr<const Mapping>> maps_;
};

// Refuses, naming the initializer or node, the tensors of every graph
// (initializers, tensor attributes) whose claims ONNX's checker would take at
// their word: dims past kMaxElements (its count overflows int64) and
// external-data locations that `resolve` refuses (it only stats the path).
// Runs before the checker.
Expected<void> check_tensor_claims(const onnx::GraphProto& graph, const std::filesystem::path& model_dir,
                                   const std::string& file);

// Writes tensors to one external-data file as they are exported.
class ExternalWriter {
 public:
  // Tensors of at least `threshold` bytes go to the file; smaller ones stay inline.
  ExternalWriter(std::filesystem::path temp_path, std::string location, size_t threshold)
      : temp_path_(std::move(temp_path)), location_(std::move(location)), threshold_(threshold) {}
  ~ExternalWriter();
  // Appends `bytes` and points `proto` at them (data_location EXTERNAL).
  std::expected<void, std::string> write(std::span<const std::byte> bytes, onnx::TensorProto* proto);
  std::expected<void, std::string> close();  // flushes; the file stays at temp_path
  bool used() const { return opened_; }
  size_t threshold() const { return threshold_; }
  const std::filesystem::path& temp_path() const { return temp_path_; }
  const std::string& location() const { return location_; }

 private:
  std::filesystem::path temp_path_;
  std::string location_;
  size_t threshold_ = 0;
  std::FILE* file_ = nullptr;
  uint64_t offset_ = 0;
  bool opened_ = false;
};

// --- tensors (onnx_tensor.cpp) -----------------------------------------------

// The element limit and its check are ir's (ir/shape.h), one for a file's
// claims and for the shapes inferred from them.
using ir::element_count;
using ir::kMaxElements;
using ir::ShapeError;

// Converts a TensorProto. Raw data is not copied: the tensor refers into the
// proto, which `keep_alive` owns. External data is mapped through `files`.
// The error message does not name the tensor; callers add where.
std::expected<ir::TensorRef, std::string> tensor_from_proto(const onnx::TensorProto& proto,
                                                            std::shared_ptr<const void> keep_alive,
                                                            ExternalFiles& files);
// Writes dims, data type and raw_data (or external data through `external`).
std::expected<void, std::string> tensor_to_proto(const ir::Tensor& tensor, onnx::TensorProto* proto,
                                                 ExternalWriter* external = nullptr);

// --- types and attributes (onnx_types.cpp) ----------------------------------

// Refuses a tensor type whose shape has a negative dim or whose static dims
// multiply past kMaxElements (the message starts with "has").
std::expected<ir::TensorType, std::string> type_from_proto(const onnx::TypeProto& type);
std::optional<ShapeError> shape_error(const onnx::TypeProto& type);
void type_to_proto(const ir::TensorType& type, onnx::TypeProto* proto);

// Converts one attribute of a node whose op Refinery knows. nullopt: a kind
// Refinery does not model (graph, sparse tensor, type proto, string tensor,
// ...). An error: a tensor that is wrong (its bytes, its external data).
std::expected<std::optional<ir::AttrValue>, std::string> attr_from_proto(const onnx::AttributeProto& proto,
                                                                         std::shared_ptr<const void> keep_alive,
                                                                         ExternalFiles& files);
// Keeps the serialized attribute, for opaque nodes.
ir::OpaqueAttr opaque_attr(const onnx::AttributeProto& proto);
std::expected<void, std::string> attr_to_proto(const std::string& name, const ir::AttrValue& value,
                                               onnx::AttributeProto* proto, ExternalWriter* external = nullptr);

// --- checks (onnx_check.cpp) ------------------------------------------------

// Runs onnx::checker::check_model with external data resolved against
// `model_dir`. The Diag has the checker's first line and, when the checker
// names one, the node.
Expected<void> run_checker(const onnx::ModelProto& model, const std::filesystem::path& model_dir,
                           const std::string& file);

// The value types ONNX's own shape inference finds (value_info and graph
// outputs of an inferred copy), by name. Empty when inference throws.
std::map<std::string, onnx::TypeProto> onnx_inferred_types(const onnx::ModelProto& model);

// --- subgraphs (onnx_subgraphs.cpp) ------------------------------------------

// The most levels of subgraphs (If / Loop / Scan bodies inside bodies) a
// model may have. Readers recurse once per level (protobuf's parser, ONNX's
// checker, ours), so a deeper model is refused before any of them runs.
inline constexpr int kMaxGraphDepth = 64;
// Protobuf's parse depth that kMaxGraphDepth needs (three messages a level,
// graph, node and attribute, plus room for types and tensors).
inline constexpr int kParseRecursionLimit = 3 * kMaxGraphDepth + 64;

// The deepest subgraph level in a serialized ModelProto (the main graph is
// 0), read from the wire format without recursion; it stops early past
// kMaxGraphDepth. For a model protobuf refused to parse.
int graph_nesting(const std::string& bytes);

// The graph with every op newer than its model's default-domain opset
// written as that opset's ops (onnx_lower.cpp); nullopt when there is none.
// An op it cannot write so is a limitation (Diag::limitation).
Expected<std::optional<ir::Graph>> lower_for_opset(const ir::Graph& g, const std::string& file);

// "subgraphs ... nest more than 64 deep": a limitation (Diag::limitation), not bad input.
Diag nesting_limit(std::string where, const std::string& file);

// Parses `bytes` into `message` allowing kParseRecursionLimit levels (the
// default, 100, stops at about 32 nested graphs). False when it does not parse.
bool parse_nested(const std::string& bytes, google::protobuf::Message* message);

// Refuses subgraphs nested past kMaxGraphDepth, and an If whose branches
// disagree with each other or the node (output count, element types). Walks
// every graph without recursion; errors name the node (and the outermost one).
Expected<void> check_subgraphs(const onnx::GraphProto& graph, const std::string& file);

// The result types ONNX's inference gives one node of `model` whose inputs
// have the types `inputs` (by name): Refinery's, which can know more than
// ONNX's pass over the whole model (an Einsum after a Reshape to a computed
// shape). By output name; empty when inference throws.
std::map<std::string, onnx::TypeProto> onnx_node_types(const onnx::ModelProto& model, const onnx::NodeProto& node,
                                                       const std::map<std::string, ir::TensorType>& inputs);

// --- node order (onnx_graph_order.cpp) ---------------------------------------

// Checks that every value a node reads is defined once (by a graph input, an
// initializer or a node) and sorts the nodes topologically, keeping the given
// order where it already is one. Errors name the node and the value. When the
// nodes had to be sorted, the note says so and names the first out of order.
Expected<std::optional<Diag>> sort_nodes(onnx::GraphProto* graph, const std::string& file);

// "node 'name'" or, for a nameless node, "node #index (OpType)".
std::string node_where(const onnx::NodeProto& node, int index);

}  // namespace refinery::frontends::detail
