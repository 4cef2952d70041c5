// ONNX import: parse, check (opset, structure, ONNX checker), build the
// ir::Graph, infer shapes. See docs/onnx.md.
#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/version_converter/convert.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <unordered_map>

#include "frontends/onnx.h"
#include "frontends/onnx_internal.h"

namespace refinery::frontends {
namespace {

using namespace detail;

constexpr int64_t kMinOpset = 13, kMaxOpset = 17;

Expected<std::shared_ptr<onnx::ModelProto>> read_model(const std::filesystem::path& file, const std::string& name) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) return fail("cannot open the file: it is a directory", {}, name);
  std::ifstream in(file, std::ios::binary);
  if (!in) return fail(fmt::format("cannot open the file: {}", std::strerror(errno)), {}, name);
  auto size = std::filesystem::file_size(file, ec);
  if (!ec && size > static_cast<uintmax_t>(INT_MAX))
    return fail("the file is larger than 2 GB; such models must keep their weights in external data", {}, name);
  auto model = std::make_shared<onnx::ModelProto>();
  bool parsed = false;
  {
    google::protobuf::io::IstreamInputStream stream(&in);
    google::protobuf::io::CodedInputStream coded(&stream);
    coded.SetRecursionLimit(kParseRecursionLimit);
    parsed = model->ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
  }
  if (!parsed) {
    // Protobuf gives no reason; the one worth telling apart is nesting.
    std::ifstream again(file, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>());
    if (graph_nesting(bytes) > kMaxGraphDepth) return std::unexpected(nesting_limit({}, name));
  }
  if (!parsed || !model->has_graph())
    return fail("not an ONNX model (the protobuf does not parse: truncated or corrupt file?)", {}, name);
  return model;
}

// Converts a model below opset 13 to opset 13 with ONNX's version converter.
Expected<void> upgrade_opset(std::shared_ptr<onnx::ModelProto>& model, const std::string& name) {
  std::optional<int64_t> opset;
  for (const auto& o : model->opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  if (!opset || *opset >= kMinOpset) return {};
  try {
    auto converted = std::make_shared<onnx::ModelProto>(onnx::version_conversion::ConvertVersion(*model, kMinOpset));
    model = std::move(converted);
  } catch (const std::exception& e) {
    std::string what = e.what();
    return fail(fmt::format("cannot convert opset {} to {}: {}", *opset, kMinOpset, what.substr(0, what.find('\n'))),
                {}, name);
  }
  return {};
}

Expected<void> check_opset(const onnx::ModelProto& model, const std::string& name) {
  std::optional<int64_t> opset;
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  if (!opset) return fail("the model imports no default-domain (ai.onnx) opset", {}, name);
  if (*opset < kMinOpset || *opset > kMaxOpset)
    return fail(fmt::format("default-domain opset {} is not supported (Refinery reads opsets {} to {})", *opset,
                            kMinOpset, kMaxOpset),
                {}, name);
  return {};
}

void copy_info(const onnx::ModelProto& m, ir::ModelInfo& info) {
  info.ir_version = m.ir_version();
  info.opsets.clear();
  for (const auto& o : m.opset_import()) info.opsets[o.domain()] = o.version();
  info.producer_name = m.producer_name();
  info.producer_version = m.producer_version();
  info.domain = m.domain();
  info.model_version = m.model_version();
  info.doc_string = m.doc_string();
  info.graph_name = m.graph().name();
  for (const auto& p : m.metadata_props()) info.metadata.emplace_back(p.key(), p.value());
  info.onnx_functions.clear();
  for (const auto& f : m.functions()) info.onnx_functions.push_back(f.SerializeAsString());
  info.typed_values.clear();
  for (const auto& vi : m.graph().value_info()) info.typed_values.insert(vi.name());
}

// Whether a node with a known op fits the op table: arity, attribute names,
// kinds and required attributes. A node that does not stays opaque.
bool fits_op_table(const ir::Node& node, size_t num_outputs) {
  const ir::OpInfo& info = ir::op_info(node.op);
  const int nin = static_cast<int>(node.inputs.size()), nout = static_cast<int>(num_outputs);
  if (nin < info.min_inputs || (info.max_inputs >= 0 && nin > info.max_inputs)) return false;
  if (nout < info.min_outputs || (info.max_outputs >= 0 && nout > info.max_outputs)) return false;
  for (int i = 0; i < info.min_inputs; ++i)
    if (node.inputs[static_cast<size_t>(i)] == ir::kNoValue) return false;
  for (const auto& [name, value] : node.attrs.entries()) {
    // By name, not by capturing the binding: clang before 16 cannot capture
    // one, and the fuzz build (bench/fuzz) is clang 14.
    auto spec = std::find_if(info.attrs.begin(), info.attrs.end(),
                             [&attr = name](const ir::AttrSpec& s) { return s.name == attr; });
    if (spec == info.attrs.end() || spec->kind != ir::attr_kind(value)) return false;
  }
  for (const auto& s : info.attrs)
    if (s.use == ir::AttrUse::Required && !node.attrs.has(s.name)) return false;
  return true;
}

// An op whose inputs sit elsewhere among the ONNX node's (OpInfo::onnx_inputs):
// its inputs in IR order. False when the node uses an ONNX input the IR's
// form leaves out (it stays opaque).
bool onnx_positions_to_ir(ir::Node& node, const ir::OpInfo& info) {
  std::vector<ir::ValueId> ir_inputs;
  std::vector<bool> used(node.inputs.size(), false);
  for (int at : info.onnx_inputs) {
    auto i = static_cast<size_t>(at);
    ir_inputs.push_back(i < node.inputs.size() ? node.inputs[i] : ir::kNoValue);
    if (i < used.size()) used[i] = true;
  }
  for (size_t i = 0; i < node.inputs.size(); ++i)
    if (!used[i] && node.inputs[i] != ir::kNoValue) return false;
  while (!ir_inputs.empty() && ir_inputs.back() == ir::kNoValue) ir_inputs.pop_back();
  node.inputs = std::move(ir_inputs);
  return true;
}

// A graph output keeps the type the model declares where it says more than
// inference (a symbolic batch stays symbolic); static sizes must agree. A
// size inference proves static wins over a declared name: exporters name
// output dims they did not size (torch: "MatMullogits_dim_1" for a GPT's
// 64 tokens), and a named dim prices as 1 in the cost models, so the
// original's last MatMul cost 1/64 of the same MatMul in any rewrite.
std::expected<ir::TensorType, std::string> merge_declared(const ir::TensorType& declared,
                                                          const ir::TensorType& inferred) {
  if (!inferred.shape.ranked()) return declared;
  auto mismatch = [&] {
    return std::unexpected(fmt::format("is declared {} but shape inference gives {}", declared.str(), inferred.str()));
  };
  if (declared.dtype != inferred.dtype) return mismatch();
  if (!declared.shape.ranked()) return inferred;
  if (declared.shape.rank() != inferred.shape.rank()) return mismatch();
  ir::TensorType out = inferred;
  for (int64_t i = 0; i < declared.shape.rank(); ++i) {
    const ir::Dim& d = declared.shape[i];
    const ir::Dim& x = inferred.shape[i];
    if (d.is_static() && x.is_static() && d.size() != x.size()) return mismatch();
    if (!d.is_unknown() && !x.is_static()) out.shape[i] = d;
  }
  return out;
}

class Importer {
 public:
  Importer(std::shared_ptr<onnx::ModelProto> model, std::filesystem::path dir, std::string file)
      : model_(std::move(model)), files_(std::move(dir)), file_(std::move(file)) {}

  Expected<ir::Graph> run(const OnnxImportOptions& options) {
    // ONNX's inference is not given a model its checker did not pass (it
    // crashes on some: ONNX Runtime's optimized graphs).
    onnx_inference_ = options.run_checker;
    const onnx::GraphProto& g = model_->graph();
    copy_info(*model_, graph_.info);
    for (const auto& vi : g.value_info()) declared_[vi.name()] = &vi.type();
    for (const auto& vi : g.output()) declared_[vi.name()] = &vi.type();
    // A declared shape is refused when ONNX calls it invalid (a negative dim)
    // or past the limits, even where inference would replace it.
    auto check_declared = [&](const char* what, const auto& values) -> Expected<void> {
      for (const auto& vi : values)
        if (auto bad = shape_error(vi.type()))
          return std::unexpected(Diag{file_, {}, fmt::format("{} '{}' {}", what, vi.name(), bad->message), bad->limit});
      return {};
    };
    for (auto ok : {check_declared("graph input", g.input()), check_declared("graph output", g.output()),
                    check_declared("value_info", g.value_info())})
      if (!ok) return std::unexpected(ok.error());

    std::unordered_map<std::string, const onnx::TensorProto*> initializers;
    for (const auto& t : g.initializer()) initializers.emplace(t.name(), &t);
    if (g.sparse_initializer_size() > 0)
      return fail("sparse initializers are not supported",
                  fmt::format("initializer '{}'", g.sparse_initializer(0).values().name()), file_);
    for (const auto& in : g.input()) {
      if (initializers.contains(in.name())) continue;  // an overridable initializer: a constant here
      auto type = type_from_proto(in.type());
      if (!type) return fail(fmt::format("graph input '{}' {}", in.name(), type.error()), {}, file_);
      values_[in.name()] = graph_.add_input(in.name(), *type);
    }
    for (const auto& t : g.initializer()) {
      auto tensor = tensor_from_proto(t, model_, files_);
      if (!tensor) return fail(tensor.error(), fmt::format("initializer '{}'", t.name()), file_);
      values_[t.name()] = graph_.add_constant(t.name(), std::move(*tensor));
    }
    for (int i = 0; i < g.node_size(); ++i)
      if (auto ok = add_node(g.node(i), i); !ok) return std::unexpected(ok.error());

    std::vector<ir::ValueId> outputs;
    for (const auto& out : g.output()) outputs.push_back(values_.at(out.name()));
    graph_.set_outputs(outputs);

    if (options.infer_shapes) {
      do {
        if (auto ok = graph_.infer_shapes(); !ok) {
          Diag d = ok.error();
          d.file = file_;
          return std::unexpected(std::move(d));
        }
      } while (type_opaque_nodes_again());
    }
    for (const auto& out : g.output()) {
      ir::Value& v = graph_.value(values_.at(out.name()));
      if (v.kind != ir::ValueKind::NodeResult) continue;
      auto declared = type_from_proto(out.type());
      if (!declared) return fail(fmt::format("graph output '{}' {}", out.name(), declared.error()), {}, file_);
      auto merged = merge_declared(*declared, v.type);
      if (!merged) return fail(fmt::format("graph output '{}' {}", out.name(), merged.error()), {}, file_);
      v.type = std::move(*merged);
    }
    if (auto ok = graph_.verify(); !ok) {
      Diag d = ok.error();
      d.file = file_;
      return std::unexpected(std::move(d));
    }
    return std::move(graph_);
  }

 private:
  Expected<void> add_node(const onnx::NodeProto& p, int index) {
    ir::Node node;
    node.name = p.name();
    for (const auto& in : p.input()) node.inputs.push_back(in.empty() ? ir::kNoValue : values_.at(in));
    std::optional<ir::Op> op = ir::op_from_onnx(p.domain(), p.op_type());
    if (op) {
      node.op = *op;
      for (const auto& a : p.attribute()) {
        auto value = attr_from_proto(a, model_, files_);
        if (!value) return fail(fmt::format("attribute '{}' {}", a.name(), value.error()), node_where(p, index), file_);
        if (!*value) {
          op.reset();
          break;
        }
        node.attrs.set(a.name(), std::move(**value));
      }
    }
    std::vector<ir::ValueId> onnx_inputs = node.inputs;
    // node.op is *op when op is set (reading op again here trips gcc 12's -Wmaybe-uninitialized)
    if (op && !ir::op_info(node.op).onnx_inputs.empty() && !onnx_positions_to_ir(node, ir::op_info(node.op)))
      op.reset();
    if (op && !fits_op_table(node, static_cast<size_t>(p.output_size()))) op.reset();
    if (!op) {  // opaque: the exporter writes it back exactly as it came
      node.inputs = std::move(onnx_inputs);
      node.op = ir::Op::Opaque;
      node.domain = p.domain();
      node.op_type = p.op_type();
      node.attrs = {};
      for (const auto& a : p.attribute()) node.attrs.set(a.name(), opaque_attr(a));
    }

    std::vector<std::string> names(p.output().begin(), p.output().end());
    std::vector<ir::TensorType> types;
    for (const auto& name : names) types.push_back(start_type(name, node.op == ir::Op::Opaque));
    ir::NodeId id = graph_.add_node(std::move(node), names, types);
    const auto& outs = graph_.node(id).outputs;
    for (size_t i = 0; i < names.size(); ++i)
      if (!names[i].empty()) values_[names[i]] = outs[i];
    return {};
  }

  // An opaque op that ONNX's pass over the whole model left unranked (an
  // Einsum after a Reshape to a computed shape) leaves everything after it
  // unranked. Where its inputs are now ranked, ONNX's inference for that one
  // node, given Refinery's input types, may type it; a re-import of the
  // exported model (whose value_info carries those input types) then reads
  // the same type. True when a node was typed.
  bool type_opaque_nodes_again() {
    bool typed = false;
    for (size_t n = 0; n < graph_.num_nodes(); ++n) {
      const ir::Node& node = graph_.nodes()[n];
      if (node.op != ir::Op::Opaque || tried_.contains(n)) continue;
      bool unranked = false, inputs_ranked = true;
      for (ir::ValueId v : node.outputs) unranked |= !graph_.value(v).type.shape.ranked();
      std::map<std::string, ir::TensorType> inputs;
      for (ir::ValueId v : node.inputs)
        if (v != ir::kNoValue) {
          inputs_ranked &= graph_.value(v).type.shape.ranked();
          inputs[graph_.value(v).name] = graph_.value(v).type;
        }
      if (!unranked || !inputs_ranked) continue;
      tried_.insert(n);  // one try per node: ONNX may know no more
      auto types = onnx_node_types(*model_, model_->graph().node(static_cast<int>(n)), inputs);
      for (ir::ValueId v : node.outputs) {
        ir::Value& out = graph_.value(v);
        auto it = types.find(out.name);
        if (out.type.shape.ranked() || it == types.end()) continue;
        if (auto t = type_from_proto(it->second); t && t->shape.ranked()) {
          out.type = without_invented_dims(*t);
          typed = true;
        }
      }
    }
    return typed;
  }

  // ONNX's inference names a dim it cannot size "unk__N", numbered per run:
  // an unknown dim, not a name the model gave.
  static ir::TensorType without_invented_dims(ir::TensorType t) {
    if (t.shape.ranked())
      for (ir::Dim& d : t.shape.dims())
        if (d.is_symbol() && d.name().starts_with("unk__")) d = ir::Dim::unknown();
    return t;
  }

  // The type a node result starts with: what the model declares, else (for
  // opaque ops, whose types Refinery cannot infer) what ONNX's inference finds.
  ir::TensorType start_type(const std::string& name, bool opaque) {
    const onnx::TypeProto* proto = nullptr;
    if (auto it = declared_.find(name); it != declared_.end()) proto = it->second;
    if (opaque && onnx_inference_) {
      if (!onnx_types_) onnx_types_ = onnx_inferred_types(*model_);
      if (auto it = onnx_types_->find(name); it != onnx_types_->end())
        if (auto t = type_from_proto(it->second)) return without_invented_dims(*t);
    }
    if (proto != nullptr)
      if (auto t = type_from_proto(*proto)) return *t;
    return ir::TensorType{ir::DType::f32, ir::Shape::unranked()};
  }

  std::shared_ptr<onnx::ModelProto> model_;
  ExternalFiles files_;
  std::string file_;
  ir::Graph graph_;
  std::unordered_map<std::string, ir::ValueId> values_;
  std::unordered_map<std::string, const onnx::TypeProto*> declared_;
  std::optional<std::map<std::string, onnx::TypeProto>> onnx_types_;
  std::set<size_t> tried_;  // opaque nodes typed by ONNX's inference for the node alone
  bool onnx_inference_ = true;
};

}  // namespace

Expected<ir::Graph> import_onnx(const std::filesystem::path& file, const OnnxImportOptions& options) {
  const std::string name = file.string();
  auto model = read_model(file, name);
  if (!model) return std::unexpected(model.error());
  if (auto ok = check_subgraphs((*model)->graph(), name); !ok) return std::unexpected(ok.error());
  if (options.upgrade_old_opset)
    if (auto ok = upgrade_opset(*model, name); !ok) return std::unexpected(ok.error());
  if (auto ok = check_opset(**model, name); !ok) return std::unexpected(ok.error());
  auto sorted = sort_nodes((*model)->mutable_graph(), name);
  if (!sorted) return std::unexpected(sorted.error());
  if (*sorted && options.notes != nullptr) options.notes->push_back(std::move(**sorted));
  const std::filesystem::path dir = file.parent_path();
  if (auto ok = check_tensor_claims((*model)->graph(), dir, name); !ok) return std::unexpected(ok.error());
  if (options.run_checker)
    if (auto ok = run_checker(**model, dir, name); !ok) return std::unexpected(ok.error());
  return Importer(std::move(*model), dir, name).run(options);
}

}  // namespace refinery::frontends
