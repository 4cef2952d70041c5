// Channel counts in the runtime's blocked layout (optimize/channel_blocks.h).
#include "optimize/channel_blocks.h"

#include <algorithm>
#include <map>
#include <set>

namespace refinery::optimize {
namespace {

using ir::Op;

bool f32_4d(const ir::Tensor* t) { return t && t->dtype() == ir::DType::f32 && t->dims().size() == 4; }

// A Conv the transform can widen on either side: group 1, constant f32
// weights [K, C, kh, kw], a constant bias or none.
bool plain_conv(const ir::Graph& g, const ir::Node& n) {
  if (n.op != Op::Conv || n.attrs.get_int("group", 1) != 1 || n.inputs.size() < 2) return false;
  if (!f32_4d(g.constant_tensor(n.inputs[1]))) return false;
  return n.inputs.size() < 3 || n.inputs[2] == ir::kNoValue || g.constant_tensor(n.inputs[2]) != nullptr;
}

// Ops that keep each channel to itself, so a new channel stays a new channel.
bool per_channel(Op op) { return op == Op::Relu || op == Op::Clip || op == Op::MaxPool; }

// The channel count of a static f32 NCHW value, else 0.
int64_t channels(const ir::Value& v) {
  if (v.type.dtype != ir::DType::f32 || !v.type.shape.is_static() || v.type.shape.rank() != 4) return 0;
  return v.type.shape.sizes()[1];
}

struct Uses {
  std::vector<std::vector<std::pair<size_t, size_t>>> readers;  // by value index (ir::Graph::readers)
  std::vector<bool> is_output;
};

// Fills `members` with the region of `start`, every value that must widen
// with it, and says whether it can: false when the region reaches a value
// or an op the transform cannot widen (`members` then holds the values
// visited so far; each of them has the same region, so none needs a visit
// of its own).
bool region_of(const ir::Graph& g, const Uses& u, ir::ValueId start, std::set<uint32_t>& members) {
  const int64_t c = channels(g.value(start));
  std::vector<ir::ValueId> todo{start};
  auto join = [&](ir::ValueId v) {
    if (!members.count(ir::index(v))) todo.push_back(v);
  };
  while (!todo.empty()) {
    const ir::ValueId v = todo.back();
    todo.pop_back();
    if (!members.insert(ir::index(v)).second) continue;
    const ir::Value& val = g.value(v);
    if (val.kind != ir::ValueKind::NodeResult || u.is_output[ir::index(v)] || channels(val) != c) return false;
    const ir::Node& maker = g.node(val.producer);
    if (maker.outputs.size() != 1) return false;
    if (maker.op == Op::Add) {
      for (ir::ValueId in : maker.inputs) {
        if (g.value(in).type != val.type) return false;  // no broadcasting
        join(in);
      }
    } else if (per_channel(maker.op)) {
      join(maker.inputs[0]);
    } else if (!plain_conv(g, maker)) {
      return false;
    }
    for (auto [reader, at] : u.readers[ir::index(v)]) {
      const ir::Node& r = g.nodes()[reader];
      if (plain_conv(g, r) && at == 0) continue;  // reads the new channels with zero weights
      if (r.outputs.size() != 1) return false;
      if (r.op == Op::Add || (per_channel(r.op) && at == 0))
        join(r.outputs[0]);
      else
        return false;
    }
  }
  return true;
}

// `w` [K, C, kh, kw] with zeros up to [k2, c2, kh, kw].
ir::Tensor widened(const ir::Tensor& w, int64_t k2, int64_t c2) {
  const auto& d = w.dims();
  const int64_t k = d[0], c = d[1], hw = d[2] * d[3];
  std::vector<float> out(static_cast<size_t>(k2 * c2 * hw), 0.0f);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < c; ++j)
      for (int64_t p = 0; p < hw; ++p)
        out[static_cast<size_t>((i * c2 + j) * hw + p)] = static_cast<float>(w.as_double((i * c + j) * hw + p));
  return ir::Tensor::from_values<float>(ir::DType::f32, {k2, c2, d[2], d[3]}, out);
}

ir::Tensor widened_bias(const ir::Tensor& b, int64_t k2) {
  std::vector<float> out(static_cast<size_t>(k2), 0.0f);
  for (int64_t i = 0; i < b.numel(); ++i) out[static_cast<size_t>(i)] = static_cast<float>(b.as_double(i));
  return ir::Tensor::from_values<float>(ir::DType::f32, {k2}, out);
}

}  // namespace

std::vector<PaddedChannels> pad_channels_to_block(ir::Graph& g, int64_t block) {
  std::vector<PaddedChannels> done;
  if (block <= 1) return done;
  Uses u{g.readers(), std::vector<bool>(g.num_values(), false)};
  for (ir::ValueId v : g.outputs()) u.is_output[ir::index(v)] = true;

  // The values the graph has now: the widened weights added below are
  // constants of their own, not candidates.
  const auto values = static_cast<uint32_t>(g.num_values());
  std::vector<bool> seen(values, false);
  for (uint32_t vi = 0; vi < values; ++vi) {
    const ir::ValueId v{vi};
    const int64_t c = channels(g.value(v));
    if (seen[vi] || g.value(v).kind != ir::ValueKind::NodeResult || c == 0 || c % block == 0) continue;
    std::set<uint32_t> members;
    const bool widens = region_of(g, u, v, members);
    for (uint32_t m : members) seen[m] = true;
    if (!widens) continue;
    const int64_t c2 = (c + block - 1) / block * block;
    // Each Conv that makes a value of the region (new filters) or reads one
    // as its data (new weight columns), or both.
    std::map<uint32_t, std::pair<bool, bool>> convs;  // node index -> (rows, columns)
    for (uint32_t m : members) {
      const ir::Node& maker = g.node(g.value(ir::ValueId{m}).producer);
      if (maker.op == Op::Conv) convs[ir::index(g.value(ir::ValueId{m}).producer)].first = true;
      for (auto [reader, at] : u.readers[m])
        if (g.nodes()[reader].op == Op::Conv && at == 0) convs[static_cast<uint32_t>(reader)].second = true;
    }
    // New constants (a weight may be shared with a Conv outside the region);
    // add_constant adds values, never nodes, so `conv` stays valid.
    for (auto [n, sides] : convs) {
      ir::Node& conv = g.node(ir::NodeId{n});
      const ir::TensorRef w = g.value(conv.inputs[1]).constant;
      const int64_t k2 = sides.first ? c2 : w->dims()[0], cin2 = sides.second ? c2 : w->dims()[1];
      conv.inputs[1] = g.add_constant(g.value(conv.inputs[1]).name + ".blocks",
                                      std::make_shared<const ir::Tensor>(widened(*w, k2, cin2)));
      if (sides.first && conv.inputs.size() > 2 && conv.inputs[2] != ir::kNoValue) {
        const ir::TensorRef b = g.value(conv.inputs[2]).constant;
        conv.inputs[2] = g.add_constant(g.value(conv.inputs[2]).name + ".blocks",
                                        std::make_shared<const ir::Tensor>(widened_bias(*b, k2)));
      }
    }
    PaddedChannels record{.from = c, .to = c2};
    for (uint32_t m : members) {
      ir::Value& val = g.value(ir::ValueId{m});
      std::vector<int64_t> sizes = val.type.shape.sizes();
      sizes[1] = c2;
      val.type.shape = ir::Shape::of(sizes);
      record.values.push_back(val.name);
    }
    done.push_back(std::move(record));
  }
  return done;
}

}  // namespace refinery::optimize
