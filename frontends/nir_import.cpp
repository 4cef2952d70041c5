// NIR import: HDF5 file -> flat list of primitives (nested graphs inlined,
// their names joined with '/') -> evaluation order -> ir::Graph. The rules are
// in docs/nir.md; every error names the node, graph or edge at fault.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <map>

#include "frontends/nir.h"
#include "frontends/nir_hdf5.h"
#include "frontends/nir_internal.h"
#include "ir/spiking.h"
#include "ir/text.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>

namespace refinery::frontends {
namespace nir {

namespace {
constexpr std::array<std::pair<std::string_view, ir::Op>, 16> kTypes{{
    {"Affine", ir::Op::Affine},
    {"Linear", ir::Op::Linear},
    {"Scale", ir::Op::Scale},
    {"Conv1d", ir::Op::NirConv1d},
    {"Conv2d", ir::Op::NirConv2d},
    {"SumPool2d", ir::Op::SumPool2d},
    {"AvgPool2d", ir::Op::AvgPool2d},
    {"Flatten", ir::Op::NirFlatten},
    {"Delay", ir::Op::Delay},
    {"Threshold", ir::Op::Threshold},
    {"I", ir::Op::Integrator},
    {"IF", ir::Op::IF},
    {"LI", ir::Op::LI},
    {"LIF", ir::Op::LIF},
    {"CubaLI", ir::Op::CubaLI},
    {"CubaLIF", ir::Op::CubaLIF},
}};
}  // namespace

std::optional<ir::Op> op_of_type(std::string_view nir_type) {
  for (const auto& [name, op] : kTypes)
    if (name == nir_type) return op;
  return std::nullopt;
}

std::string_view type_of_op(ir::Op op) {
  for (const auto& [name, o] : kTypes)
    if (o == op) return name;
  return {};
}

}  // namespace nir

namespace {

using ir::Op;

// One primitive of the file, its name qualified by the graphs around it.
struct Prim {
  std::string name;  // "lif1/lin" inside graph "lif1"
  std::string type;  // "LIF", "Input", "Output"
  std::map<std::string, h5::Data> data;
  bool top_level = true;
  std::vector<size_t> preds;  // sources of its incoming edges, with repeats
};

struct Reader {
  hid_t file;
  std::string path;
  std::vector<Prim> prims;
  std::map<std::string, size_t> index;  // qualified name -> prims index

  std::unexpected<Diag> error(const std::string& where, const std::string& msg) const {
    return std::unexpected(Diag{path, where, msg});
  }

  // Reads graph `group` (qualified prefix `prefix`); returns its Input and
  // Output primitives (for edges that name the graph from outside).
  Expected<std::pair<std::vector<size_t>, std::vector<size_t>>> read_graph(hid_t group, const std::string& prefix) {
    std::string where =
        prefix.empty() ? "top-level graph" : fmt::format("graph '{}'", prefix.substr(0, prefix.size() - 1));
    if (h5::kind_of(group, "edges") != h5::Kind::Dataset)
      return error(where, "has no 'edges' dataset (a graph lists its edges as an E x 2 table of node names)");
    if (h5::kind_of(group, "nodes") != h5::Kind::Group) return error(where, "has no 'nodes' group");
    h5::Handle nodes(H5Gopen2(group, "nodes", H5P_DEFAULT));
    std::map<std::string, std::pair<std::vector<size_t>, std::vector<size_t>>> ports;  // local name -> ins, outs
    for (const std::string& local : h5::children(nodes.get())) {
      std::string name = prefix + local;
      std::string nwhere = fmt::format("node '{}'", name);
      if (h5::kind_of(nodes.get(), local) != h5::Kind::Group) return error(nwhere, "is not a group");
      h5::Handle g(H5Gopen2(nodes.get(), local.c_str(), H5P_DEFAULT));
      if (h5::kind_of(g.get(), "type") != h5::Kind::Dataset) return error(nwhere, "has no 'type' dataset");
      auto type = h5::read(g.get(), "type", nwhere);
      if (!type) return std::unexpected(type.error());
      if (!type->text) return error(nwhere, "its 'type' is not a string");
      if (*type->text == "NIRGraph") {
        auto inner = read_graph(g.get(), name + "/");
        if (!inner) return std::unexpected(inner.error());
        ports[local] = *inner;
        continue;
      }
      Prim p{name, *type->text, {}, prefix.empty(), {}};
      if (p.type != "Input" && p.type != "Output" && !nir::op_of_type(p.type))
        return error(nwhere, fmt::format("unknown NIR type '{}'", p.type));
      for (const std::string& key : h5::children(g.get())) {
        if (key == "type" || h5::kind_of(g.get(), key) != h5::Kind::Dataset) continue;  // metadata, input_type, ...
        auto d = h5::read(g.get(), key, nwhere);
        if (!d) return std::unexpected(d.error());
        p.data.emplace(key, std::move(*d));
      }
      index[name] = prims.size();
      std::vector<size_t> self{prims.size()};
      ports[local] = {self, self};
      prims.push_back(std::move(p));
    }
    auto edges = h5::read(group, "edges", where);
    if (!edges) return std::unexpected(edges.error());
    bool table = edges->dims.size() == 2 && edges->dims[1] == 2;
    bool empty = !edges->dims.empty() && edges->dims[0] == 0;
    if (edges->tensor || (!table && !empty))
      return error(where, fmt::format("'edges' must be an E x 2 table of node names, got shape [{}]",
                                      fmt::join(edges->dims, ", ")));
    if (edges->strings.empty()) return error(where, "has no edges");
    for (size_t e = 0; e + 1 < edges->strings.size(); e += 2) {
      const std::string &from = edges->strings[e], &to = edges->strings[e + 1];
      std::string ewhere = fmt::format("{}: edge '{}' -> '{}'", where, from, to);
      auto src = ports.find(from), dst = ports.find(to);
      if (src == ports.end()) return error(ewhere, fmt::format("names no node '{}'", from));
      if (dst == ports.end()) return error(ewhere, fmt::format("names no node '{}'", to));
      // A nested graph is entered through its Input and left through its Output.
      auto outs = src->second.second, ins = dst->second.first;
      if (outs.size() != 1)
        return error(ewhere, fmt::format("graph '{}' has {} Output nodes, expected one", from, outs.size()));
      if (ins.size() != 1)
        return error(ewhere, fmt::format("graph '{}' has {} Input nodes, expected one", to, ins.size()));
      if (prims[ins[0]].type == "Input" && prims[ins[0]].top_level)
        return error(ewhere, fmt::format("'{}' is an Input node and takes no edges", to));
      prims[ins[0]].preds.push_back(outs[0]);
    }
    std::vector<size_t> ins, outs;
    for (const auto& [local, io] : ports) {
      if (io.first.size() != 1 || io.first != io.second) continue;  // a nested graph, not a port
      if (prims[io.first[0]].type == "Input") ins.push_back(io.first[0]);
      if (prims[io.first[0]].type == "Output") outs.push_back(io.first[0]);
    }
    return std::pair{ins, outs};
  }
};

bool stateful_type(const Prim& p) {
  auto op = nir::op_of_type(p.type);
  return op && ir::op_info(*op).stateful;
}

// Strongly connected components (Tarjan) of the nodes `in`, over `succ`.
std::vector<std::vector<size_t>> components(const std::vector<std::vector<size_t>>& succ, const std::vector<bool>& in) {
  size_t n = succ.size(), counter = 0;
  std::vector<size_t> idx(n, SIZE_MAX), low(n, 0), stack;
  std::vector<bool> on(n, false);
  std::vector<std::vector<size_t>> out;
  std::function<void(size_t)> visit = [&](size_t v) {
    idx[v] = low[v] = counter++;
    stack.push_back(v);
    on[v] = true;
    for (size_t w : succ[v]) {
      if (!in[w]) continue;
      if (idx[w] == SIZE_MAX) {
        visit(w);
        low[v] = std::min(low[v], low[w]);
      } else if (on[w])
        low[v] = std::min(low[v], idx[w]);
    }
    if (low[v] == idx[v]) {
      std::vector<size_t> c;
      size_t w;
      do {
        w = stack.back();
        stack.pop_back();
        on[w] = false;
        c.push_back(w);
      } while (w != v);
      out.push_back(std::move(c));
    }
  };
  for (size_t v = 0; v < n; ++v)
    if (in[v] && idx[v] == SIZE_MAX) visit(v);
  return out;
}

bool cyclic(const std::vector<size_t>& comp, const std::vector<std::vector<size_t>>& succ) {
  if (comp.size() > 1) return true;
  return std::find(succ[comp[0]].begin(), succ[comp[0]].end(), comp[0]) != succ[comp[0]].end();
}

// The evaluation order (docs/nir.md, "Evaluation order and recurrent edges").
// Which edges read the previous step depends on the graph alone, never on
// names: an edge u -> v inside a cycle is recurrent when v lies no further
// from the Input nodes than u (breadth-first distance), so the one-step delay
// sits on the edge that closes the loop and input from outside a loop reaches
// every node of it within the step. The order places every other edge's
// source first and every recurrent edge's source after its target; names
// only break ties between nodes whose order changes nothing, and the two
// cases without a name-free answer (a cycle no Input reaches; recurrent edges
// between nodes at the same distance that close a cycle among themselves).
Expected<std::vector<size_t>> evaluation_order(const Reader& r) {
  const auto& prims = r.prims;
  size_t n = prims.size();
  std::vector<std::vector<size_t>> succ(n);
  for (size_t v = 0; v < n; ++v)
    for (size_t p : prims[v].preds) succ[p].push_back(v);
  std::vector<bool> stateless(n);
  for (size_t v = 0; v < n; ++v) stateless[v] = !stateful_type(prims[v]);
  for (auto& c : components(succ, stateless)) {
    if (!cyclic(c, succ)) continue;
    std::vector<std::string> names;
    for (size_t v : c) names.push_back(fmt::format("'{}'", prims[v].name));
    std::sort(names.begin(), names.end());
    return std::unexpected(Diag{r.path, fmt::format("node {}", names[0]),
                                fmt::format("cycle without a stateful node through {}", fmt::join(names, ", "))});
  }
  auto by_name = [&](size_t a, size_t b) { return prims[a].name < prims[b].name; };
  std::vector<size_t> comp_of(n, SIZE_MAX);
  auto comps = components(succ, std::vector<bool>(n, true));
  for (size_t c = 0; c < comps.size(); ++c)
    for (size_t v : comps[c]) comp_of[v] = c;
  // Distance from the Input nodes; a cycle no Input reaches (it runs on its
  // own) is entered at its stateful node of smallest name.
  constexpr size_t kFar = SIZE_MAX;
  std::vector<size_t> depth(n, kFar), queue;
  for (size_t v = 0; v < n; ++v)
    if (prims[v].type == "Input" && prims[v].top_level) {
      depth[v] = 0;
      queue.push_back(v);
    }
  size_t deepest = 0;
  while (true) {
    for (size_t q = 0; q < queue.size(); ++q)
      for (size_t w : succ[queue[q]])
        if (depth[w] == kFar) {
          depth[w] = depth[queue[q]] + 1;
          deepest = std::max(deepest, depth[w]);
          queue.push_back(w);
        }
    std::optional<size_t> seed;
    for (size_t v = 0; v < n; ++v)
      if (depth[v] == kFar && !stateless[v] && (!seed || by_name(v, *seed))) seed = v;
    if (!seed) break;
    depth[*seed] = ++deepest;
    queue.assign(1, *seed);
  }
  // before[v]: nodes that must be placed before v.
  std::vector<std::vector<size_t>> before(n);
  for (size_t v = 0; v < n; ++v)
    for (size_t p : prims[v].preds) {
      bool recurrent = comp_of[p] == comp_of[v] && depth[v] <= depth[p];
      if (!recurrent)
        before[v].push_back(p);
      else if (p != v)
        before[p].push_back(v);  // the reader first: it sees the previous step
    }
  std::vector<bool> done(n, false);
  std::vector<size_t> order;
  for (size_t v = 0; v < n; ++v)
    if (prims[v].type == "Input" && prims[v].top_level) done[v] = true;
  auto all_done = [&](size_t v) {
    return std::all_of(before[v].begin(), before[v].end(), [&](size_t p) { return done[p]; });
  };
  auto forward_done = [&](size_t v) {  // only the edges that must read this step
    return std::all_of(prims[v].preds.begin(), prims[v].preds.end(), [&](size_t p) {
      return done[p] || (comp_of[p] == comp_of[v] && depth[v] <= depth[p]);
    });
  };
  auto closer = [&](size_t a, size_t b) { return depth[a] != depth[b] ? depth[a] < depth[b] : by_name(a, b); };
  while (order.size() + static_cast<size_t>(std::count_if(prims.begin(), prims.end(), [](const Prim& p) {
           return p.type == "Input" && p.top_level;
         })) < n) {
    std::optional<size_t> next;
    for (size_t v = 0; v < n; ++v)
      if (!done[v] && all_done(v) && (!next || by_name(v, *next))) next = v;
    if (!next)  // recurrent edges at one distance close a cycle: the nearest, then smallest name, goes first
      for (size_t v = 0; v < n; ++v)
        if (!done[v] && forward_done(v) && (!next || closer(v, *next))) next = v;
    if (!next) return std::unexpected(Diag{r.path, {}, "the graph's cycles could not be ordered"});
    done[*next] = true;
    order.push_back(*next);
  }
  return order;
}

std::string shape_text(const ir::Shape& s) { return fmt::format("[{}]", s.str()); }

std::vector<int64_t> ints_of(const ir::Tensor& t) { return t.to_int_vector(); }

// A parameter given as one int or one per spatial dimension.
Expected<std::vector<int64_t>> per_dim(const Prim& p, const std::string& key, size_t spatial,
                                       std::optional<int64_t> fallback, const std::string& where) {
  auto it = p.data.find(key);
  if (it == p.data.end() || !it->second.tensor) {
    if (fallback) return std::vector<int64_t>(spatial, *fallback);
    return fail(fmt::format("{} has no '{}' dataset", p.type, key), where);
  }
  auto v = ints_of(*it->second.tensor);
  if (v.size() == 1) v.assign(spatial, v[0]);
  if (v.size() != spatial)
    return fail(fmt::format("{} '{}' has {} entries, expected {}", p.type, key, v.size(), spatial), where);
  return v;
}

struct Builder {
  Reader& r;
  std::vector<Diag>& notes;
  ir::Graph g;
  std::vector<ir::ValueId> value_of;                   // prims index -> value (kNoValue until built)
  std::vector<std::optional<ir::TensorType>> type_of;  // known types, for recurrent inputs

  std::unexpected<Diag> error(const Prim& p, const std::string& msg) const {
    return std::unexpected(Diag{r.path, fmt::format("node '{}'", p.name), msg});
  }

  const ir::Tensor* tensor(const Prim& p, const std::string& key) const {
    auto it = p.data.find(key);
    return it == p.data.end() || !it->second.tensor ? nullptr : &*it->second.tensor;
  }

  // The type a node gives before its inputs are known (from its parameters),
  // used when a node reads it through a recurrent edge.
  std::optional<ir::TensorType> parameter_type(const Prim& p) const {
    auto op = nir::op_of_type(p.type);
    if (!op) return std::nullopt;
    if (*op == Op::Affine || *op == Op::Linear) {
      const ir::Tensor* w = tensor(p, "weight");
      if (w && w->dims().size() == 2) return ir::TensorType{ir::DType::f32, ir::Shape::of({w->dims()[0]})};
      return std::nullopt;
    }
    bool population = *op == Op::Scale || *op == Op::Delay || *op == Op::Threshold || ir::op_info(*op).stateful;
    if (!population) return std::nullopt;
    for (std::string_view key : ir::operand_names(*op).subspan(1)) {
      const ir::Tensor* t = tensor(p, std::string(key));
      if (t && !t->dims().empty()) return ir::TensorType{ir::DType::f32, ir::Shape::of(t->dims())};
    }
    return std::nullopt;
  }

  std::string sources(const Prim& p) const {
    std::vector<std::string> names;
    for (size_t s : p.preds) names.push_back(fmt::format("'{}'", r.prims[s].name));
    return fmt::format("{}", fmt::join(names, ", "));
  }

  // The value that carries the sum of a node's incoming edges (in order of
  // source name), through a `sum` node named NAME:in when there are several.
  Expected<ir::ValueId> input_of(const Prim& p, const std::string& junction_name, std::vector<size_t>& later) {
    if (p.preds.empty()) return error(p, fmt::format("{} has no incoming edge", p.type));
    std::vector<size_t> srcs = p.preds;
    std::stable_sort(srcs.begin(), srcs.end(), [&](size_t a, size_t b) { return r.prims[a].name < r.prims[b].name; });
    std::vector<ir::ValueId> vals;
    std::optional<ir::TensorType> type;
    // A recurrent source whose parameters do not give its type (a neuron with
    // scalar parameters) takes the type of the others: a sum's operands agree.
    std::optional<ir::TensorType> any;
    for (size_t s : srcs)
      if (!any) any = type_of[s];
    for (size_t s : srcs) {
      auto t = type_of[s] ? type_of[s] : any;
      if (!t)
        return error(p, fmt::format("the type of its recurrent input from '{}' is unknown (give that node "
                                    "population-shaped parameters)",
                                    r.prims[s].name));
      if (type && t->shape != type->shape)
        return error(
            p, fmt::format("sums inputs of different shapes: {} from '{}' and {} from '{}'", shape_text(type->shape),
                           r.prims[srcs[0]].name, shape_text(t->shape), r.prims[s].name));
      type = t;
      vals.push_back(value_of[s]);
      if (value_of[s] == ir::kNoValue) later.push_back(s);
    }
    if (srcs.size() == 1 && junction_name.empty()) return vals[0];
    ir::Node node{.op = srcs.size() == 1 ? Op::Identity : Op::Sum, .name = junction_name, .inputs = vals};
    ir::NodeId id = g.add_node(std::move(node), {junction_name}, {*type});
    patches.push_back({id, srcs});
    return g.node(id).outputs[0];
  }

  struct Patch {
    ir::NodeId node;
    std::vector<size_t> srcs;  // per operand
  };
  std::vector<Patch> patches;  // operands that read a node built later

  Expected<void> build_op(size_t v) {
    Prim& p = r.prims[v];
    Op op = *nir::op_of_type(p.type);
    std::vector<size_t> later;
    std::vector<size_t> srcs = p.preds;
    std::stable_sort(srcs.begin(), srcs.end(), [&](size_t a, size_t b) { return r.prims[a].name < r.prims[b].name; });
    auto in = input_of(p, p.preds.size() > 1 ? p.name + ":in" : "", later);
    if (!in) return std::unexpected(in.error());
    ir::Node node{.op = op, .name = p.name, .inputs = {*in}};
    auto names = ir::operand_names(op);
    size_t first_param = 1;
    auto add_param = [&](std::string_view key, ir::Tensor t) {
      node.inputs.push_back(
          g.add_constant(fmt::format("{}.{}", p.name, key), std::make_shared<ir::Tensor>(std::move(t))));
    };
    for (size_t i = first_param; i < names.size(); ++i) {
      std::string key(names[i]);
      if (auto d = p.data.find(key); d != p.data.end() && !d->second.tensor)
        return error(p, fmt::format("{} '{}' has the wrong type: {}, expected numbers", p.type, key,
                                    d->second.text || !d->second.strings.empty() ? "strings" : "not a numeric array"));
      const ir::Tensor* t = tensor(p, key);
      if (t) {
        add_param(key, *t);
        continue;
      }
      if (key == "bias" && (op == Op::NirConv1d || op == Op::NirConv2d)) continue;  // optional
      // Defaults of older files: no v_reset means 0, no w_in means 1.
      const ir::Tensor* like = tensor(p, "v_threshold") ? tensor(p, "v_threshold") : tensor(p, "v_leak");
      if ((key == "v_reset" || key == "w_in") && like) {
        std::vector<double> fill(static_cast<size_t>(like->numel()), key == "w_in" ? 1.0 : 0.0);
        if (like->dtype() == ir::DType::f32)
          add_param(key, ir::Tensor::from_values<float>(ir::DType::f32, like->dims(),
                                                        std::vector<float>(fill.begin(), fill.end())));
        else
          add_param(key, ir::Tensor::from_values<double>(ir::DType::f64, like->dims(), fill));
        continue;
      }
      return error(p, fmt::format("{} has no '{}' dataset", p.type, key));
    }
    std::string where = fmt::format("node '{}'", p.name);
    if (op == Op::NirConv1d || op == Op::NirConv2d) {
      size_t spatial = op == Op::NirConv1d ? 1 : 2;
      const ir::Tensor* w = tensor(p, "weight");
      if (!w || w->dims().size() != spatial + 2)
        return error(p, fmt::format("{} weight must have rank {}", p.type, spatial + 2));
      auto stride = per_dim(p, "stride", spatial, 1, where);
      auto dil = per_dim(p, "dilation", spatial, 1, where);
      if (!stride) return std::unexpected(stride.error());
      if (!dil) return std::unexpected(dil.error());
      std::vector<int64_t> pads;
      auto pad = p.data.find("padding");
      if (pad != p.data.end() && pad->second.text) {
        for (size_t i = 0; i < spatial; ++i) {
          int64_t total = *pad->second.text == "same" ? (*dil)[i] * (w->dims()[i + 2] - 1) : 0;
          if (*pad->second.text != "same" && *pad->second.text != "valid")
            return error(p, fmt::format("padding '{}' is not 'same', 'valid' or numbers", *pad->second.text));
          pads.push_back(total / 2);
        }
        for (size_t i = 0; i < spatial; ++i)
          pads.push_back(*pad->second.text == "same" ? (*dil)[i] * (w->dims()[i + 2] - 1) - pads[i] : 0);
      } else {
        auto pd = per_dim(p, "padding", spatial, 0, where);
        if (!pd) return std::unexpected(pd.error());
        pads = *pd;
        pads.insert(pads.end(), pd->begin(), pd->end());
      }
      int64_t groups = 1;
      if (const ir::Tensor* gr = tensor(p, "groups")) groups = gr->as_int(0);
      node.attrs.set("strides", *stride);
      node.attrs.set("dilations", *dil);
      node.attrs.set("pads", pads);
      node.attrs.set("group", groups);
    }
    if (op == Op::SumPool2d || op == Op::AvgPool2d) {
      auto k = per_dim(p, "kernel_size", 2, std::nullopt, where);
      if (!k) return std::unexpected(k.error());
      auto stride = per_dim(p, "stride", 2, std::nullopt, where);
      auto pd = per_dim(p, "padding", 2, 0, where);
      if (!stride) return std::unexpected(stride.error());
      if (!pd) return std::unexpected(pd.error());
      std::vector<int64_t> pads = *pd;
      pads.insert(pads.end(), pd->begin(), pd->end());
      node.attrs.set("kernel_shape", *k);
      node.attrs.set("strides", *stride);
      node.attrs.set("pads", pads);
    }
    if (op == Op::NirFlatten) {
      node.attrs.set("start_dim", tensor(p, "start_dim") ? tensor(p, "start_dim")->as_int(0) : int64_t{1});
      node.attrs.set("end_dim", tensor(p, "end_dim") ? tensor(p, "end_dim")->as_int(0) : int64_t{-1});
    }
    // The result type, from the op's shape rule.
    std::vector<ir::InferInput> ins(node.inputs.size());
    std::vector<ir::TensorType> types(node.inputs.size());
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      ir::ValueId iv = node.inputs[i];
      types[i] = iv == ir::kNoValue ? *type_of[srcs[0]] : g.value(iv).type;
      ins[i].type = &types[i];
    }
    ir::InferContext ctx;
    ctx.op = op;
    ctx.inputs = ins;
    ctx.attrs = &node.attrs;
    ctx.outputs.resize(1);
    ctx.known.resize(1);
    if (auto ok = ir::op_info(op).infer(ctx); !ok)
      return error(p, fmt::format("{}: {} (input from {})", p.type, ok.error(), sources(p)));
    const ir::Shape& x = types[0].shape;
    if (op == Op::NirConv1d || op == Op::NirConv2d) {
      if (const ir::Tensor* is = tensor(p, "input_shape"); is && is->numel() > 0) {
        std::vector<int64_t> sizes = x.sizes(), spatial(sizes.begin() + 1, sizes.end());
        if (ints_of(*is) != spatial)
          return error(p, fmt::format("{} input_shape [{}] does not match the input {} from {}", p.type,
                                      fmt::join(ints_of(*is), ", "), shape_text(x), sources(p)));
      }
    }
    if (op == Op::NirFlatten) {
      if (const ir::Tensor* it = tensor(p, "input_type"); it && it->numel() > 0 && ints_of(*it) != x.sizes())
        return error(p, fmt::format("Flatten input_type [{}] does not match the input {} from {}",
                                    fmt::join(ints_of(*it), ", "), shape_text(x), sources(p)));
    }
    type_of[v] = ctx.outputs[0];
    ir::NodeId id = g.add_node(std::move(node), {p.name}, {ctx.outputs[0]});
    value_of[v] = g.node(id).outputs[0];
    if (!later.empty() && p.preds.size() == 1) patches.push_back({id, srcs});
    return {};
  }

  // Output nodes and the Input/Output nodes of nested graphs: a junction
  // (identity or sum) named after the node.
  Expected<void> build_junction(size_t v) {
    Prim& p = r.prims[v];
    std::vector<size_t> later;
    auto in = input_of(p, p.name, later);
    if (!in) return std::unexpected(in.error());
    value_of[v] = *in;
    type_of[v] = g.value(*in).type;
    if (p.type == "Output" && p.top_level) {
      auto it = p.data.find("shape");
      if (it != p.data.end() && it->second.tensor && it->second.tensor->numel() == 0) {
        // snnTorch writes shape []: NIR's reader, without type checking, takes what arrives.
        notes.push_back(
            Diag{r.path, fmt::format("node '{}'", p.name),
                 fmt::format("Output has an empty stored shape; it takes the shape that arrives, {} from {}",
                             shape_text(type_of[v]->shape), sources(p))});
      } else if (it != p.data.end() && it->second.tensor) {
        int64_t declared = 1;
        for (int64_t d : ints_of(*it->second.tensor)) declared *= d;
        if (declared != type_of[v]->shape.num_elements().value_or(declared))
          return error(
              p, fmt::format("Output declares shape [{}] but receives {} from {}",
                             fmt::join(ints_of(*it->second.tensor), ", "), shape_text(type_of[v]->shape), sources(p)));
      }
    }
    return {};
  }
};

}  // namespace

namespace {
Expected<ir::Graph> import_nir_file(const std::filesystem::path& file, std::vector<Diag>& notes);
}  // namespace

// Every error names the file, also those made below the reader (h5::read).
Expected<ir::Graph> import_nir_named(const std::filesystem::path& file, std::vector<Diag>* notes) {
  std::vector<Diag> ignored;
  auto g = import_nir_file(file, notes ? *notes : ignored);
  if (!g && g.error().file.empty()) {
    Diag d = g.error();
    d.file = file.string();
    return std::unexpected(std::move(d));
  }
  return g;
}

// libhdf5 trusts the file's own bookkeeping: a corrupt global heap behind
// variable-length strings can make H5Dread crash, before any check of ours
// sees data. So the file is read in a child process, which sends back the
// graph as .ir text (an exact round trip, weights in hex) or its Diag; a
// child that dies, or that runs past its deadline (libhdf5 can also loop on
// a corrupt heap), becomes an error naming the file.
Expected<ir::Graph> import_nir(const std::filesystem::path& file, const NirImportOptions& options) {
  std::vector<Diag> ignored;
  std::vector<Diag>& notes = options.notes ? *options.notes : ignored;
  int fds[2];
  if (::pipe(fds) != 0) return import_nir_named(file, &notes);
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return import_nir_named(file, &notes);
  }
  if (pid == 0) {
    ::close(fds[0]);
    std::vector<Diag> child_notes;
    auto g = import_nir_named(file, &child_notes);
    std::string out;  // notes ("N" where \0 message \0), then the graph ("G") or the error ("E")
    for (const Diag& n : child_notes) out += "N" + n.where + '\0' + n.message + '\0';
    out += g ? "G" + ir::print_graph(*g) : "E" + g.error().file + '\0' + g.error().where + '\0' + g.error().message;
    for (size_t done = 0; done < out.size();) {
      ssize_t n = ::write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0) ::_exit(1);
      done += static_cast<size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  // A corrupt heap can also send libhdf5 round in a loop: the child gets 10 s
  // plus 1 s per 10 MB of file, then it is stopped.
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10) + std::chrono::milliseconds(ec ? 0 : size / 10'000);
  std::string in;
  bool timed_out = false;
  char buf[1 << 16];
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd pfd{fds[0], POLLIN, 0};
    int ready = left.count() > 0 ? ::poll(&pfd, 1, static_cast<int>(left.count())) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      timed_out = ready == 0;
      break;
    }
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    in.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  const std::string path = file.string();
  if (timed_out)
    return fail("the reader did not finish with this file in time (libhdf5 loops on some corrupt HDF5 structures)", {},
                path);
  if (WIFSIGNALED(status))
    return fail(fmt::format("the reader crashed on this file (signal {}; libhdf5 does on some corrupt HDF5 structures)",
                            WTERMSIG(status)),
                {}, path);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || in.empty())
    return fail("the NIR reader did not finish", {}, path);
  while (!in.empty() && in[0] == 'N') {
    size_t a = in.find('\0', 1), b = a == std::string::npos ? a : in.find('\0', a + 1);
    if (b == std::string::npos) return fail("the NIR reader failed", {}, path);
    notes.push_back(Diag{path, in.substr(1, a - 1), in.substr(a + 1, b - a - 1)});
    in.erase(0, b + 1);
  }
  if (in.empty()) return fail("the NIR reader did not finish", {}, path);
  if (in[0] == 'E') {
    Diag d;
    size_t a = in.find('\0', 1), b = a == std::string::npos ? a : in.find('\0', a + 1);
    if (b == std::string::npos) return fail("the NIR reader failed", {}, path);
    d.file = in.substr(1, a - 1);
    d.where = in.substr(a + 1, b - a - 1);
    d.message = in.substr(b + 1);
    return std::unexpected(std::move(d));
  }
  auto g = ir::parse_graph(std::string_view(in).substr(1), path);
  if (!g) return fail("the graph read from the file does not print back: " + g.error().str(), {}, path);
  return g;
}

namespace {

Expected<ir::Graph> import_nir_file(const std::filesystem::path& file, std::vector<Diag>& notes) {
  h5::QuietErrors quiet;
  std::string path = file.string();
  if (!std::filesystem::exists(file)) return fail("no such file", {}, path);
  if (H5Fis_hdf5(path.c_str()) <= 0) return fail("not an HDF5 file (a NIR file is HDF5)", {}, path);
  h5::Handle f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!f.valid()) return fail("cannot open the HDF5 file", {}, path);
  if (h5::kind_of(f.get(), "version") != h5::Kind::Dataset)
    return fail("no 'version' dataset: not a NIR file", {}, path);
  auto version = h5::read(f.get(), "version", {});
  if (!version) return fail(version.error().message, {}, path);
  if (!version->text) return fail("'version' is not a string", {}, path);
  int major = std::atoi(version->text->c_str());
  if (major > 1 || version->text->empty() || !std::isdigit(static_cast<unsigned char>((*version->text)[0])))
    return fail(fmt::format("NIR version '{}' is not supported (0.1 to 1.0.x are)", *version->text), {}, path);
  if (h5::kind_of(f.get(), "node") != h5::Kind::Group) return fail("no 'node' group: not a NIR file", {}, path);
  h5::Handle root(H5Gopen2(f.get(), "node", H5P_DEFAULT));
  Reader r{f.get(), path, {}, {}};
  auto ports = r.read_graph(root.get(), "");
  if (!ports) return std::unexpected(ports.error());
  auto order = evaluation_order(r);
  if (!order) return std::unexpected(order.error());

  Builder b{r,
            notes,
            {},
            std::vector<ir::ValueId>(r.prims.size(), ir::kNoValue),
            std::vector<std::optional<ir::TensorType>>(r.prims.size()),
            {}};
  b.g.info.producer_name = "nir";
  b.g.info.opsets.clear();
  b.g.info.metadata.emplace_back(nir::kVersionKey, *version->text);
  std::vector<size_t> inputs;
  for (size_t v = 0; v < r.prims.size(); ++v)
    if (r.prims[v].type == "Input" && r.prims[v].top_level) inputs.push_back(v);
  std::sort(inputs.begin(), inputs.end(), [&](size_t a, size_t c) { return r.prims[a].name < r.prims[c].name; });
  for (size_t v : inputs) {
    const Prim& p = r.prims[v];
    auto it = p.data.find("shape");
    if (it == p.data.end() || !it->second.tensor) return b.error(p, "Input has no 'shape' dataset");
    ir::TensorType t{ir::DType::f32, ir::Shape::of(ints_of(*it->second.tensor))};
    b.value_of[v] = b.g.add_input(p.name, t);
    b.type_of[v] = t;
  }
  for (size_t v = 0; v < r.prims.size(); ++v)
    if (!b.type_of[v]) b.type_of[v] = b.parameter_type(r.prims[v]);
  // Junctions (Output, nested Input/Output) take the type of their first source.
  for (size_t round = 0; round < r.prims.size(); ++round)
    for (size_t v = 0; v < r.prims.size(); ++v)
      if (!b.type_of[v] && !nir::op_of_type(r.prims[v].type) && !r.prims[v].preds.empty())
        b.type_of[v] = b.type_of[r.prims[v].preds[0]];
  std::vector<ir::ValueId> outputs;
  for (size_t v : *order) {
    const Prim& p = r.prims[v];
    auto ok = nir::op_of_type(p.type) ? b.build_op(v) : b.build_junction(v);
    if (!ok) return std::unexpected(ok.error());
    if (p.type == "Output" && p.top_level) outputs.push_back(b.value_of[v]);
  }
  for (const auto& patch : b.patches) {
    ir::Node& n = b.g.node(patch.node);
    for (size_t i = 0; i < patch.srcs.size() && i < n.inputs.size(); ++i)
      if (n.inputs[i] == ir::kNoValue) n.inputs[i] = b.value_of[patch.srcs[i]];
  }
  b.g.set_outputs(outputs);
  if (auto ok = b.g.verify(); !ok) return fail(ok.error().message, ok.error().where, path);
  ir::Graph check = b.g;
  if (auto ok = check.infer_shapes(); !ok) return fail(ok.error().message, ok.error().where, path);
  for (size_t i = 0; i < check.num_values(); ++i)
    if (check.values()[i].type != b.g.values()[i].type)
      return fail(fmt::format("'{}' is {} but its recurrent uses read {}", check.values()[i].name,
                              check.values()[i].type.str(), b.g.values()[i].type.str()),
                  {}, path);
  return std::move(b.g);
}

}  // namespace
}  // namespace refinery::frontends
