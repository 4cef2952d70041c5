// Subgraphs (If / Loop / Scan bodies): how deep they nest, and whether an
// If's two branches agree. Every reader of a graph, ours, protobuf's and
// ONNX's checker, recurses once per level, so the depth is bounded before any
// of them runs: on the parsed model, and on the raw bytes when protobuf
// refused to parse that deep.
#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cstdint>
#include <vector>

#include "frontends/onnx_internal.h"

namespace refinery::frontends::detail {
namespace {

// The messages on the way from a model to a nested graph; fields of other
// messages are skipped.
enum class Kind { Model, Graph, Function, Node, Attribute, Other };

Kind child_kind(Kind parent, uint64_t field) {
  switch (parent) {
    case Kind::Model: return field == 7 ? Kind::Graph : field == 25 ? Kind::Function : Kind::Other;
    case Kind::Graph: return field == 1 ? Kind::Node : Kind::Other;
    case Kind::Function: return field == 7 ? Kind::Node : Kind::Other;
    case Kind::Node: return field == 5 ? Kind::Attribute : Kind::Other;
    case Kind::Attribute: return field == 6 || field == 11 ? Kind::Graph : Kind::Other;  // g, graphs
    case Kind::Other: return Kind::Other;
  }
  return Kind::Other;
}

bool read_varint(const std::string& bytes, size_t& pos, size_t end, uint64_t& out) {
  out = 0;
  for (int shift = 0; shift < 64 && pos < end; shift += 7) {
    const auto b = static_cast<uint8_t>(bytes[pos++]);
    out |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

}  // namespace

int graph_nesting(const std::string& bytes) {
  struct Frame {
    size_t end;
    Kind kind;
    int depth;  // subgraph levels: the main graph is 0
  };
  std::vector<Frame> stack{{bytes.size(), Kind::Model, -1}};
  int deepest = 0;
  size_t pos = 0;
  while (!stack.empty()) {
    const Frame top = stack.back();
    if (pos >= top.end) {
      stack.pop_back();
      continue;
    }
    uint64_t tag = 0, n = 0;
    if (!read_varint(bytes, pos, top.end, tag)) return deepest;  // malformed: as deep as seen
    switch (tag & 7) {
      case 0:
        if (!read_varint(bytes, pos, top.end, n)) return deepest;
        break;
      case 1: pos += 8; break;
      case 5: pos += 4; break;
      case 2: {
        if (!read_varint(bytes, pos, top.end, n) || n > top.end - pos) return deepest;
        const Kind kind = child_kind(top.kind, tag >> 3);
        if (kind == Kind::Other) {
          pos += n;
          break;
        }
        const int depth = top.depth + (kind == Kind::Graph ? 1 : 0);
        deepest = std::max(deepest, depth);
        if (deepest > kMaxGraphDepth) return deepest;
        stack.push_back({pos + n, kind, depth});
        break;
      }
      default: return deepest;  // groups are not used by ONNX
    }
  }
  return deepest;
}

namespace {

const onnx::GraphProto* branch(const onnx::NodeProto& node, const char* name) {
  for (const auto& a : node.attribute())
    if (a.name() == name && a.has_g()) return &a.g();
  return nullptr;
}

std::string type_name(const onnx::TypeProto& t) {
  if (t.value_case() != onnx::TypeProto::kTensorType) return "a non-tensor";
  return onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(t.tensor_type().elem_type()));
}

// ONNX's rule for If: both branches give as many outputs as the node has,
// of the same types.
std::optional<std::string> if_branches_disagree(const onnx::NodeProto& node) {
  const onnx::GraphProto* then_g = branch(node, "then_branch");
  const onnx::GraphProto* else_g = branch(node, "else_branch");
  if (then_g == nullptr || else_g == nullptr) return std::nullopt;  // the checker names a missing attribute
  if (then_g->output_size() != else_g->output_size() || then_g->output_size() != node.output_size())
    return fmt::format("If branches disagree: then_branch has {} outputs, else_branch {}, the node {}",
                       then_g->output_size(), else_g->output_size(), node.output_size());
  for (int i = 0; i < then_g->output_size(); ++i) {
    const auto& a = then_g->output(i).type();
    const auto& b = else_g->output(i).type();
    if (a.value_case() == onnx::TypeProto::VALUE_NOT_SET || b.value_case() == onnx::TypeProto::VALUE_NOT_SET) continue;
    if (type_name(a) != type_name(b))
      return fmt::format("If branches disagree: output {} is {} in then_branch and {} in else_branch", i, type_name(a),
                         type_name(b));
  }
  return std::nullopt;
}

}  // namespace

Diag nesting_limit(std::string where, const std::string& file) {
  return Diag{
      file, std::move(where),
      fmt::format("subgraphs (If / Loop / Scan bodies) nest more than {} deep, Refinery's limit", kMaxGraphDepth),
      /*limit=*/true};
}

bool parse_nested(const std::string& bytes, google::protobuf::Message* message) {
  google::protobuf::io::ArrayInputStream stream(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&stream);
  coded.SetRecursionLimit(kParseRecursionLimit);
  return message->ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
}

Expected<void> check_subgraphs(const onnx::GraphProto& graph, const std::string& file) {
  struct Item {
    const onnx::GraphProto* graph;
    int depth;
    std::string where;  // the outermost node on the way down
  };
  std::vector<Item> todo{{&graph, 0, {}}};
  while (!todo.empty()) {
    Item item = std::move(todo.back());
    todo.pop_back();
    for (int i = 0; i < item.graph->node_size(); ++i) {
      const auto& node = item.graph->node(i);
      const std::string here = node_where(node, i);
      const std::string where = item.depth == 0 ? here : fmt::format("{} (in {})", here, item.where);
      if (node.op_type() == "If" && (node.domain().empty() || node.domain() == "ai.onnx"))
        if (auto bad = if_branches_disagree(node)) return fail(*bad, where, file);
      for (const auto& a : node.attribute()) {
        std::vector<const onnx::GraphProto*> subs;
        if (a.has_g()) subs.push_back(&a.g());
        for (const auto& g : a.graphs()) subs.push_back(&g);
        for (const auto* sub : subs) {
          if (item.depth + 1 > kMaxGraphDepth)
            return std::unexpected(nesting_limit(item.depth == 0 ? here : item.where, file));
          todo.push_back({sub, item.depth + 1, item.depth == 0 ? here : item.where});
        }
      }
    }
  }
  return {};
}

}  // namespace refinery::frontends::detail
