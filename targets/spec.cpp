#include "targets/spec.h"

#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ir/data_dir.h"
#include "targets/workload.h"

namespace refinery::targets {

std::string_view to_string(TargetKind kind) {
  switch (kind) {
    case TargetKind::Cpu: return "cpu";
    case TargetKind::Gpu: return "gpu";
    case TargetKind::Tpu: return "tpu";
    case TargetKind::Neuromorphic: return "neuromorphic";
  }
  return "?";
}

double HardwareSpec::peak(ir::DType dtype, bool matmul) const {
  std::string key(ir::dtype_name(dtype));
  if (matmul && dtype == ir::DType::f32 && !f32_matmul_uses.empty()) key = f32_matmul_uses;
  if (auto it = peak_flops.find(key); it != peak_flops.end()) return it->second;
  if (auto it = peak_flops.find("f32"); it != peak_flops.end()) return it->second;
  return peak_flops.empty() ? 1e12 : peak_flops.begin()->second;
}

bool HardwareSpec::may_emit(ir::Op op) const {
  std::string_view domain = ir::op_info(op).onnx_domain;
  return domain.empty() || std::find(export_domains.begin(), export_domains.end(), domain) != export_domains.end();
}

namespace {

// The "neuromorphic" object of a neuromorphic spec; throws naming the field.
void parse_neuromorphic(const nlohmann::json& j, NeuromorphicSpec& n) {
  auto positive = [&](const char* name) -> double {
    if (!j.contains(name)) throw std::runtime_error(fmt::format("missing field 'neuromorphic.{}'", name));
    double v = j.at(name).get<double>();
    if (!(v > 0)) throw std::runtime_error(fmt::format("field 'neuromorphic.{}' must be positive", name));
    return v;
  };
  auto energy = [&](const char* name) -> double {
    double v = j.value(name, 0.0);
    if (v < 0) throw std::runtime_error(fmt::format("field 'neuromorphic.{}' must not be negative", name));
    return v;
  };
  n.cores = static_cast<int64_t>(positive("cores"));
  n.neurons_per_core = static_cast<int64_t>(positive("neurons_per_core"));
  n.synaptic_memory_bits_per_core = positive("synaptic_memory_bits_per_core");
  n.fan_in_per_core = static_cast<int64_t>(positive("fan_in_per_core"));
  n.fan_out_per_core = static_cast<int64_t>(positive("fan_out_per_core"));
  n.weight_bits = static_cast<int>(positive("weight_bits"));
  if (n.weight_bits < 2 || n.weight_bits > 32)
    throw std::runtime_error("field 'neuromorphic.weight_bits' must be 2 to 32 (a signed integer weight)");
  n.energy_per_synaptic_op = energy("energy_per_synaptic_op_j");
  n.energy_per_neuron_update = energy("energy_per_neuron_update_j");
  const nlohmann::json secondary = j.value("secondary", nlohmann::json::object());
  for (const auto& [k, v] : secondary.items()) {
    if (!j.contains(k) || k == "secondary")
      throw std::runtime_error(fmt::format("field 'neuromorphic.secondary.{}' names no figure of the spec", k));
    n.secondary[k] = v.get<std::string>();
  }
}

}  // namespace

Expected<HardwareSpec> parse_spec(std::string_view text, const std::string& file) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return fail(fmt::format("not valid JSON: {}", e.what()), {}, file);
  }
  HardwareSpec s;
  try {
    auto field = [&](const char* name) -> const nlohmann::json& {
      if (!j.contains(name)) throw std::runtime_error(fmt::format("missing field '{}'", name));
      return j.at(name);
    };
    s.name = field("name").get<std::string>();
    s.description = j.value("description", "");
    s.source = j.value("source", "");
    std::string kind = field("kind").get<std::string>();
    if (kind == "cpu")
      s.kind = TargetKind::Cpu;
    else if (kind == "gpu")
      s.kind = TargetKind::Gpu;
    else if (kind == "tpu")
      s.kind = TargetKind::Tpu;
    else if (kind == "neuromorphic")
      s.kind = TargetKind::Neuromorphic;
    else
      throw std::runtime_error(fmt::format("field 'kind': expected cpu, gpu, tpu or neuromorphic, got '{}'", kind));
    if (s.kind == TargetKind::Neuromorphic) {
      parse_neuromorphic(field("neuromorphic"), s.neuromorphic);
      return s;
    }
    for (auto& [k, v] : field("peak_flops").items()) {
      double f = v.get<double>();
      if (!(f > 0)) throw std::runtime_error(fmt::format("field 'peak_flops.{}' must be positive", k));
      s.peak_flops[k] = f;
    }
    if (s.peak_flops.empty()) throw std::runtime_error("field 'peak_flops' is empty");
    s.f32_matmul_uses = j.value("f32_matmul_uses", "");
    s.memory_bandwidth = field("memory_bandwidth").get<double>();
    if (!(s.memory_bandwidth > 0)) throw std::runtime_error("field 'memory_bandwidth' must be positive");
    s.memory_bytes = j.value("memory_bytes", 0.0);
    s.kernel_launch_s = j.value("kernel_launch_s", 0.0);
    s.graph_launch_s = j.value("graph_launch_s", 0.0);
    if (!(s.graph_launch_s >= 0)) throw std::runtime_error("field 'graph_launch_s' must be 0 or more");
    // By kernel family: {family: value}, each value one that `valid` takes (`what` says which).
    auto by_family = [&](const char* name, bool (*valid)(double), const char* what,
                         std::map<std::string, double, std::less<>>& out) {
      const nlohmann::json fields = j.value(name, nlohmann::json::object());
      for (auto& [k, v] : fields.items()) {
        if (std::ranges::find(kKernelFamilies, k) == kKernelFamilies.end())
          throw std::runtime_error(fmt::format("field '{}.{}': unknown kernel family (known: {})", name, k,
                                               fmt::join(kKernelFamilies, ", ")));
        double x = v.get<double>();
        if (!valid(x)) throw std::runtime_error(fmt::format("field '{}.{}' must be {}", name, k, what));
        out[k] = x;
      }
    };
    by_family("kernel_latency_s", [](double x) { return x >= 0; }, "0 or more", s.kernel_latency_s);
    by_family("kernel_efficiency", [](double x) { return x > 0 && x <= 1; }, "above 0 and at most 1",
              s.kernel_efficiency);
    s.op_overhead_s = j.value("op_overhead_s", 0.0);
    s.vector_flops = j.value("vector_flops", 0.0);
    s.cache_bandwidth = j.value("cache_bandwidth", 0.0);
    s.cache_bytes = j.value("cache_bytes", 0.0);
    if (j.contains("mxu")) {
      s.mxu.rows = j["mxu"].value("rows", 128);
      s.mxu.cols = j["mxu"].value("cols", 128);
      s.mxu.count = j["mxu"].value("count", 1);
    }
    if (j.contains("tiling")) {
      s.tiling.sublanes = j["tiling"].value("sublanes", 8);
      s.tiling.lanes = j["tiling"].value("lanes", 128);
    }
    if (j.contains("gemm_efficiency")) {
      s.gemm_efficiency.max = j["gemm_efficiency"].value("max", 1.0);
      s.gemm_efficiency.half_size = j["gemm_efficiency"].value("half_size", 0.0);
    }
    s.elementwise_efficiency = j.value("elementwise_efficiency", 1.0);
    s.channel_block = j.value("channel_block", int64_t{0});
    if (s.channel_block < 0 || s.channel_block > 1024)
      throw std::runtime_error("field 'channel_block' must be 0 (none) to 1024 channels");
    for (const auto& d : j.value("export_domains", nlohmann::json::array())) {
      std::string domain = d.get<std::string>();
      if (domain != "com.microsoft")
        throw std::runtime_error(fmt::format("field 'export_domains': unknown domain '{}' (known: com.microsoft)", domain));
      s.export_domains.push_back(std::move(domain));
    }
    s.learned_model = j.value("learned_model", "");
    if (!s.learned_model.empty() && s.kind != TargetKind::Cpu)
      throw std::runtime_error("field 'learned_model': only a cpu spec has a learned model");
    if (s.kind == TargetKind::Gpu && !(s.kernel_launch_s > 0))
      throw std::runtime_error("a gpu spec needs 'kernel_launch_s'");
    if (s.kind == TargetKind::Tpu &&
        (s.mxu.rows <= 0 || s.mxu.cols <= 0 || s.tiling.lanes <= 0 || s.tiling.sublanes <= 0))
      throw std::runtime_error("a tpu spec needs positive 'mxu' and 'tiling' sizes");
  } catch (const std::exception& e) {
    return fail(e.what(), {}, file);
  }
  return s;
}

Expected<HardwareSpec> load_spec(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return fail("cannot open the target spec", {}, file.string());
  std::stringstream ss;
  ss << in.rdbuf();
  auto spec = parse_spec(ss.str(), file.string());
  if (spec) spec->folder = file.parent_path();
  return spec;
}

std::filesystem::path user_cost_models_dir() {
  if (const char* d = std::getenv("REFINERY_COST_MODELS"); d && *d) return d;
  if (const char* d = std::getenv("XDG_DATA_HOME"); d && *d) return std::filesystem::path(d) / "refinery" / "cost_models";
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : ".") / ".local" / "share" / "refinery" / "cost_models";
}

Expected<std::filesystem::path> specs_dir() { return ir::data_dir(ir::DataKind::Targets); }

namespace {

// A spec of the bundled folder by name (aliases resolved), or an error
// listing the known names.
Expected<HardwareSpec> bundled_spec(std::string_view name) {
  std::string n(name);
  if (n == "gpu") n = "h100";
  if (n == "tpu") n = "tpu_v4";
  auto dir = specs_dir();
  if (!dir) return std::unexpected(dir.error());
  std::filesystem::path file = *dir / (n + ".json");
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) {
    if (!std::filesystem::is_directory(*dir, ec))
      return fail(fmt::format("target '{}': the target specs folder {} does not exist", name, dir->string()));
    // The aliases gpu and tpu first (cpu is a spec of its own), then each
    // spec, and NAME-analytic beside a spec with a learned model.
    std::vector<std::string> known;
    for (const auto& e : std::filesystem::directory_iterator(*dir, ec))
      if (e.path().extension() == ".json") known.push_back(e.path().stem().string());
    std::sort(known.begin(), known.end());
    std::vector<std::string> names;
    for (const std::string& k : known) {
      names.push_back(k);
      if (auto s = load_spec(*dir / (k + ".json")); s && !s->learned_model.empty())
        names.push_back(k + std::string(kAnalyticSuffix));
    }
    return fail(fmt::format("unknown target '{}' (known: gpu, tpu, {})", name, fmt::join(names, ", ")));
  }
  return load_spec(file);
}

}  // namespace

Expected<HardwareSpec> find_spec(std::string_view name) {
  std::filesystem::path p(name);
  if (p.extension() == ".json") return load_spec(p);
  auto spec = bundled_spec(name);
  if (spec || !name.ends_with(kAnalyticSuffix)) return spec;
  // NAME-analytic: the spec NAME with its analytic model (one spec, two names).
  std::string_view base = name.substr(0, name.size() - kAnalyticSuffix.size());
  auto learned = bundled_spec(base);
  if (!learned) return spec;  // "unknown target 'NAME-analytic'", as any other
  if (learned->learned_model.empty())
    return fail(fmt::format("target '{}': '{}' has no learned model, its model is the analytic one (--target {})", name,
                            base, base));
  learned->name = std::string(name);
  learned->learned_model.clear();
  return learned;
}

}  // namespace refinery::targets
