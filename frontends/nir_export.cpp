// NIR export: ir::Graph -> the HDF5 layout NIR's serialization.py writes.
// `sum` and `identity` nodes are edge junctions: their operands' edges go to
// their consumers (a graph output becomes an Output node of the junction's name).
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

struct Exporter {
  const ir::Graph& g;
  hid_t nodes;  // the "nodes" group
  bool compress;
  std::vector<std::pair<std::string, std::string>> edges;
  std::set<std::string> names;

  std::string label(ir::NodeId n) const { return fmt::format("node '{}'", g.node_label(n)); }

  // NIR node names whose outputs sum into value v.
  Expected<std::vector<std::string>> sources(ir::ValueId v, int depth = 0) const {
    const ir::Value& val = g.value(v);
    if (val.kind == ir::ValueKind::Constant) return fail(fmt::format("constant '{}' feeds a NIR input", val.name));
    if (val.kind == ir::ValueKind::Input) return std::vector<std::string>{val.name};
    const ir::Node& n = g.node(val.producer);
    if (!junction(n) || depth > 64) return std::vector<std::string>{val.name};
    std::vector<std::string> out;
    for (ir::ValueId in : n.inputs) {
      auto s = sources(in, depth + 1);
      if (!s) return s;
      out.insert(out.end(), s->begin(), s->end());
    }
    return out;
  }

  Expected<h5::Handle> node_group(const std::string& name, std::string_view type) {
    if (name.find('/') != std::string::npos || name.empty() || !names.insert(name).second)
      return fail(fmt::format("'{}' cannot be a NIR node name (empty, duplicate or with '/')", name));
    h5::Handle grp(H5Gcreate2(nodes, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    if (!grp.valid()) return fail(fmt::format("cannot create group for node '{}'", name));
    if (auto ok = h5::write_string(grp.get(), "type", std::string(type)); !ok) return std::unexpected(ok.error());
    return grp;
  }

  Expected<void> add_edges(const std::string& to, ir::ValueId from) {
    auto s = sources(from);
    if (!s) return std::unexpected(s.error());
    for (const auto& src : *s) edges.emplace_back(src, to);
    return {};
  }

  Expected<void> op_node(ir::NodeId id) {
    const ir::Node& n = g.node(id);
    std::string type(nir::type_of_op(n.op));
    if (type.empty())
      return fail(fmt::format("op '{}' has no NIR primitive", n.op == Op::Opaque ? n.op_type : std::string(ir::op_name(n.op))),
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
    if (n.op == Op::NirConv1d || n.op == Op::NirConv2d) {
      size_t spatial = n.op == Op::NirConv1d ? 1 : 2;
      auto pads = half_pads(n.attrs.get_ints("pads", std::vector<int64_t>(2 * spatial, 0)));
      if (!pads) return std::unexpected(pads.error());
      std::vector<int64_t> sizes = in.sizes(), input_shape(sizes.begin() + 1, sizes.end());
      if (!(ok = write("stride", n.attrs.get_ints("strides", std::vector<int64_t>(spatial, 1))))) return ok;
      if (!(ok = write("padding", *pads))) return ok;
      if (!(ok = write("dilation", n.attrs.get_ints("dilations", std::vector<int64_t>(spatial, 1))))) return ok;
      if (!(ok = write("groups", {n.attrs.get_int("group", 1)}, true))) return ok;
      if (!(ok = write("input_shape", input_shape))) return ok;
    } else if (n.op == Op::SumPool2d || n.op == Op::AvgPool2d) {
      auto pads = half_pads(n.attrs.get_ints("pads", {0, 0, 0, 0}));
      if (!pads) return std::unexpected(pads.error());
      if (!(ok = write("kernel_size", n.attrs.get_ints("kernel_shape")))) return ok;
      if (!(ok = write("stride", n.attrs.get_ints("strides", n.attrs.get_ints("kernel_shape"))))) return ok;
      if (!(ok = write("padding", *pads))) return ok;
    } else if (n.op == Op::NirFlatten) {
      if (!(ok = write("start_dim", {n.attrs.get_int("start_dim", 0)}, true))) return ok;
      if (!(ok = write("end_dim", {n.attrs.get_int("end_dim", -1)}, true))) return ok;
      if (!(ok = write("input_type", in.sizes()))) return ok;
    }
    return add_edges(name, n.inputs[0]);
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
    if (auto ok = h5::write_string(f.get(), "version", std::string(nir::kVersionWritten)); !ok) return ok;
    h5::Handle node(H5Gcreate2(f.get(), "node", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    if (auto ok = h5::write_string(node.get(), "type", "NIRGraph"); !ok) return ok;
    h5::Handle nodes(H5Gcreate2(node.get(), "nodes", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    Exporter ex{graph, nodes.get(), options.compress, {}, {}};
    for (ir::ValueId v : graph.inputs()) {
      auto grp = ex.node_group(graph.value(v).name, "Input");
      if (!grp) return std::unexpected(grp.error());
      if (auto ok = h5::write_ints(grp->get(), "shape", graph.value(v).type.shape.sizes(), false); !ok) return ok;
    }
    std::set<uint32_t> outputs;
    for (ir::ValueId v : graph.outputs()) outputs.insert(index(v));
    for (size_t i = 0; i < graph.num_nodes(); ++i) {
      ir::NodeId id{static_cast<uint32_t>(i)};
      if (junction(graph.node(id))) continue;
      if (auto ok = ex.op_node(id); !ok) return ok;
    }
    for (size_t i = 0; i < graph.outputs().size(); ++i) {
      ir::ValueId v = graph.outputs()[i];
      const ir::Value& val = graph.value(v);
      bool own = val.kind == ir::ValueKind::NodeResult && junction(graph.node(val.producer));
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
    std::vector<std::string> flat;
    for (const auto& [a, b] : ex.edges) { flat.push_back(a); flat.push_back(b); }
    return h5::write_strings(node.get(), "edges", flat, {static_cast<hsize_t>(ex.edges.size()), 2});
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
