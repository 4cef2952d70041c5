#include "prove/instance_ops.h"

#include <algorithm>
#include <numeric>
#include <set>

namespace refinery::prove {

using namespace rules;

// A shape for an unassigned operand `i` of `p`, given the others.
Sizes OpProposals::propose(const Pat& p, size_t i, const std::vector<std::optional<Drawn>>& kids) {
  using ir::Op;
  auto known = [&](size_t k) -> const Sizes* {
    static thread_local Sizes tmp;
    if (k < kids.size() && kids[k]) {
      tmp = kids[k]->type.shape.sizes();
      return &tmp;
    }
    return nullptr;
  };
  const ir::OpInfo& info = ir::op_info(p.op);
  Sizes ref;
  bool have = false;
  for (size_t k = 0; k < kids.size(); ++k)
    if (k != i && kids[k] && !kids[k]->ints) {
      ref = kids[k]->type.shape.sizes();
      have = true;
      break;
    }
  switch (p.op) {
    case Op::MatMul: {
      // (a scalar operand fails the shape rule: no dims to take from it)
      if (i == 1 && known(0) && !known(0)->empty()) {
        Sizes a = *known(0);
        Sizes s;
        if (a.size() > 2 && dice_.coin(0.5)) s.assign(a.begin(), a.end() - 2);
        s.push_back(a.back());
        s.push_back(dice_.dim());
        return s;
      }
      if (i == 0 && known(1) && !known(1)->empty()) {
        Sizes b = *known(1);
        Sizes s;
        if (b.size() > 2) s.assign(b.begin(), b.end() - 2);
        s.push_back(dice_.dim());
        s.push_back(b.size() >= 2 ? b[b.size() - 2] : b[0]);
        return s;
      }
      return dice_.random_shape(dice_.coin(0.7) ? 2 : 3);
    }
    case Op::Gemm: {
      if (i == 0) return dice_.random_shape(2);
      Sizes a = known(0) ? *known(0) : dice_.random_shape(2);
      bool ta = false, tb = false;
      for (const AttrPat& at : p.attrs) {
        auto v = at.is_var ? attrs_[at.var] : std::optional<Literal>(at.literal);
        if (at.name == "transA" && v) ta = literal_equal(*v, Literal(int64_t{1}));
        if (at.name == "transB" && v) tb = literal_equal(*v, Literal(int64_t{1}));
      }
      int64_t m = ta ? a[1] : a[0], k = ta ? a[0] : a[1];
      if (i == 1) {
        int64_t n = dice_.dim();
        n_ = n;
        return tb ? Sizes{n, k} : Sizes{k, n};
      }
      int64_t n = known(1) ? (tb ? (*known(1))[0] : (*known(1))[1]) : n_;
      switch (dice_.pick(3)) {
        case 0: return {n};
        case 1: return {m, n};
        default: return {1, n};
      }
    }
    case Op::Conv: {
      if (i == 0) {
        int64_t batch = dice_.empty() && dice_.coin(0.3) ? 0 : dice_.dim() == 1 ? 1 : 2;
        return Sizes{batch, dice_.dim() + 1, 3 + dice_.pick(2), 3 + dice_.pick(2)};
      }
      Sizes x = known(0) ? *known(0) : Sizes{1, 2, 4, 4};
      if (i == 1) {
        int64_t group = 1;
        for (const auto& [v, r] : rests_)
          (void)v, group = std::max<int64_t>(group, ir::OpAttrs(p.op, r).get_int("group"));
        for (const AttrPat& at : p.attrs)  // a group the pattern binds (:group ?g)
          if (at.name == "group" && at.is_var && attrs_.count(at.var) && attrs_[at.var])
            if (auto* g = std::get_if<int64_t>(&*attrs_[at.var])) group = std::max<int64_t>(group, *g);
        int64_t k = dice_.coin(0.4) ? 1 : 1 + dice_.pick(3);
        // depthwise (one filter per channel) most of the time when the group is the channels
        int64_t per = group > 1 && group == x[1] && dice_.coin(0.7) ? 1 : dice_.dim();
        return Sizes{group * per, x[1] / group, k, k};
      }
      const Sizes* w = known(1);
      return Sizes{w ? (*w)[0] : dice_.dim()};
    }
    case Op::MaxPool:
    case Op::AveragePool:
    case Op::GlobalAveragePool:
    case Op::GlobalMaxPool:
      // N x C x spatial: 1-d or 2-d windows over dims 1..4
      if (i == 0)
        return dice_.coin(0.3) ? Sizes{dice_.dim(), dice_.dim(), 1 + dice_.pick(4)}
                               : Sizes{dice_.dim(), dice_.dim(), 1 + dice_.pick(4), 1 + dice_.pick(4)};
      break;
    case Op::BatchNormalization:
    case Op::InstanceNormalization:
      if (i == 0) return dice_.random_shape(3 + dice_.pick(2));
      return Sizes{known(0) ? (*known(0))[1] : dice_.dim()};
    case Op::LayerNormalization: {
      if (i == 0) return dice_.random_shape(2 + dice_.pick(2));
      Sizes x = known(0) ? *known(0) : Sizes{2, 3};
      return Sizes{x.back()};
    }
    case Op::Concat:
      if (have && dice_.coin(0.8)) {
        Sizes s = ref;
        for (const AttrPat& at : p.attrs)
          if (at.name == "axis") {
            auto v = at.is_var ? attrs_[at.var] : std::optional<Literal>(at.literal);
            if (v)
              if (auto* ax = std::get_if<int64_t>(&*v)) {
                int64_t a = *ax < 0 ? *ax + static_cast<int64_t>(s.size()) : *ax;
                if (a >= 0 && a < static_cast<int64_t>(s.size())) s[static_cast<size_t>(a)] = dice_.dim();
              }
          }
        return s;
      }
      return dice_.random_shape();
    // NIR primitives (no batch axis): populations are vectors, parameters
    // population-shaped or scalars; Affine/Linear weights [m, n]; pools [C, H, W].
    case Op::Affine:
    case Op::Linear:
      if (i == 0) return Sizes{dice_.dim()};
      if (i == 1) return Sizes{dice_.dim(), known(0) && known(0)->size() == 1 ? (*known(0))[0] : dice_.dim()};
      return Sizes{known(1) && known(1)->size() == 2 ? (*known(1))[0] : dice_.dim()};
    case Op::SumPool2d:
    case Op::AvgPool2d: return Sizes{dice_.dim(), 2 + dice_.pick(3), 2 + dice_.pick(3)};
    case Op::Scale:
    case Op::Threshold:
    case Op::Integrator:
    case Op::IF:
    case Op::LI:
    case Op::LIF:
    case Op::CubaLI:
    case Op::CubaLIF:
      if (i == 0) return have && ref.size() == 1 ? ref : Sizes{dice_.dim()};
      if (known(0)) return dice_.coin(0.8) ? *known(0) : Sizes{};
      return have && ref.size() == 1 ? ref : Sizes{dice_.dim()};
    default: break;
  }
  if (info.elementwise && have) {
    double r = std::uniform_real_distribution<double>(0, 1)(dice_.rng());
    if (r < 0.55) return ref;
    if (r < 0.78) {  // a broadcasting operand: a suffix ([c] against [n, c]), some dims 1
      Sizes s(ref.begin() + dice_.pick(static_cast<int>(ref.size()) + 1), ref.end());
      for (auto& d : s)
        if (dice_.coin(0.4)) d = 1;
      return s;
    }
    if (r < 0.88) {  // the other one broadcasts against this: its 1s widened, a leading dim more
      Sizes s = ref;
      for (auto& d : s)
        if (d == 1) d = 2 + dice_.pick(2);
      if (s == ref || dice_.coin(0.5)) s.insert(s.begin(), 2 + dice_.pick(2));
      return s;
    }
    if (r < 0.94) return {};  // a scalar
  }
  return dice_.random_shape();
}

std::optional<Literal> OpProposals::gen_attr(ir::Op op, const std::string& name, int64_t rank) {
  if (name == "perm") {
    Sizes p(static_cast<size_t>(std::max<int64_t>(rank, 0)));
    std::iota(p.begin(), p.end(), 0);
    // half the time a rotation, which is not its own inverse from rank 3
    // on (a rule that holds only for involutions must not pass)
    if (rank >= 3 && dice_.coin(0.5))
      std::rotate(p.begin(), p.begin() + 1, p.end());
    else
      std::shuffle(p.begin(), p.end(), dice_.rng());
    return Literal(p);
  }
  if (name == "axis") {
    int64_t hi = op == ir::Op::Flatten ? rank + 1 : rank;
    if (hi <= 0) return std::nullopt;
    int64_t a = dice_.pick(static_cast<int>(hi));
    if (op != ir::Op::Flatten && dice_.coin(0.3)) a -= rank;
    return Literal(a);
  }
  if (name == "axes") {
    Sizes s;
    for (int64_t i = 0; i < rank; ++i)
      if (dice_.coin(0.5)) s.push_back(i);
    if (s.empty() && rank > 0) s.push_back(dice_.pick(static_cast<int>(rank)));
    return Literal(s);
  }
  if ((op == ir::Op::SumPool2d || op == ir::Op::AvgPool2d) && (name == "strides" || name == "pads"))
    return Literal(name == "strides" ? Sizes{1 + dice_.pick(2), 1 + dice_.pick(2)}
                                     : Sizes(4, dice_.pick(2)));  // NIR: [C, H, W]
  if (name == "strides") return Literal(Sizes(static_cast<size_t>(std::max<int64_t>(rank - 2, 0)), 1 + dice_.pick(2)));
  if (name == "pads") {
    Sizes pads(static_cast<size_t>(2 * std::max<int64_t>(rank - 2, 0)), dice_.pick(2));
    if (op == ir::Op::MaxPool || op == ir::Op::AveragePool)
      for (auto& v : pads) v = dice_.pick(2);  // pools: asymmetric pads too
    return Literal(pads);
  }
  bool pool = op == ir::Op::MaxPool || op == ir::Op::AveragePool;
  size_t spatial = static_cast<size_t>(std::max<int64_t>(rank - 2, 0));
  if (name == "dilations") {
    if (pool && op == ir::Op::MaxPool && dice_.coin(0.3)) return Literal(Sizes(spatial, 2));
    return Literal(Sizes(spatial, 1));
  }
  if (name == "kernel_shape" && (op == ir::Op::SumPool2d || op == ir::Op::AvgPool2d))  // NIR: [C, H, W]
    return Literal(Sizes{1 + dice_.pick(3), 1 + dice_.pick(3)});
  if (name == "kernel_shape" && pool) {
    // 1..3 per spatial axis; a window larger than the padded input fails
    // the shape rule and the draw is skipped
    static const int64_t sizes[] = {2, 2, 3, 1};  // mostly windows of several elements
    Sizes k(spatial);
    for (auto& v : k) v = sizes[dice_.pick(4)];
    return Literal(k);
  }
  if (name == "group" || name == "allowzero" || name == "kernel_shape" || name == "auto_pad") return std::nullopt;
  if (name == "epsilon") return Literal(0.001f);
  for (const auto& spec : ir::op_info(op).attrs) {
    if (spec.name != name) continue;
    if (spec.kind == ir::AttrKind::Int) return Literal(static_cast<int64_t>(dice_.pick(2)));
    if (spec.kind == ir::AttrKind::Float) {
      // both signs: a rule that holds for one (relu after leaky_relu) must not pass for all
      static const float floats[] = {0.5f, 2.0f, -0.5f, -2.0f};
      return Literal(floats[dice_.pick(4)]);
    }
  }
  return std::nullopt;
}

ir::Attributes OpProposals::gen_rest(ir::Op op, int64_t rank, const std::vector<AttrPat>& named) {
  ir::Attributes a;
  if ((op == ir::Op::MaxPool || op == ir::Op::AveragePool) && rank >= 3) {
    // the window's attributes that the pattern leaves to its rest
    auto named_here = [&](const char* n) {
      return std::any_of(named.begin(), named.end(), [&](const AttrPat& p) { return p.name == n; });
    };
    for (const char* n : {"kernel_shape", "strides", "pads", "ceil_mode", "count_include_pad", "dilations"}) {
      if (named_here(n) || (std::string_view(n) == "count_include_pad" && op != ir::Op::AveragePool)) continue;
      if (std::string_view(n) != "kernel_shape" && dice_.coin(0.5)) continue;
      if (auto v = gen_attr(op, n, rank)) a.set(n, *v);
    }
  }
  if ((op == ir::Op::Conv) && rank >= 3) {
    size_t sp = static_cast<size_t>(rank - 2);
    switch (dice_.pick(4)) {
      case 0: break;
      case 1: a.set("strides", Sizes(sp, 2)); break;
      case 2: a.set("pads", Sizes(2 * sp, 1)); break;
      default: a.set("dilations", Sizes(sp, 2)); break;
    }
    return a;
  }
  if (op == ir::Op::MaxPool || op == ir::Op::AveragePool) return a;
  // Any other op: each attribute the pattern leaves to its rest is drawn
  // half the time (else at its default), so that a rule is not proved only
  // at the defaults (a transpose's reversed axes are their own inverse).
  for (const auto& spec : ir::op_info(op).attrs) {
    bool named_here = std::any_of(named.begin(), named.end(), [&](const AttrPat& p) { return p.name == spec.name; });
    if (named_here || !dice_.coin(0.5)) continue;
    if (auto v = gen_attr(op, std::string(spec.name), rank)) a.set(std::string(spec.name), *v);
  }
  return a;
}

std::optional<std::vector<int64_t>> OpProposals::gen_ints(const Pat& p, size_t i,
                                                          const std::vector<std::optional<Drawn>>& kids,
                                                          const ir::Attributes& attrs) {
  using ir::Op;
  if (!kids[0]) return std::nullopt;
  Sizes x = kids[0]->type.shape.sizes();
  int64_t r = static_cast<int64_t>(x.size());
  int64_t n = std::accumulate(x.begin(), x.end(), int64_t{1}, std::multiplies<>());
  switch (p.op) {
    case Op::Reshape: {
      if (n == 0) {
        // No -1 (it cannot be inferred from no elements): the input's
        // dims (a 0 copies the input's 0, allowzero being 0), the last
        // nonzero ones merged.
        Sizes s = x;
        while (s.size() >= 2 && s[s.size() - 1] != 0 && s[s.size() - 2] != 0 && dice_.coin(0.5)) {
          s[s.size() - 2] *= s.back();
          s.pop_back();
        }
        return s;
      }
      // With a rank the pattern asks for (the literal perm of the transpose
      // it feeds), a target of that rank; else, now and then, an exporter's
      // reshape: one axis split in two (heads out of a hidden dim) or two
      // adjacent ones merged, the merge of a pair this draw split first
      // (the heads joined again); else any factorization.
      auto want = demands_.rank.find(&p);
      int64_t rank = want != demands_.rank.end() ? want->second : -1;
      Sizes s;
      if (rank < 0)
        if (auto joined = rejoin(x); joined && dice_.coin(0.6)) s = *joined;
      if (rank < 0 && s.empty())
        if (auto parted = unmerge(x); parted && dice_.coin(0.6)) s = *parted;
      if (rank == r && r >= 2 && dice_.coin(0.5)) s = split_merge(x);
      if (s.empty() && (rank == r + 1 || (rank < 0 && dice_.coin(0.3) && dice_.coin(0.5))))
        s = split_axis(x);
      else if (s.empty() && r >= 2 && (rank == r - 1 || (rank < 0 && dice_.coin(0.3))))
        s = merge_axes(x);
      if (s.empty()) {
        int64_t left = n;
        int parts = rank > 0 ? static_cast<int>(rank) : 1 + dice_.pick(3);
        for (int k = 0; k + 1 < parts; ++k) {
          std::vector<int64_t> divs;
          for (int64_t d = 1; d <= left; ++d)
            if (left % d == 0) divs.push_back(d);
          int64_t d = divs[static_cast<size_t>(dice_.pick(static_cast<int>(divs.size())))];
          s.push_back(d);
          left /= d;
        }
        s.push_back(left);
        std::shuffle(s.begin(), s.end(), dice_.rng());
      }
      if (dice_.coin(0.25)) s[static_cast<size_t>(dice_.pick(static_cast<int>(s.size())))] = -1;
      return s;
    }
    case Op::Unsqueeze: return Sizes{dice_.pick(static_cast<int>(r + 1))};
    case Op::Squeeze: {
      Sizes ones;
      for (int64_t k = 0; k < r; ++k)
        if (x[static_cast<size_t>(k)] == 1) ones.push_back(k);
      if (ones.empty()) return std::nullopt;
      return Sizes{ones[static_cast<size_t>(dice_.pick(static_cast<int>(ones.size())))]};
    }
    case Op::Split: {
      int64_t ax = ir::OpAttrs(p.op, attrs).get_int("axis");
      if (ax < 0) ax += r;
      if (ax < 0 || ax >= r) return std::nullopt;
      int64_t d = x[static_cast<size_t>(ax)];
      int64_t parts = p.nout.value_or(2);
      if (d < parts) return std::nullopt;
      // equal parts half the time where they can be (Q, K and V of a packed projection)
      if (d % parts == 0 && dice_.coin(0.5)) return Sizes(static_cast<size_t>(parts), d / parts);
      Sizes s(static_cast<size_t>(parts), 1);
      for (int64_t k = parts; k < d; ++k) s[static_cast<size_t>(dice_.pick(static_cast<int>(parts)))]++;
      return s;
    }
    case Op::ReduceSum: {
      Sizes s;
      for (int64_t k = 0; k < r; ++k)
        if (dice_.coin(0.5)) s.push_back(k);
      if (s.empty() && r > 0) s.push_back(dice_.pick(static_cast<int>(r)));
      return s;
    }
    case Op::Expand: {
      Sizes s = x;
      for (auto& d : s)
        if (d == 1 && dice_.coin(0.6)) d = 2 + dice_.pick(2);
      if (dice_.coin(0.3)) s.insert(s.begin(), 2);
      return s;
    }
    case Op::Pad: {
      Sizes s(static_cast<size_t>(2 * r));
      for (auto& v : s) v = dice_.pick(2);
      return s;
    }
    case Op::Gather: {
      // 1..d indices into the axis (repeats allowed, some negative)
      int64_t ax = ir::OpAttrs(p.op, attrs).get_int("axis");
      if (ax < 0) ax += r;
      if (ax < 0 || ax >= r || x[static_cast<size_t>(ax)] == 0) return std::nullopt;
      int64_t d = x[static_cast<size_t>(ax)];
      Sizes s(static_cast<size_t>(1 + dice_.pick(static_cast<int>(d))));
      for (auto& v : s) v = dice_.pick(static_cast<int>(d)) - (dice_.coin(0.2) ? d : 0);
      return s;
    }
    case Op::Tile: {
      Sizes s(static_cast<size_t>(r), 1);
      if (r > 0) s[static_cast<size_t>(dice_.pick(static_cast<int>(r)))] = 2;
      return s;
    }
    case Op::Slice: {
      if (r == 0) return std::nullopt;
      if (!slice_axis_) {
        // three slices: their last axis' thirds half the time (Q, K and V of a packed projection)
        slice_thirds_ = demands_.slices == 3 && x.back() > 0 && x.back() % 3 == 0 && dice_.coin(0.5);
        slice_axis_ = slice_thirds_ ? r - 1 : dice_.pick(static_cast<int>(r));
        int64_t d = x[static_cast<size_t>(*slice_axis_)];
        if (d == 0) return std::nullopt;  // no bounds drawn on an empty axis
        slice_start_ = dice_.pick(static_cast<int>(d));
        slice_end_ = slice_start_ + 1 + dice_.pick(static_cast<int>(d - slice_start_));
      }
      if (slice_thirds_ && (i == 1 || i == 2) && p.kids.size() > 1 && p.kids[1].kind == Pat::Kind::Var) {
        auto [it, fresh] = slice_part_.try_emplace(p.kids[1].var, static_cast<int64_t>(slice_part_.size()));
        int64_t third = x.back() / 3;
        return Sizes{(it->second + (i == 2 ? 1 : 0)) * third};
      }
      if (i == 1) return Sizes{slice_start_};
      if (i == 2) return Sizes{slice_end_};
      if (i == 3) return Sizes{*slice_axis_};
      return Sizes{1};
    }
    default: return std::nullopt;
  }
}

Sizes OpProposals::split_axis(const Sizes& x) {
  if (x.empty()) return {1, 1};
  // the last axis most of the time (a hidden dim into heads x head dim)
  size_t ax = dice_.coin(0.6) ? x.size() - 1 : static_cast<size_t>(dice_.pick(static_cast<int>(x.size())));
  int64_t m = x[ax];
  // one draw splits a size one way (Q, K and V into the same heads)
  auto [it, fresh] = splits_.try_emplace(m, 1, m);
  if (fresh) {
    std::vector<int64_t> divs;
    for (int64_t d = 1; d <= m; ++d)
      if (m % d == 0) divs.push_back(d);
    int64_t a = divs[static_cast<size_t>(dice_.pick(static_cast<int>(divs.size())))];
    it->second = {a, m / a};
  }
  Sizes s(x.begin(), x.begin() + static_cast<int64_t>(ax));
  s.push_back(it->second.first);
  s.push_back(it->second.second);
  s.insert(s.end(), x.begin() + static_cast<int64_t>(ax) + 1, x.end());
  return s;
}

Sizes OpProposals::split_merge(const Sizes& x) {
  Sizes s = x;
  auto [it, fresh] = splits_.try_emplace(x.back(), 1, x.back());
  if (fresh) {
    std::vector<int64_t> divs;
    for (int64_t d = 1; d <= x.back(); ++d)
      if (x.back() % d == 0) divs.push_back(d);
    int64_t a = divs[static_cast<size_t>(dice_.pick(static_cast<int>(divs.size())))];
    it->second = {a, x.back() / a};
  }
  s[s.size() - 2] *= it->second.first;
  s.back() = it->second.second;
  return s;
}

Sizes OpProposals::merge_axes(const Sizes& x) {
  // the last pair most of the time (heads x head dim into the hidden dim)
  size_t k = dice_.coin(0.6) ? x.size() - 2 : static_cast<size_t>(dice_.pick(static_cast<int>(x.size()) - 1));
  Sizes s(x.begin(), x.begin() + static_cast<int64_t>(k));
  s.push_back(x[k] * x[k + 1]);
  merges_.try_emplace(x[k] * x[k + 1], x[k], x[k + 1]);
  s.insert(s.end(), x.begin() + static_cast<int64_t>(k) + 2, x.end());
  return s;
}

std::optional<Sizes> OpProposals::unmerge(const Sizes& x) const {
  if (x.empty()) return std::nullopt;
  auto it = merges_.find(x.front());
  if (it == merges_.end() || it->first <= 1) return std::nullopt;
  Sizes s{it->second.first, it->second.second};
  s.insert(s.end(), x.begin() + 1, x.end());
  return s;
}

std::optional<Sizes> OpProposals::rejoin(const Sizes& x) const {
  for (size_t k = x.size() >= 2 ? x.size() - 1 : 0; k-- > 0;)
    for (const auto& [m, ab] : splits_)
      if (x[k] == ab.first && x[k + 1] == ab.second && m > 1) {
        Sizes s(x.begin(), x.begin() + static_cast<int64_t>(k));
        s.push_back(m);
        s.insert(s.end(), x.begin() + static_cast<int64_t>(k) + 2, x.end());
        return s;
      }
  return std::nullopt;
}

namespace {

// The demand that a split into `n` parts makes of its input's dim `from_end`
// (1: the last), carried to the variable that sets that dim: through the
// first operand of an elementwise op, through a matmul's second operand for
// its last dim.
void demand_multiple(const Pat& p, int64_t from_end, int64_t n, Demands& d) {
  if (p.kind == Pat::Kind::Var) {
    d.multiple.try_emplace(p.var, from_end, n);
    return;
  }
  if (p.kind != Pat::Kind::Op || p.kids.empty()) return;
  if (ir::op_info(p.op).elementwise) return demand_multiple(p.kids[0], from_end, n, d);
  if (p.op == ir::Op::MatMul && from_end == 1 && p.kids.size() == 2) return demand_multiple(p.kids[1], 1, n, d);
}

void read_demands(const Pat& p, Demands& d, std::set<std::string>& starts) {
  if (p.kind != Pat::Kind::Op) return;
  for (const AttrPat& a : p.attrs) {
    if (a.is_var) continue;
    if (p.op == ir::Op::Transpose && a.name == "perm" && !p.kids.empty())
      if (auto* perm = std::get_if<std::vector<int64_t>>(&a.literal))
        d.rank[&p.kids[0]] = static_cast<int64_t>(perm->size());
    if (p.op == ir::Op::Split && a.name == "axis" && p.nout && !p.kids.empty())
      if (auto* ax = std::get_if<int64_t>(&a.literal); ax && *ax < 0) demand_multiple(p.kids[0], -*ax, *p.nout, d);
  }
  if (p.op == ir::Op::Slice && p.kids.size() > 1 && p.kids[1].kind == Pat::Kind::Var) {
    starts.insert(p.kids[1].var);
    if (starts.size() == 3) demand_multiple(p.kids[0], 1, 3, d);
  }
  for (const Pat& k : p.kids) read_demands(k, d, starts);
}

}  // namespace

Demands read_demands(const RuleBody& body) {
  Demands d;
  std::set<std::string> starts;
  for (const auto& [root, p] : body.lhs) read_demands(p, d, starts);
  d.slices = starts.size();
  return d;
}

}  // namespace refinery::prove
