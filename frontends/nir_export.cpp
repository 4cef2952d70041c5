// NIR export: ir::Graph -> the HDF5 layout NIR's serialization.py writes.
// `sum` and `identity` nodes are edge junctions: their operands' edges go to
// their consumers (a graph output becomes an Output node of the junction's name).
// Names with '/' are re-nested: "rnn/lif" is node "lif" of the NIRGraph "rnn",
// and a junction "rnn/x" that reads from outside "rnn" is that graph's Input,
// one that is read from outside is its Output (as import inlines them).
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <set>

#include "frontends/nir.h"
#include "frontends/nir_hdf5.h"
#include "frontends/nir_internal.h"
#include "ir/spiking.h"

namespace refinery::frontends {
namespace {

using ir::Op;

bool junction(const ir::Node& n) { return n.op == Op::Sum || n.op == Op::Identity; }

// "a/b/c" -> "a/b" (the graph it lives in; "" is the top level) and "c".
std::string parent_of(const std::string& name) {
  size_t slash = name.rfind('/');
  return slash == std::string::npos ? std::string() : name.substr(0, slash);
}
std::string local_of(const std::string& name) { return name.substr(name.rfind('/') + 1); }
bool inside(const std::string& name, const std::string& graph) {
  return graph.empty() || name.rfind(graph + "/", 0) == 0;
}

enum class Port { None, Input, Output };

// One NIRGraph group being written: its "nodes" group, names and edges.
struct GraphGroup {
  h5::Handle group, nodes;
  std::set<std::string> names;
  std::vector<std::pair<std::string, std::string>> edges;
  int inputs = 0, outputs = 0;  // Input and Output nodes (of nested graphs)
};

struct Exporter {
  const ir::Graph& g;
  bool compress;
  std::map<std::string, GraphGroup> graphs;  // "" (top level), "rnn", "rnn/inner", ...
  std::vector<Port> ports;                   // by node index: the Input/Output nodes of nested graphs

  std::string label(ir::NodeId n) const { return fmt::format("node '{}'", g.node_label(n)); }

  // A junction "P/x" inside a nested graph P is P's Input when one of its
  // operands comes from outside P, its Output when a node outside P (or the
  // graph's result) reads it; otherwise it dissolves into edges like others.
  void find_ports() {
    ports.assign(g.num_nodes(), Port::None);
    std::vector<std::vector<std::string>> readers(g.num_values());
    for (const ir::Node& n : g.nodes())
      for (ir::ValueId in : n.inputs)
        if (in != ir::kNoValue) readers[index(in)].push_back(g.value(n.outputs[0]).name);
    for (ir::ValueId v : g.outputs()) readers[index(v)].push_back("");
    for (size_t i = 0; i < g.num_nodes(); ++i) {
      const ir::Node& n = g.nodes()[i];
      const std::string& name = g.value(n.outputs[0]).name;
      std::string graph = parent_of(name);
      if (!junction(n) || graph.empty()) continue;
      for (ir::ValueId in : n.inputs)
        if (!inside(g.value(in).name, graph)) ports[i] = Port::Input;
      if (ports[i] != Port::None) continue;
      for (const std::string& r : readers[index(n.outputs[0])])
        if (r.empty() || !inside(r, graph)) ports[i] = Port::Output;
    }
  }

  Port port_of(const std::string& name) const {
    auto v = g.find_value(name);
    if (!v || g.value(*v).kind != ir::ValueKind::NodeResult) return Port::None;
    return ports[index(g.value(*v).producer)];
  }

  // NIR node names (qualified) whose outputs sum into value v.
  Expected<std::vector<std::string>> sources(ir::ValueId v, int depth = 0) const {
    const ir::Value& val = g.value(v);
    if (val.kind == ir::ValueKind::Constant) return fail(fmt::format("constant '{}' feeds a NIR input", val.name));
    if (val.kind == ir::ValueKind::Input) return std::vector<std::string>{val.name};
    const ir::Node& n = g.node(val.producer);
    if (!junction(n) || ports[index(val.producer)] != Port::None || depth > 64)
      return std::vector<std::string>{val.name};
    std::vector<std::string> out;
    for (ir::ValueId in : n.inputs) {
      auto s = sources(in, depth + 1);
      if (!s) return s;
      out.insert(out.end(), s->begin(), s->end());
    }
    return out;
  }

  // The group of graph `path`, created (with its parents) on first use.
  Expected<GraphGroup*> graph_group(const std::string& path) {
    if (auto it = graphs.find(path); it != graphs.end()) return &it->second;
    auto parent = graph_group(parent_of(path));
    if (!parent) return parent;
    std::string local = local_of(path);
    if (local.empty() || !(*parent)->names.insert(local).second)
      return fail(fmt::format("'{}' cannot be a nested NIR graph's name (empty, or also a node's name)", path));
    GraphGroup gg;
    gg.group = h5::Handle(H5Gcreate2((*parent)->nodes.get(), local.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    if (!gg.group.valid()) return fail(fmt::format("cannot create group for graph '{}'", path));
    if (auto ok = h5::write_string(gg.group.get(), "type", "NIRGraph"); !ok) return std::unexpected(ok.error());
    gg.nodes = h5::Handle(H5Gcreate2(gg.group.get(), "nodes", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    return &graphs.emplace(path, std::move(gg)).first->second;
  }

  // A node group for the qualified name, in its (nested) graph.
  Expected<h5::Handle> node_group(const std::string& name, std::string_view type) {
    auto graph = graph_group(parent_of(name));
    if (!graph) return std::unexpected(graph.error());
    std::string local = local_of(name);
    if (local.empty() || !(*graph)->names.insert(local).second)
      return fail(fmt::format("'{}' cannot be a NIR node name (empty or duplicate)", name));
    h5::Handle grp(H5Gcreate2((*graph)->nodes.get(), local.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    if (!grp.valid()) return fail(fmt::format("cannot create group for node '{}'", name));
    if (auto ok = h5::write_string(grp.get(), "type", std::string(type)); !ok) return std::unexpected(ok.error());
    if (type == "Input" && !parent_of(name).empty()) ++(*graph)->inputs;
    if (type == "Output" && !parent_of(name).empty()) ++(*graph)->outputs;
    return grp;
  }

  // Where an edge end lies: (graph, name in that graph). A nested graph's
  // Output is seen from outside as the graph itself, and so is its Input.
  std::pair<std::string, std::string> end_of(const std::string& name, Port seen_as) const {
    std::string graph = parent_of(name);
    if (!graph.empty() && port_of(name) == seen_as) return {parent_of(graph), local_of(graph)};
    return {graph, local_of(name)};
  }

  Expected<void> add_edges(const std::string& to, ir::ValueId from) {
    auto s = sources(from);
    if (!s) return std::unexpected(s.error());
    auto [graph, target] = end_of(to, Port::Input);
    for (const auto& src : *s) {
      auto [src_graph, source] = end_of(src, Port::Output);
      if (src_graph != graph)
        return fail(
            fmt::format("edge '{}' -> '{}' crosses the boundary of a nested graph other than through its "
                        "Input or Output node",
                        src, to));
      graphs.at(graph).edges.emplace_back(source, target);
    }
    return {};
  }

  // A nested graph's Input or Output node, with the shape of what it passes on.
  Expected<void> port_node(ir::NodeId id) {
    const ir::Node& n = g.node(id);
    const ir::Value& val = g.value(n.outputs[0]);
    auto grp = node_group(val.name, ports[index(id)] == Port::Input ? "Input" : "Output");
    if (!grp) return fail(grp.error().message, label(id));
    if (auto ok = h5::write_ints(grp->get(), "shape", val.type.shape.sizes(), false); !ok) return ok;
    for (ir::ValueId in : n.inputs)
      if (auto ok = add_edges(val.name, in); !ok) return fail(ok.error().message, label(id));
    return {};
  }

  Expected<void> op_node(ir::NodeId id) {
    const ir::Node& n = g.node(id);
    std::string type(nir::type_of_op(n.op));
    if (type.empty())
      return fail(
          fmt::format("op '{}' has no NIR primitive", n.op == Op::Opaque ? n.op_type : std::string(ir::op_name(n.op))),
          label(id));
    std::string name = g.value(n.outputs[0]).name;
    auto grp = node_group(name, type);
    if (!grp) return fail(grp.error().message, label(id));
    hid_t h = grp->get();
    auto operands = ir::operand_names(n.op);
    for (size_t i = 1; i < n.inputs.size() && i < operands.size(); ++i) {
      if (n.inputs[i] == ir::kNoValue) continue;
      const ir::Value& v = g.value(n.inputs[i]);
      if (v.kind != ir::ValueKind::Constant)
        return fail(fmt::format("parameter '{}' is not a constant", operands[i]), label(id));
      if (auto ok = h5::write_tensor(h, std::string(operands[i]), *v.constant, compress); !ok)
        return fail(ok.error().message, label(id));
    }
    const ir::Shape& in = g.value(n.inputs[0]).type.shape;
    auto write = [&](const std::string& key, const std::vector<int64_t>& v, bool scalar = false) {
      return h5::write_ints(h, key, v, scalar);
    };
    Expected<void> ok;
    auto half_pads = [&](const std::vector<int64_t>& pads) -> Expected<std::vector<int64_t>> {
      size_t k = pads.size() / 2;
      std::vector<int64_t> begin(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(k));
      if (std::vector<int64_t>(pads.begin() + static_cast<std::ptrdiff_t>(k), pads.end()) != begin)
        return fail("asymmetric padding has no NIR form", label(id));
      return begin;
    };
    const ir::OpAttrs attrs(n.op, n.attrs, in.rank());
    if (n.op == Op::NirConv1d || n.op == Op::NirConv2d) {
      auto pads = half_pads(attrs.get_ints("pads"));
      if (!pads) return std::unexpected(pads.error());
      std::vector<int64_t> sizes = in.sizes(), input_shape(sizes.begin() + 1, sizes.end());
      if (!(ok = write("stride", attrs.get_ints("strides")))) return ok;
      if (!(ok = write("padding", *pads))) return ok;
      if (!(ok = write("dilation", attrs.get_ints("dilations")))) return ok;
      if (!(ok = write("groups", {attrs.get_int("group")}, true))) return ok;
      if (!(ok = write("input_shape", input_shape))) return ok;
    } else if (n.op == Op::SumPool2d || n.op == Op::AvgPool2d) {
      auto pads = half_pads(attrs.get_ints("pads"));
      if (!pads) return std::unexpected(pads.error());
      if (!(ok = write("kernel_size", n.attrs.get_ints("kernel_shape")))) return ok;
      if (!(ok = write("stride", attrs.get_ints("strides")))) return ok;
      if (!(ok = write("padding", *pads))) return ok;
    } else if (n.op == Op::NirFlatten) {
      if (!(ok = write("start_dim", {attrs.get_int("start_dim")}, true))) return ok;
      if (!(ok = write("end_dim", {attrs.get_int("end_dim")}, true))) return ok;
      if (!(ok = write("input_type", in.sizes()))) return ok;
    }
    if (auto ok = add_edges(name, n.inputs[0]); !ok) return fail(ok.error().message, label(id));
    return {};
  }
};

}  // namespace

Expected<void> export_nir(const ir::Graph& graph, const std::filesystem::path& file, const NirExportOptions& options) {
  h5::QuietErrors quiet;
  std::filesystem::path tmp = file;
  tmp += ".tmp";
  auto result = [&]() -> Expected<void> {
    h5::Handle f(H5Fcreate(tmp.string().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    if (!f.valid()) return fail("cannot create the file");
    if (auto ok = h5::write_string(f.get(), "version", nir::version_of(graph.info)); !ok) return ok;
    Exporter ex{graph, options.compress, {}, {}};
    GraphGroup& top = ex.graphs[""];
    top.group = h5::Handle(H5Gcreate2(f.get(), "node", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    if (auto ok = h5::write_string(top.group.get(), "type", "NIRGraph"); !ok) return ok;
    top.nodes = h5::Handle(H5Gcreate2(top.group.get(), "nodes", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    ex.find_ports();
    for (ir::ValueId v : graph.inputs()) {
      auto grp = ex.node_group(graph.value(v).name, "Input");
      if (!grp) return std::unexpected(grp.error());
      if (auto ok = h5::write_ints(grp->get(), "shape", graph.value(v).type.shape.sizes(), false); !ok) return ok;
    }
    for (size_t i = 0; i < graph.num_nodes(); ++i) {
      ir::NodeId id{static_cast<uint32_t>(i)};
      if (ex.ports[i] != Port::None) {
        if (auto ok = ex.port_node(id); !ok) return ok;
      } else if (!junction(graph.node(id))) {
        if (auto ok = ex.op_node(id); !ok) return ok;
      }
    }
    for (size_t i = 0; i < graph.outputs().size(); ++i) {
      ir::ValueId v = graph.outputs()[i];
      const ir::Value& val = graph.value(v);
      bool own = val.kind == ir::ValueKind::NodeResult && junction(graph.node(val.producer)) &&
                 ex.ports[index(val.producer)] == Port::None;
      std::string name = own ? val.name : graph.outputs().size() == 1 ? "output" : fmt::format("output_{}", i);
      auto grp = ex.node_group(name, "Output");
      if (!grp) return std::unexpected(grp.error());
      if (auto ok = h5::write_ints(grp->get(), "shape", val.type.shape.sizes(), false); !ok) return ok;
      if (own) {
        for (ir::ValueId in : graph.node(val.producer).inputs)
          if (auto ok = ex.add_edges(name, in); !ok) return ok;
      } else if (auto ok = ex.add_edges(name, v); !ok) {
        return ok;
      }
    }
    for (auto& [path, gg] : ex.graphs) {
      std::string where = path.empty() ? "top-level graph" : fmt::format("graph '{}'", path);
      if (gg.inputs > 1 || gg.outputs > 1)
        return fail(
            fmt::format("would have {} Input and {} Output nodes; edges into and out of a nested graph need one "
                        "of each",
                        gg.inputs, gg.outputs),
            where);
      std::vector<std::string> flat;
      for (const auto& [a, b] : gg.edges) {
        flat.push_back(a);
        flat.push_back(b);
      }
      if (auto ok = h5::write_strings(gg.group.get(), "edges", flat, {static_cast<hsize_t>(gg.edges.size()), 2}); !ok)
        return ok;
    }
    return {};
  }();
  std::error_code ec;
  if (!result) {
    std::filesystem::remove(tmp, ec);
    return fail(result.error().message, result.error().where, file.string());
  }
  std::filesystem::rename(tmp, file, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return fail(fmt::format("cannot write the file: {}", ec.message()), {}, file.string());
  }
  return {};
}

}  // namespace refinery::frontends
