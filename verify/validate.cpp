#include "verify/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "ir/spiking.h"
#include "runtime/interpreter.h"

namespace refinery::verify {

namespace {

struct Divergence {
  double abs = 0, rel = 0;
  int64_t first_bad = -1;  // first element over tolerance
  double a = 0, b = 0;     // its values
  bool special = false;    // there, one is NaN or infinite and the other is not (or the other infinity)
};

Divergence compare(const ir::Tensor& a, const ir::Tensor& b, const ValidationOptions& o) {
  Divergence d;
  int64_t n = std::min(a.numel(), b.numel());
  for (int64_t i = 0; i < n; ++i) {
    double x = a.as_double(i), y = b.as_double(i);
    double diff = (std::isnan(x) && std::isnan(y)) || x == y ? 0.0 : std::fabs(x - y);
    if (std::isnan(diff)) diff = INFINITY;
    d.abs = std::max(d.abs, diff);
    if (std::fabs(x) > o.atol) d.rel = std::max(d.rel, diff / std::fabs(x));
    if (d.first_bad < 0 && !(diff <= o.atol + o.rtol * std::fabs(x))) {
      d.first_bad = i;
      d.a = x;
      d.b = y;
      d.special = std::isnan(x) != std::isnan(y) || std::isinf(x) != std::isinf(y) || (std::isinf(x) && x != y);
    }
  }
  return d;
}

std::string node_of(const ir::Graph& g, ir::ValueId v) {
  const ir::Value& val = g.value(v);
  if (val.kind != ir::ValueKind::NodeResult) return "";
  const ir::Node& n = g.node(val.producer);
  std::string op = n.op == ir::Op::Opaque ? n.op_type : std::string(ir::op_name(n.op));
  return n.name.empty() ? fmt::format(" ({})", op) : fmt::format(" (node '{}', {})", n.name, op);
}

// Opaque nodes have no kernel. Both graphs get the same seeded results for
// the node of the same name (its first result's name: to_graph keeps the
// names of the nodes it keeps), and the inputs the refined graph gives it
// are compared with the original's: the graphs agree when they agree around
// every custom op, whatever the op computes.
struct OpaqueInputs {
  std::map<std::string, std::vector<ir::Tensor>> seen;  // from the original run, by key
  std::string mismatch;                                 // first difference in the refined run
};

std::string opaque_key(const ir::Graph& g, const ir::Node& n) {
  return n.outputs.empty() ? n.name : g.value(n.outputs[0]).name;
}

runtime::RunOptions with_stand_in(const ir::Graph& g, std::uint64_t sample_seed, const ValidationOptions& o,
                                  OpaqueInputs* record, bool is_original, bool wide = false) {
  runtime::RunOptions ro;
  ro.wide_floats = wide;
  ro.opaque = [&g, sample_seed, &o, record, is_original](
                  const ir::Node& n, const std::vector<ir::Tensor>& ins) -> Expected<std::vector<ir::Tensor>> {
    std::string key = opaque_key(g, n);
    if (record && is_original) record->seen[key] = ins;
    if (record && !is_original && record->mismatch.empty()) {
      auto it = record->seen.find(key);
      if (it != record->seen.end())
        for (size_t i = 0; i < ins.size() && i < it->second.size() && record->mismatch.empty(); ++i) {
          Divergence d = compare(it->second[i], ins[i], o);
          if (it->second[i].numel() != ins[i].numel())
            record->mismatch = fmt::format("input {} of opaque node '{}' has {} elements, {} in the original", i, key,
                                           ins[i].numel(), it->second[i].numel());
          else if (d.first_bad >= 0)
            record->mismatch = fmt::format("input {} of opaque node '{}' element {}: original {}, refined {}", i, key,
                                           d.first_bad, d.a, d.b);
        }
    }
    std::vector<ir::Tensor> outs;
    std::uint64_t h = std::hash<std::string>()(key) ^ (sample_seed * 0x9e3779b97f4a7c15ull);
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const ir::TensorType& t = g.value(n.outputs[i]).type;
      bool sized = t.shape.ranked();
      for (const ir::Dim& d : t.shape.dims()) sized &= !d.is_unknown();
      if (!sized) {
        Diag d{{}, {}, fmt::format("opaque node '{}': result {} has no known shape to stand in for", key, i)};
        d.limitation = true;  // the model runs elsewhere; Refinery cannot stand in for the op
        return std::unexpected(std::move(d));
      }
      outs.push_back(runtime::random_tensor(t, h + i, o.dims, o.int_high));
    }
    return outs;
  };
  return ro;
}

// Values both graphs compute under the same name and type, in the refined
// graph's order: where to look for the first divergence.
std::vector<std::pair<ir::ValueId, ir::ValueId>> shared_values(const ir::Graph& a, const ir::Graph& b) {
  std::vector<std::pair<ir::ValueId, ir::ValueId>> out;
  for (const ir::Node& n : b.nodes())
    for (ir::ValueId vb : n.outputs) {
      const ir::Value& val = b.value(vb);
      if (val.name.empty() || !val.type.shape.ranked()) continue;
      auto va = a.find_value(val.name);
      if (!va || a.value(*va).kind != ir::ValueKind::NodeResult || a.value(*va).type != val.type) continue;
      out.emplace_back(*va, vb);
    }
  return out;
}

// Runs both graphs with every shared value as an extra output and returns
// the first (in the refined graph's order) that diverges.
std::optional<std::string> first_shared_divergence(const ir::Graph& a, const ir::Graph& b,
                                                   const std::vector<ir::Tensor>& inputs, int sample,
                                                   std::uint64_t sample_seed, const ValidationOptions& o) {
  auto shared = shared_values(a, b);
  if (shared.empty()) return std::nullopt;
  ir::Graph pa = a, pb = b;
  std::vector<ir::ValueId> oa, ob;
  for (auto [x, y] : shared) {
    oa.push_back(x);
    ob.push_back(y);
  }
  pa.set_outputs(oa);
  pb.set_outputs(ob);
  auto ra = runtime::run(pa, inputs, with_stand_in(pa, sample_seed, o, nullptr, true));
  auto rb = runtime::run(pb, inputs, with_stand_in(pb, sample_seed, o, nullptr, false));
  if (!ra || !rb) return std::nullopt;
  for (size_t i = 0; i < shared.size(); ++i) {
    Divergence d = compare((*ra)[i], (*rb)[i], o);
    if (d.first_bad >= 0)
      return fmt::format("value '{}'{} element {} of sample {}: original {}, refined {}", b.value(ob[i]).name,
                         node_of(b, ob[i]), d.first_bad, sample, d.a, d.b);
  }
  return std::nullopt;
}

struct Sample {
  std::map<std::string, std::int64_t> dims;           // the symbolic dims it ran at
  std::vector<ir::Tensor> inputs, original, refined;  // the f32 outputs
  std::vector<bool> failed;                           // per output: over the f32 tolerance
  bool any_failed() const { return std::find(failed.begin(), failed.end(), true) != failed.end(); }
};

// The rounding check of validate.h, over the samples already run in f32.
void check_rounding(const ir::Graph& original, const ir::Graph& refined, const std::vector<Sample>& samples,
                    const ValidationOptions& o, ValidationResult& r) {
  r.rounding_checked = true;
  ValidationOptions wide_tol = o;
  wide_tol.atol *= kWideToleranceScale;
  wide_tol.rtol *= kWideToleranceScale;
  for (size_t s = 0; s < samples.size(); ++s) {
    if (!samples[s].any_failed()) continue;  // within the f32 tolerance already
    const std::uint64_t sample_seed = o.seed + s;
    ValidationOptions os = o;
    os.dims = samples[s].dims;
    auto wa = runtime::run(original, samples[s].inputs, with_stand_in(original, sample_seed, os, nullptr, true, true));
    if (!wa) {
      r.rounding_verdict = "the original graph does not run in f64: " + wa.error().str();
      return;
    }
    auto wb = runtime::run(refined, samples[s].inputs, with_stand_in(refined, sample_seed, os, nullptr, false, true));
    if (!wb) {
      r.rounding_verdict = "the refined graph does not run in f64: " + wb.error().str();
      return;
    }
    for (size_t i = 0; i < wa->size(); ++i) {
      const std::string& name = original.value(original.outputs()[i]).name;
      const ir::Tensor &a64 = (*wa)[i], &b64 = (*wb)[i];
      const ir::Tensor &a32 = samples[s].original[i], &b32 = samples[s].refined[i];
      if (!ir::is_float(a32.dtype())) continue;  // an integer output was compared exactly
      Divergence d = compare(a64, b64, wide_tol);
      r.wide_max_abs_error = std::max(r.wide_max_abs_error, d.abs);
      double ea = compare(a64, a32, wide_tol).abs, eb = compare(a64, b32, wide_tol).abs;
      r.original_rounding = std::max(r.original_rounding, ea);
      r.refined_rounding = std::max(r.refined_rounding, eb);
      if (d.first_bad >= 0 && r.rounding_verdict.empty())
        r.rounding_verdict = fmt::format(
            "the graphs differ in f64 too: output '{}' element {} of sample {}: original {}, refined {} "
            "(f64 tolerance: atol {:g}, rtol {:g})",
            name, d.first_bad, s, d.a, d.b, wide_tol.atol, wide_tol.rtol);
      else if (samples[s].failed[i] && !(eb <= kRoundingFactor * ea + wide_tol.atol) && r.rounding_verdict.empty())
        r.rounding_verdict = fmt::format(
            "the refined graph is less accurate: output '{}' of sample {} is {:.3g} from the f64 result, "
            "the original {:.3g} (at most {:g}x allowed)",
            name, s, eb, ea, kRoundingFactor);
    }
  }
  if (!r.rounding_verdict.empty()) return;
  r.within_rounding = true;
  r.rounding_verdict = fmt::format(
      "in f64 the graphs agree to {:.3g}; from the f64 result the refined f32 output is {:.3g} away, "
      "the original {:.3g}",
      r.wide_max_abs_error, r.refined_rounding, r.original_rounding);
}

// Folds output i's differences into its own errors and the result's largest.
void record_error(ValidationResult& r, const Divergence& d, const ir::Graph& original, std::size_t i) {
  const std::string& name = original.value(original.outputs()[i]).name;
  if (r.outputs.size() < original.outputs().size()) {
    r.outputs.clear();
    for (ir::ValueId v : original.outputs()) r.outputs.push_back({.name = original.value(v).name});
  }
  OutputError& out = r.outputs[i];
  out.max_abs_error = std::max(out.max_abs_error, d.abs);
  out.max_rel_error = std::max(out.max_rel_error, d.rel);
  if (d.first_bad >= 0) out.within_tolerance = false;
  if (d.abs > r.max_abs_error || r.worst_output.empty()) {
    r.max_abs_error = std::max(r.max_abs_error, d.abs);
    r.worst_output = name;
  }
  r.max_rel_error = std::max(r.max_rel_error, d.rel);
}

// Folds one sample's spike trains of a layer into its agreement record.
void record_spikes(ValidationResult& r, const runtime::LayerTrace& a, const runtime::LayerTrace& b) {
  auto it = std::find_if(r.spike_trains.begin(), r.spike_trains.end(),
                         [&](const SpikeTrainAgreement& s) { return s.layer == a.name; });
  if (it == r.spike_trains.end()) it = r.spike_trains.insert(it, {.layer = a.name, .op = a.op});
  it->original_spikes += a.spike_count;
  it->refined_spikes += b.spike_count;
  if (a.spikes != b.spikes) it->identical = false;
}

// Spiking graphs: both simulated through time on the same spike trains.
Expected<ValidationResult> validate_spiking(const ir::Graph& original, const ir::Graph& refined,
                                            const ValidationOptions& o) {
  ValidationResult r;
  r.passed = true;
  for (int s = 0; s < o.samples; ++s) {
    const std::uint64_t sample_seed = o.seed + static_cast<uint64_t>(s);
    auto inputs = runtime::random_spike_inputs(original, o.sim.steps, o.spike_rate, sample_seed);
    auto ra = runtime::simulate(original, inputs, o.sim);
    if (!ra) return fail("the original graph does not simulate: " + ra.error().str());
    auto rb = runtime::simulate(refined, inputs, o.sim);
    if (!rb) return fail("the refined graph does not simulate: " + rb.error().str());
    ++r.samples;
    for (const runtime::LayerTrace& la : ra->layers) {
      auto lb = std::find_if(rb->layers.begin(), rb->layers.end(),
                             [&](const runtime::LayerTrace& l) { return l.name == la.name && l.spiking; });
      if (!la.spiking || lb == rb->layers.end()) continue;
      record_spikes(r, la, *lb);
      if (lb->spikes == la.spikes || !r.passed) continue;
      r.passed = false;
      r.first_divergence = fmt::format("layer '{}' ({}) of sample {}: {} spikes in the original, {} refined", la.name,
                                       la.op, s, la.spike_count, lb->spike_count);
    }
    for (size_t i = 0; i < ra->outputs.size(); ++i) {
      const ir::Tensor &x = ra->outputs[i], &y = rb->outputs[i];
      const std::string& name = original.value(original.outputs()[i]).name;
      if (x.dims() != y.dims())
        return fail(fmt::format("output '{}': the refined graph gives a different shape", name));
      Divergence d = compare(x, y, o);
      record_error(r, d, original, i);
      if (d.first_bad >= 0 && r.passed) {
        r.passed = false;
        r.first_divergence = fmt::format("output '{}' element {} (over steps) of sample {}: original {}, refined {}",
                                         name, d.first_bad, s, d.a, d.b);
      }
    }
  }
  // The non-spiking verdict's classes: spike trains must be identical, the
  // outputs (spikes or membrane values) within tolerance.
  r.verdict = !r.passed ? "refuted" : r.max_abs_error == 0 ? "exact" : "rounds differently";
  return r;
}

}  // namespace

std::string dims_text(const std::map<std::string, std::int64_t>& dims) {
  std::vector<std::string> parts;
  for (const auto& [name, size] : dims) parts.push_back(fmt::format("{}={}", name, size));
  return fmt::format("{}", fmt::join(parts, ", "));
}

namespace {

// The last sample's symbolic dims (ValidationOptions::widen_symbolic): each
// one the inputs name and `o.dims` leaves unset at 2, 3, ..., in order.
std::map<std::string, std::int64_t> widened(const ir::Graph& g, const ValidationOptions& o) {
  std::map<std::string, std::int64_t> dims = o.dims;
  if (!o.widen_symbolic || o.samples < 2) return dims;
  std::int64_t next = 2;
  for (ir::ValueId v : g.inputs())
    for (const ir::Dim& d : g.value(v).type.shape.dims())
      if (!d.name().empty() && !dims.contains(d.name())) dims[d.name()] = next++;
  return dims;
}

}  // namespace

Expected<ValidationResult> validate(const ir::Graph& original, const ir::Graph& refined, const ValidationOptions& o,
                                    const ir::Graph* refined_exact) {
  if (ir::is_spiking_graph(original) || ir::is_spiking_graph(refined)) return validate_spiking(original, refined, o);
  ValidationResult r;
  r.passed = true;
  bool opaque_mismatch = false;
  bool special = false;  // the first failure is a NaN or infinity produced or lost
  if (original.outputs().size() != refined.outputs().size())
    return fail(fmt::format("the refined graph has {} outputs, the original {}", refined.outputs().size(),
                            original.outputs().size()));
  std::vector<Sample> samples;
  const std::map<std::string, std::int64_t> wide = widened(original, o);
  for (int s = 0; s < o.samples; ++s) {
    const std::uint64_t sample_seed = o.seed + static_cast<uint64_t>(s);
    ValidationOptions os = o;  // this sample's symbolic dims
    if (s + 1 == o.samples && wide != o.dims) os.dims = wide;
    std::vector<ir::Tensor> inputs = runtime::random_inputs(original, sample_seed, os.dims, os.int_high);
    OpaqueInputs opaque;
    auto ra = runtime::run(original, inputs, with_stand_in(original, sample_seed, os, &opaque, true));
    if (!ra && os.dims != o.dims) {
      // The original's own limit (a reshape fixed to one row, say): the
      // sample runs at the dims it was given.
      r.widen_note = fmt::format("not widened: the original does not run at {}: {}", dims_text(wide), ra.error().str());
      os.dims = o.dims;
      inputs = runtime::random_inputs(original, sample_seed, os.dims, os.int_high);
      opaque = {};
      ra = runtime::run(original, inputs, with_stand_in(original, sample_seed, os, &opaque, true));
    } else if (os.dims != o.dims) {
      r.widened_dims = os.dims;
    }
    if (!ra) {
      Diag d{{}, {}, "the original graph does not run: " + ra.error().str()};
      d.limitation = ra.error().limitation;
      return std::unexpected(std::move(d));
    }
    auto rb = runtime::run(refined, inputs, with_stand_in(refined, sample_seed, os, &opaque, false));
    if (!rb) return fail("the refined graph does not run: " + rb.error().str());
    ++r.samples;
    std::vector<bool> failed(ra->size(), false);
    if (!opaque.mismatch.empty()) {
      opaque_mismatch = true;
      if (r.passed) {
        r.passed = false;
        r.first_divergence = opaque.mismatch + fmt::format(" (sample {})", s);
      }
    }
    for (size_t i = 0; i < ra->size(); ++i) {
      const ir::Tensor &x = (*ra)[i], &y = (*rb)[i];
      const std::string& name = original.value(original.outputs()[i]).name;
      if (x.dtype() != y.dtype() || x.dims() != y.dims())
        return fail(fmt::format("output '{}': the refined graph gives a different type or shape", name));
      Divergence d = compare(x, y, o);
      failed[i] = d.first_bad >= 0;
      record_error(r, d, original, i);
      if (d.first_bad >= 0 && r.passed) {
        r.passed = false;
        special = d.special;
        auto inner = first_shared_divergence(original, refined, inputs, s, sample_seed, os);
        r.first_divergence = inner ? *inner
                                   : fmt::format("output '{}' element {} of sample {}: original {}, refined {}", name,
                                                 d.first_bad, s, d.a, d.b);
      }
    }
    samples.push_back({os.dims, std::move(inputs), std::move(*ra), std::move(*rb), std::move(failed)});
  }
  // An opaque op's inputs are compared in f32 only: a mismatch there is final.
  if (!r.passed && !opaque_mismatch && o.rounding_check) {
    check_rounding(original, refined_exact != nullptr ? *refined_exact : refined, samples, o, r);
    if (r.within_rounding) r.passed = true;
  }
  r.verdict = r.passed  ? (r.max_abs_error == 0 ? "exact" : "rounds differently")
              : special ? "refuted (special values)"
                        : "refuted";
  return r;
}

}  // namespace refinery::verify
