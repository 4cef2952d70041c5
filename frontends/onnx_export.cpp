// ONNX export: ir::Graph -> ModelProto, checked, written atomically (temp
// files in the output's folder, then rename: the data file first).
#include <fmt/format.h>

#include <algorithm>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <set>

#include "frontends/onnx.h"
#include "frontends/onnx_internal.h"

namespace refinery::frontends {
namespace {

using namespace detail;

// Protobuf cannot serialize a message of 2 GB or more; leave room for the
// graph itself.
constexpr uint64_t kInlineLimit = (uint64_t{2} << 30) - (uint64_t{64} << 20);

// Every value gets a unique name. Names from the model are kept; values
// without one (or whose name is taken) get "_v<index>". A node result that
// has no name and no use stays nameless, so ONNX sees an omitted optional
// output.
std::vector<std::string> value_names(const ir::Graph& g) {
  std::vector<std::string> names(g.num_values());
  std::set<std::string> taken;
  const auto uses = g.use_counts();
  std::vector<size_t> unnamed;
  for (size_t i = 0; i < g.num_values(); ++i) {
    const std::string& name = g.values()[i].name;
    if (!name.empty() && taken.insert(name).second)
      names[i] = name;
    else if (!name.empty() || uses[i] > 0 || g.values()[i].kind != ir::ValueKind::NodeResult)
      unnamed.push_back(i);
  }
  for (size_t i : unnamed) {
    std::string name = fmt::format("_v{}", i);
    for (int k = 1; taken.contains(name); ++k) name = fmt::format("_v{}_{}", i, k);
    taken.insert(name);
    names[i] = std::move(name);
  }
  return names;
}

std::string temp_name(const std::filesystem::path& file, std::string_view what) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format(".{}.{}{:x}.tmp", file.filename().string(), what, rng() & 0xffffffffu);
}

uint64_t tensor_bytes(const ir::Graph& g) {
  uint64_t total = 0;
  for (ir::ValueId c : g.constants()) total += g.value(c).constant->bytes().size();
  for (const auto& node : g.nodes())
    for (const auto& [name, value] : node.attrs.entries())
      if (const auto* t = std::get_if<ir::TensorRef>(&value); t && *t) total += (*t)->bytes().size();
  return total;
}

Expected<void> build_model(const ir::Graph& g, onnx::ModelProto& m, ExternalWriter* external, const std::string& file) {
  const ir::ModelInfo& info = g.info;
  m.set_ir_version(info.ir_version);
  std::map<std::string, int64_t> opsets = info.opsets;
  if (!opsets.contains("") && !opsets.contains("ai.onnx")) opsets[""] = 17;
  for (const auto& node : g.nodes()) {
    if (node.op == ir::Op::Opaque && !opsets.contains(node.domain)) opsets[node.domain] = 1;
    // A contrib op's domain is imported only where one is used (version 1: ONNX Runtime's com.microsoft).
    if (std::string domain(ir::op_info(node.op).onnx_domain); !domain.empty() && !opsets.contains(domain))
      opsets[domain] = 1;
  }
  for (const auto& [domain, version] : opsets) {
    auto* o = m.add_opset_import();
    o->set_domain(domain);
    o->set_version(version);
  }
  if (!info.producer_name.empty()) m.set_producer_name(info.producer_name);
  if (!info.producer_version.empty()) m.set_producer_version(info.producer_version);
  if (!info.domain.empty()) m.set_domain(info.domain);
  if (info.model_version != 0) m.set_model_version(info.model_version);
  if (!info.doc_string.empty()) m.set_doc_string(info.doc_string);
  for (const auto& [key, value] : info.metadata) {
    auto* p = m.add_metadata_props();
    p->set_key(key);
    p->set_value(value);
  }
  for (const std::string& f : info.onnx_functions)
    if (!parse_nested(f, m.add_functions()))
      return std::unexpected(Diag{file, "", "a model-local function does not parse"});

  const auto names = value_names(g);
  auto name_of = [&](ir::ValueId v) { return v == ir::kNoValue ? std::string() : names[ir::index(v)]; };
  auto* graph = m.mutable_graph();
  graph->set_name(info.graph_name);
  auto add_value_info = [&](google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, ir::ValueId v) {
    auto* vi = list->Add();
    vi->set_name(name_of(v));
    type_to_proto(g.value(v).type, vi->mutable_type());
  };
  for (ir::ValueId v : g.inputs()) add_value_info(graph->mutable_input(), v);
  for (ir::ValueId v : g.constants()) {
    auto* t = graph->add_initializer();
    t->set_name(name_of(v));
    if (auto ok = tensor_to_proto(*g.value(v).constant, t, external); !ok)
      return fail(ok.error(), fmt::format("initializer '{}'", name_of(v)), file);
  }
  for (size_t n = 0; n < g.num_nodes(); ++n) {
    const ir::Node& node = g.nodes()[n];
    auto* p = graph->add_node();
    if (!node.name.empty()) p->set_name(node.name);
    if (node.op == ir::Op::Opaque) {
      p->set_op_type(node.op_type);
      if (!node.domain.empty()) p->set_domain(node.domain);
    } else {
      p->set_op_type(std::string(ir::op_info(node.op).onnx_name));
      if (!ir::op_info(node.op).onnx_domain.empty()) p->set_domain(std::string(ir::op_info(node.op).onnx_domain));
    }
    // Trailing absent optional inputs are dropped, middle ones stay "".
    std::vector<ir::ValueId> inputs = node.inputs;
    if (node.op != ir::Op::Opaque && !ir::op_info(node.op).onnx_inputs.empty()) {
      // The ONNX positions of the IR's inputs (OpInfo::onnx_inputs).
      const std::vector<int>& at = ir::op_info(node.op).onnx_inputs;
      inputs.assign(static_cast<size_t>(*std::max_element(at.begin(), at.end()) + 1), ir::kNoValue);
      for (size_t i = 0; i < node.inputs.size() && i < at.size(); ++i)
        inputs[static_cast<size_t>(at[i])] = node.inputs[i];
    }
    size_t nin = inputs.size();
    while (nin > 0 && inputs[nin - 1] == ir::kNoValue) --nin;
    for (size_t i = 0; i < nin; ++i) p->add_input(name_of(inputs[i]));
    size_t nout = node.outputs.size();
    while (nout > 0 && name_of(node.outputs[nout - 1]).empty()) --nout;
    for (size_t i = 0; i < nout; ++i) p->add_output(name_of(node.outputs[i]));
    for (const auto& [name, value] : node.attrs.entries())
      if (auto ok = attr_to_proto(name, value, p->add_attribute(), external); !ok)
        return fail(fmt::format("attribute '{}': {}", name, ok.error()),
                    fmt::format("node '{}'", g.node_label(ir::NodeId{static_cast<uint32_t>(n)})), file);
  }
  std::set<ir::ValueId> is_output(g.outputs().begin(), g.outputs().end());
  for (ir::ValueId v : g.outputs()) add_value_info(graph->mutable_output(), v);
  // Intermediate types: those the source model gave (ModelInfo::typed_values)
  // and an opaque node's results, which ONNX may not infer again; only ranked
  // ones are certain.
  for (const auto& node : g.nodes())
    for (ir::ValueId v : node.outputs)
      if (!is_output.contains(v) && !name_of(v).empty() && g.value(v).type.shape.ranked() &&
          (node.op == ir::Op::Opaque || g.info.typed_values.contains(name_of(v))))
        add_value_info(graph->mutable_value_info(), v);
  return {};
}

// Writes `bytes` to `path`, flushed to disk.
Expected<void> write_file(const std::filesystem::path& path, const std::string& bytes, const std::string& file) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return fail(fmt::format("cannot create '{}': {}", path.string(), std::strerror(errno)), {}, file);
  bool ok =
      std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size() && std::fflush(f) == 0 && fsync(fileno(f)) == 0;
  int err = errno;
  ok = std::fclose(f) == 0 && ok;
  if (!ok) return fail(fmt::format("cannot write '{}': {}", path.string(), std::strerror(err)), {}, file);
  return {};
}

}  // namespace

Expected<void> export_onnx(const ir::Graph& graph, const std::filesystem::path& file,
                           const OnnxExportOptions& options) {
  const std::string name = file.string();
  std::filesystem::path dir = file.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return fail("cannot write: the folder does not exist", {}, name);

  const bool external = options.force_external || tensor_bytes(graph) > kInlineLimit;
  const std::string data_location = file.filename().string() + ".data";
  const std::filesystem::path data_temp = dir / temp_name(file, "data");
  const std::filesystem::path model_temp = dir / temp_name(file, "model");
  ExternalWriter writer(data_temp, data_location, options.external_threshold);
  struct Cleanup {  // leaves nothing behind unless the renames happened
    std::vector<std::filesystem::path> paths;
    ~Cleanup() {
      std::error_code ec;
      for (const auto& p : paths) std::filesystem::remove(p, ec);
    }
  } cleanup{{data_temp, model_temp}};

  auto lowered = lower_for_opset(graph, name);
  if (!lowered) return std::unexpected(lowered.error());
  onnx::ModelProto model;
  if (auto ok = build_model(*lowered ? **lowered : graph, model, external ? &writer : nullptr, name); !ok) return ok;
  if (auto ok = writer.close(); !ok) return fail(ok.error(), {}, name);

  // Check with the external data where it is now (the temp file), then point
  // the tensors at the final name.
  auto relocate = [&](const std::string& location) {
    auto fix = [&](onnx::TensorProto& t) {
      for (auto& e : *t.mutable_external_data())
        if (e.key() == "location") e.set_value(location);
    };
    for (auto& t : *model.mutable_graph()->mutable_initializer()) fix(t);
    for (auto& n : *model.mutable_graph()->mutable_node())
      for (auto& a : *n.mutable_attribute())
        if (a.has_t()) fix(*a.mutable_t());
  };
  if (writer.used()) relocate(data_temp.filename().string());
  if (auto ok = run_checker(model, dir, name); !ok) return ok;
  if (writer.used()) relocate(data_location);

  if (model.ByteSizeLong() >= (uint64_t{2} << 30))
    return fail("the model is larger than 2 GB even with its weights in external data", {}, name);
  if (auto ok = write_file(model_temp, model.SerializeAsString(), name); !ok) return ok;
  if (writer.used()) {
    std::filesystem::rename(data_temp, dir / data_location, ec);
    if (ec) return fail(fmt::format("cannot rename '{}': {}", data_temp.string(), ec.message()), {}, name);
  }
  std::filesystem::rename(model_temp, file, ec);
  if (ec) return fail(fmt::format("cannot rename '{}': {}", model_temp.string(), ec.message()), {}, name);
  return {};
}

}  // namespace refinery::frontends
