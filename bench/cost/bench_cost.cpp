// The learned CPU cost model judged on what it never saw (issue 12, item 4):
//
//   bench_cost DATASET.jsonl [PAIRS.json] [--work DIR] [--train all|context|alone] [--json OUT]
//
// DATASET is `refinery measure`'s over the zoo (kernels and whole models).
// Leave one model family out (a model, its _op13 twin and its extractions NAME.VARIANT form a family):
// train on the kernels drawn from the other families, then
//   - per kernel: Kendall tau and MAPE of predicted against timed latency,
//     over the kernels only the held-out family has (pooled);
//   - per model: `refinery cost`'s total (sum over the kernels plus the run
//     overhead) against the model's timed latency: MAPE, Kendall tau; and
//     where its error is: per op, the learned and analytic prices of its
//     nodes beside their in-context shares of the timed run.
// PAIRS (bench/cost/run.sh) is bench/ort/bench.mjs's --json of pairs of
// equivalent graphs of one model (different extractions of its saturated
// e-graph, the model named by the first file's stem), each pair timed
// interleaved over many rounds (CPU time): how often the held-out model
// orders a pair as ONNX Runtime does, over the pairs whose difference is
// significant across rounds (sign test, p < 0.01) and over 3%.
// The analytic model (--target cpu-analytic) is scored beside it.
// --train chooses the training records: all (default), only the models'
// nodes in context ("context" records), or only kernels timed alone.
// --json writes each held-out model's figures with its breakdown per op
// (every op, not the six printed) for bench/cost/attribute.py, which sets
// several datasets' side by side.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include <fstream>
#include <nlohmann/json.hpp>

#include "frontends/onnx.h"
#include "ir/io.h"
#include "targets/cost_model.h"
#include "targets/learned.h"

namespace fs = std::filesystem;
using namespace refinery;
using namespace refinery::targets;

namespace {

// A model, its _op13 twin and its extractions (measured as NAME.VARIANT,
// an equivalent graph of NAME) are one family.
std::string family(const std::string& model) {
  std::string f = model.substr(0, model.find('.'));
  if (f.ends_with("_op13")) f.resize(f.size() - 5);
  return f;
}

double kendall_tau(const std::vector<double>& a, const std::vector<double>& b) {
  double concordant = 0, discordant = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = i + 1; j < a.size(); ++j) {
      double s = (a[i] - a[j]) * (b[i] - b[j]);
      if (s > 0) ++concordant;
      if (s < 0) ++discordant;
    }
  return concordant + discordant > 0 ? (concordant - discordant) / (concordant + discordant) : 0;
}

double mape(const std::vector<double>& pred, const std::vector<double>& meas) {
  double s = 0;
  for (std::size_t i = 0; i < pred.size(); ++i) s += std::abs(pred[i] - meas[i]) / meas[i];
  return pred.empty() ? 0 : 100 * s / static_cast<double>(pred.size());
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

[[noreturn]] void die(const std::string& m) {
  fmt::print(stderr, "bench_cost: error: {}\n", m);
  std::exit(2);
}

double model_ms(const CostModel& m, const fs::path& file) {
  auto g = frontends::import_onnx(file);
  if (!g) die(g.error().str());
  return (graph_cost(m, *g) + m.run_overhead()) * 1e3;
}

// Where a held-out model's error is: per op, the learned and analytic
// prices of its nodes summed beside their in-context shares of the timed
// run ("context" records, node by index); the run less the run overhead
// less those shares is what no node was given (kernels matching no node).
nlohmann::json breakdown(const CostModel& learned, const CostModel& analytic, const Record& model,
                         const Dataset& data) {
  auto g = frontends::import_onnx(model.file);
  if (!g) die(g.error().str());
  std::vector<double> lp = node_costs(learned, *g), ap = node_costs(analytic, *g);
  std::vector<double> ctx(g->num_nodes(), -1);
  const std::string prefix = "context:" + model.id.substr(6) + ":";
  for (const Record& r : data.records)
    if (r.kind == "context" && r.id.starts_with(prefix)) ctx[std::stoul(r.id.substr(prefix.size()))] = r.ms;
  std::map<std::string, std::array<double, 5>> by_op;  // nodes, learned, analytic, context, priced without context
  double shared = 0;
  for (std::size_t i = 0; i < g->num_nodes(); ++i) {
    if (lp[i] == 0 && ctx[i] < 0) continue;
    auto& row = by_op[std::string(ir::op_name(g->nodes()[i].op))];
    row[0] += 1, row[1] += lp[i] * 1e3, row[2] += ap[i] * 1e3;
    if (ctx[i] >= 0) row[3] += ctx[i], shared += ctx[i];
    else row[4] += lp[i] * 1e3;
  }
  const double run = model.median_ms - data.run_overhead_ms;
  fmt::print("  {}: timed {:.3f} ms, less the run overhead {:.3f}; in-context shares {:.3f}, unshared {:+.3f}\n",
             model.id, model.median_ms, run, shared, run - shared);
  std::vector<std::pair<std::string, std::array<double, 5>>> rows(by_op.begin(), by_op.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return std::abs(a.second[1] - a.second[3]) > std::abs(b.second[1] - b.second[3]);
  });
  nlohmann::json out = {{"run_ms", run}, {"shared_ms", shared}, {"ops", nlohmann::json::object()}};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& [op, v] = rows[i];
    out["ops"][op] = {{"nodes", v[0]}, {"learned_ms", v[1]}, {"analytic_ms", v[2]}, {"context_ms", v[3]},
                      {"learned_unshared_ms", v[4]}};
    if (i >= 6) continue;
    fmt::print("    {:<20} {:>4} nodes: learned {:>9.3f} analytic {:>9.3f} in context {:>9.3f}{}\n", op, v[0], v[1],
               v[2], v[3], v[4] > 0 ? fmt::format(" (learned {:.3f} on nodes without a share)", v[4]) : "");
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  fs::path work = fs::temp_directory_path() / "refinery-bench-cost";
  std::vector<std::string> files;
  std::string train = "all";
  std::optional<fs::path> json_out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--work" && i + 1 < args.size())
      work = args[++i];
    else if (args[i] == "--train" && i + 1 < args.size())
      train = args[++i];
    else if (args[i] == "--json" && i + 1 < args.size())
      json_out = args[++i];
    else
      files.push_back(args[i]);
  }
  if (files.empty() || files.size() > 2 || (train != "all" && train != "context" && train != "alone"))
    die("usage: bench_cost DATASET.jsonl [PAIRS.json] [--work DIR] [--train all|context|alone] [--json OUT]");
  auto data = read_dataset(files[0]);
  if (!data) die(data.error().str());
  std::optional<nlohmann::json> pairs;
  if (files.size() == 2) {
    std::ifstream in(files[1]);
    pairs = nlohmann::json::parse(in, nullptr, false);
    if (!in || pairs->is_discarded() || !pairs->contains("rows"))
      die(files[1] + ": not bench/ort/bench.mjs's --json (an object with rows)");
  }
  fs::create_directories(work);
  auto spec = find_spec("cpu");
  if (!spec) die(spec.error().str());
  auto analytic = load_target("cpu-analytic");
  if (!analytic) die(analytic.error().str());

  // The families of the whole models but `refinery measure`'s MatMul sweep,
  // which always trains.
  std::set<std::string> families;
  for (const Record& r : data->records)
    if (r.kind == "model")
      for (const std::string& m : r.models)
        if (m != kSweepModel) families.insert(family(m));
  std::vector<double> k_pred, k_meas, c_pred, c_meas, m_pred, m_meas, m_analytic;
  std::vector<std::string> m_names;
  nlohmann::json m_json = nlohmann::json::array();  // per held-out model, for --json
  std::map<std::string, std::shared_ptr<const CostModel>> held_out_model;  // by family
  // Why kernels timed alone mispredict networks: each node of a model in
  // context beside the same node timed alone (the micro-model of equal
  // features, its first shape variant), summed per op.
  {
    std::map<std::vector<float>, double> alone;
    for (const Record& r : data->records)
      if (r.kind == "kernel" && r.features.size() == 1) {
        std::vector<float> f(r.features[0].begin(), r.features[0].end());
        f[kTimedAlone] = 0;
        alone.emplace(std::move(f), r.ms);
      }
    std::map<int, std::array<double, 3>> by_op;  // op -> {nodes, alone ms, context ms}
    for (const Record& r : data->records) {
      if (r.kind != "context") continue;
      auto it = alone.find(std::vector<float>(r.features[0].begin(), r.features[0].end()));
      if (it == alone.end()) continue;
      auto& row = by_op[static_cast<int>(r.features[0][0])];
      row[0] += 1, row[1] += it->second, row[2] += r.ms;
    }
    if (!by_op.empty()) {
      fmt::print("nodes in context beside the same node timed alone, per op:\n  {:<22} {:>6} {:>11} {:>11} {:>7}\n",
                 "op", "nodes", "alone ms", "context ms", "ratio");
      std::vector<std::pair<int, std::array<double, 3>>> rows(by_op.begin(), by_op.end());
      std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second[1] > b.second[1]; });
      for (const auto& [op, row] : rows)
        fmt::print("  {:<22} {:>6} {:>11.3f} {:>11.3f} {:>7.2f}\n", ir::op_name(static_cast<ir::Op>(op)), row[0],
                   row[1], row[2], row[1] / row[2]);
    }
  }
  fmt::print("leave one family out: {} families, {} timed records ({} failed), run overhead {:.4f} ms\n",
             families.size(), data->records.size(), data->errors, data->run_overhead_ms);
  fmt::print("{:<22} {:>8} {:>8} {:>9} {:>9} {:>11} {:>11}\n", "held out", "train", "kernels", "tau", "MAPE %",
             "model ms", "timed ms");
  for (const std::string& fam : families) {
    auto in_family = [&](const Record& r) {
      return std::all_of(r.models.begin(), r.models.end(), [&](const std::string& m) { return family(m) == fam; });
    };
    auto samples = training_samples(*data, [&](const Record& r) {
      return !in_family(r) && (train == "all" || (train == "context") == (r.kind == "context"));
    });
    fs::path file = work / fmt::format("lomo_{}.ubj", fam);
    if (auto ok = train_cost_model(samples, data->run_overhead_ms, data->kernel_dispatch_ms, file); !ok)
      die(ok.error().str());
    auto booster = Booster::load(file);
    if (!booster) die(booster.error().str());
    auto model = make_learned_cpu_model(*spec, file);
    if (!model) die(model.error().str());
    held_out_model[fam] = std::move(*model);
    std::vector<double> fp, fm;
    for (const Record& r : data->records) {
      if (r.kind != "kernel" || !in_family(r)) continue;
      // An Attention is priced as its parts (LearnedCpuModel), not from its features.
      if (static_cast<ir::Op>(r.features[0][0]) == ir::Op::MsAttention) continue;
      double p = 0;
      // A fused epilogue (its fused_into feature set) costs nothing of its own.
      std::vector<Features> rows;
      for (const Features& f : r.features)
        if (f[1] < 0) rows.push_back(f);
      for (double x : (*booster)->predict_ms(rows)) p += x;
      fp.push_back(p);
      fm.push_back(r.ms);
    }
    // The held-out models' nodes: predicted against their in-context shares.
    std::vector<Features> rows;
    for (const Record& r : data->records)
      if (r.kind == "context" && in_family(r)) rows.push_back(r.features[0]), c_meas.push_back(r.ms);
    for (double x : (*booster)->predict_ms(rows)) c_pred.push_back(x);
    k_pred.insert(k_pred.end(), fp.begin(), fp.end());
    k_meas.insert(k_meas.end(), fm.begin(), fm.end());
    std::string whole;
    for (const Record& r : data->records) {
      if (r.kind != "model" || !in_family(r)) continue;
      nlohmann::json row = breakdown(*held_out_model[fam], *analytic->model, r, *data);
      double p = model_ms(*held_out_model[fam], r.file);
      m_pred.push_back(p);
      m_meas.push_back(r.median_ms);
      m_analytic.push_back(model_ms(*analytic->model, r.file));
      m_names.push_back(r.id.substr(r.id.find(':') + 1));  // NAME or NAME@SIZE (a shape-varied copy)
      row["model"] = m_names.back(), row["family"] = fam, row["timed_ms"] = r.median_ms;
      row["learned_ms"] = p, row["analytic_ms"] = m_analytic.back();
      m_json.push_back(std::move(row));
      whole += fmt::format(" {}={:.3f}/{:.3f}", m_names.back(), p, r.median_ms);
    }
    fmt::print("{:<22} {:>8} {:>8} {:>9.3f} {:>9.1f} {}\n", fam, samples.size(), fp.size(), kendall_tau(fp, fm),
               mape(fp, fm), whole);
  }
  fmt::print("\nper kernel (held out, pooled): {} kernels, Kendall tau {:.3f}, MAPE {:.1f}%, median APE {:.1f}%\n",
             k_pred.size(), kendall_tau(k_pred, k_meas), mape(k_pred, k_meas), [&] {
               std::vector<double> ape;
               for (std::size_t i = 0; i < k_pred.size(); ++i)
                 ape.push_back(100 * std::abs(k_pred[i] - k_meas[i]) / k_meas[i]);
               return median(ape);
             }());
  {
    std::vector<double> bp, bm;
    for (std::size_t i = 0; i < k_pred.size(); ++i)
      if (k_meas[i] >= 0.01) bp.push_back(k_pred[i]), bm.push_back(k_meas[i]);
    fmt::print("per kernel of at least 0.01 ms (timing noise below): {} kernels, Kendall tau {:.3f}, MAPE {:.1f}%\n",
               bp.size(), kendall_tau(bp, bm), mape(bp, bm));
  }
  if (!c_pred.empty()) {
    std::vector<double> bp, bm;
    for (std::size_t i = 0; i < c_pred.size(); ++i)
      if (c_meas[i] >= 0.01) bp.push_back(c_pred[i]), bm.push_back(c_meas[i]);
    fmt::print(
        "per node in context (held out, pooled): {} nodes, Kendall tau {:.3f}, MAPE {:.1f}%; "
        "of at least 0.01 ms: {} nodes, tau {:.3f}, MAPE {:.1f}%\n",
        c_pred.size(), kendall_tau(c_pred, c_meas), mape(c_pred, c_meas), bp.size(), kendall_tau(bp, bm), mape(bp, bm));
  }
  fmt::print("\nwhole models (held out): {:<20} {:>10} {:>10} {:>8} {:>12}\n", "model", "timed ms", "learned", "err %",
             "analytic");
  for (std::size_t i = 0; i < m_names.size(); ++i)
    fmt::print("  {:<40} {:>10.3f} {:>10.3f} {:>+8.1f} {:>12.3f}\n", m_names[i], m_meas[i], m_pred[i],
               100 * (m_pred[i] - m_meas[i]) / m_meas[i], m_analytic[i]);
  // The zoo's models as they are, their shape-varied copies (NAME@SIZE),
  // and extractions measured beside them (NAME.VARIANT).
  auto kind = [](const std::string& name) {
    return name.find('@') != std::string::npos ? 1 : name.find('.') != std::string::npos ? 2 : 0;
  };
  for (int k : {0, 1, 2}) {
    std::vector<double> p, m, an;
    for (std::size_t i = 0; i < m_names.size(); ++i)
      if (kind(m_names[i]) == k) p.push_back(m_pred[i]), m.push_back(m_meas[i]), an.push_back(m_analytic[i]);
    if (p.empty()) continue;
    fmt::print(
        "whole models{}: {} models, learned MAPE {:.1f}%, Kendall tau {:.3f}; analytic MAPE {:.1f}%, tau {:.3f}\n",
        std::array{"", " (shape-varied copies)", " (extractions, NAME.VARIANT)"}[k], p.size(), mape(p, m),
        kendall_tau(p, m), mape(an, m), kendall_tau(an, m));
  }

  if (pairs) {
    int counted = 0, agree = 0, agree_analytic = 0, close = 0, noisy = 0;
    std::map<std::string, double> learned_ms, analytic_ms;  // by file
    fmt::print("\nequivalent graphs, pairs timed interleaved (model: timed speedup, p; learned, analytic):\n");
    for (const auto& row : pairs->at("rows")) {
      const std::string model = row.at("model").get<std::string>();
      auto it = held_out_model.find(family(model));
      if (it == held_out_model.end()) continue;
      const std::string a = row.at("orig").get<std::string>(), b = row.at("opt").get<std::string>();
      for (const std::string& f : {a, b})
        if (!learned_ms.contains(f))
          learned_ms[f] = model_ms(*it->second, f), analytic_ms[f] = model_ms(*analytic->model, f);
      const double timed = row.at("speedup").get<double>(), p = row.at("p_value").get<double>();
      const double learned = learned_ms[a] / learned_ms[b], ana = analytic_ms[a] / analytic_ms[b];
      std::string verdict;
      if (std::abs(timed - 1) <= 0.03) {
        ++close, verdict = "within 3%";
      } else if (p >= 0.01) {
        ++noisy, verdict = "not significant";
      } else {
        ++counted;
        agree += (learned - 1) * (timed - 1) > 0;
        agree_analytic += (ana - 1) * (timed - 1) > 0;
      }
      // Which extraction: the folders above the file (run.sh's analytic/cpu-analytic, learned/cpu, zoo).
      auto label = [](const fs::path& f) {
        fs::path up = f.parent_path();
        return (up.parent_path().filename() / up.filename() / f.stem()).string();
      };
      fmt::print("  {:<20} {:.3f}x p={:.2g}; {:.3f}x {:.3f}x  {} vs {} {}\n", model, timed, p, learned, ana, label(a),
                 label(b), verdict);
    }
    fmt::print("pairwise ranking of equivalent graphs (timed interleaved, significant at p < 0.01 and over 3%): "
               "{} pairs ({} within 3%, {} not significant left out), learned agrees {:.1f}%, analytic {:.1f}%\n",
               counted, close, noisy, counted ? 100.0 * agree / counted : 0.0,
               counted ? 100.0 * agree_analytic / counted : 0.0);
  }
  if (json_out) {
    const nlohmann::json doc = {{"dataset", files[0]}, {"run_overhead_ms", data->run_overhead_ms}, {"models", m_json}};
    const std::string text = doc.dump(1) + '\n';
    if (auto w = ir::write_files_atomic({{*json_out, text}}); !w) die(w.error().str());
  }
  return 0;
}
