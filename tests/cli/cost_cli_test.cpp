// refinery measure / calibrate / cost end to end on a small model: the
// micro-models listed and timed in ONNX Runtime, the model profiled in
// context, a model trained from them, and the costs it predicts, per node
// and in total.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "frontends/onnx.h"
#include "tests/cli/cli_runner.h"
#include "tests/targets/graph_builder.h"

namespace refinery::testing {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("refinery_cost_cli_" + std::to_string(::getpid())) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::vector<nlohmann::json> lines(const fs::path& file) {
  std::vector<nlohmann::json> out;
  std::ifstream in(file);
  std::string l;
  while (std::getline(in, l))
    if (!l.empty()) out.push_back(nlohmann::json::parse(l));
  return out;
}

TEST(CostCli, CostPrintsTheTotalAndEveryNode) {
  const std::string model = source_path("examples/tiny_cnn.onnx");
  CliResult r = run_cli("cost " + model + " --target cpu --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("target"), "cpu");
  EXPECT_EQ(j.at("cost_model"), "learned");  // the cpu target's own model, and the file it read
  EXPECT_TRUE(j.at("cost_model_file").get<std::string>().ends_with("cpu.ubj")) << j.at("cost_model_file");
  double sum = j.at("run_overhead_ms").get<double>();
  EXPECT_GT(sum, 0);
  ASSERT_FALSE(j.at("nodes").empty());
  for (const auto& n : j.at("nodes")) {
    EXPECT_TRUE(n.at("name").is_string());
    EXPECT_TRUE(n.at("op").is_string());
    EXPECT_GE(n.at("ms").get<double>(), 0);
    sum += n.at("ms").get<double>();
  }
  EXPECT_NEAR(j.at("total_ms").get<double>(), sum, 1e-9 * sum);
  // The analytic model has no run overhead and no file; a human-readable table without --json.
  r = run_cli("cost " + model + " --target cpu-analytic --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("target"), "cpu-analytic");
  EXPECT_EQ(j.at("cost_model"), "analytic");
  EXPECT_TRUE(j.at("cost_model_file").is_null());
  EXPECT_EQ(j.at("run_overhead_ms"), 0);
  r = run_cli("cost " + model + " --target cpu-analytic");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("predicted"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("on cpu-analytic (analytic cost model;"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("conv"), std::string::npos) << r.out;
  // Bad input: exit 2, one line naming what is wrong.
  r = run_cli("cost /nonexistent.onnx --target cpu");
  EXPECT_EQ(r.code, 2);
  r = run_cli("cost " + model + " --target gpu --cost-model learned");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--cost-model"), std::string::npos) << r.err;
}

// A Gelu at opset 13, written as its erf form: the form's last node
// carries the Gelu's price and says so, its other four cost nothing.
TEST(CostCli, CostSaysWhichNodeCarriesAFusedGroup) {
  GraphBuilder b;
  b.graph().info.opsets[""] = 13;
  ir::Graph g = b.finish({b.op1(ir::Op::Gelu, {b.input("x", {4, 64})})});
  const fs::path file = fresh_dir("fused") / "gelu13.onnx";
  ASSERT_TRUE(frontends::export_onnx(g, file).has_value());
  CliResult r = run_cli("cost " + file.string() + " --target cpu --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  auto nodes = nlohmann::json::parse(r.out).at("nodes");
  ASSERT_EQ(nodes.size(), 5u);
  for (std::size_t i = 0; i + 1 < nodes.size(); ++i) {
    EXPECT_EQ(nodes[i].at("ms"), 0) << nodes[i];
    EXPECT_FALSE(nodes[i].contains("fused_as")) << nodes[i];
  }
  EXPECT_GT(nodes.back().at("ms").get<double>(), 0);
  EXPECT_EQ(nodes.back().at("fused_as"), "gelu");
  r = run_cli("cost " + file.string() + " --target cpu");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("mul -> gelu"), std::string::npos) << r.out;
}

ir::Attributes conv3x3() {
  ir::Attributes a;
  a.set("kernel_shape", std::vector<int64_t>{3, 3});
  a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  return a;
}

// Two 3x3 Conv+Relu, a MaxPool, a 1x1 Conv and a MatMul+Add head, 46
// MFLOP: its run under ONNX Runtime (0.3-0.4 ms of CPU time here) is well
// above the noise of the session overhead timed beside it (0.02-0.03 ms).
// tiny_cnn's run less that overhead is 0.01-0.08 ms, within the noise: the
// test failed 2 runs in 5 on it.
std::string write_conv_model(const fs::path& dir) {
  GraphBuilder b;
  auto x = b.input("x", {1, 16, 40, 40});
  auto c1 = b.op1(ir::Op::Conv, {x, b.weight("w1", {32, 16, 3, 3}), b.weight("b1", {32})}, conv3x3());
  auto r1 = b.op1(ir::Op::Relu, {c1});
  auto c2 = b.op1(ir::Op::Conv, {r1, b.weight("w2", {32, 32, 3, 3}), b.weight("b2", {32})}, conv3x3());
  auto r2 = b.op1(ir::Op::Relu, {c2});
  ir::Attributes pool;
  pool.set("kernel_shape", std::vector<int64_t>{2, 2});
  pool.set("strides", std::vector<int64_t>{2, 2});
  auto p = b.op1(ir::Op::MaxPool, {r2}, pool);
  auto c3 = b.op1(ir::Op::Conv, {p, b.weight("w3", {16, 32, 1, 1}), b.weight("b3", {16})});
  auto flat = b.op1(ir::Op::Reshape, {c3, b.ints("shape", {1, 16 * 20 * 20})});
  auto m = b.op1(ir::Op::MatMul, {flat, b.weight("fc", {16 * 20 * 20, 10})});
  ir::Graph g = b.finish({b.op1(ir::Op::Add, {m, b.weight("fcb", {10})})});
  fs::path file = dir / "conv_model.onnx";
  auto ok = frontends::export_onnx(g, file);
  EXPECT_TRUE(ok.has_value()) << ok.error().str();
  return file.string();
}

// By default the manifest also lists the MatMul sweep (cli/cost.cpp, gemm_sweep_graph): its 27 MatMuls as
// micro-models, in each variant, and as one whole model, all of the model "sweep".
TEST(CostCli, MeasureListsTheMatMulSweep) {
  fs::path d = fresh_dir("sweep");
  const std::string model = write_conv_model(d);
  for (bool sweep : {true, false}) {
    const fs::path out = d / (sweep ? "on" : "off");
    CliResult r = run_cli("measure " + model + " -o " + out.string() + " --variants 1x1,2x1 --no-time" +
                          (sweep ? "" : " --no-gemm-sweep"));
    ASSERT_EQ(r.code, 0) << r.err;
    std::size_t kernels = 0, models = 0;
    for (const auto& e : lines(out / "manifest.jsonl"))
      if (e.contains("models") && e.at("models") == nlohmann::json::array({"sweep"}))
        ++(e.at("kind") == "model" ? models : kernels);
    EXPECT_EQ(kernels, sweep ? 54u : 0u);
    EXPECT_EQ(models, sweep ? 1u : 0u);
  }
}

TEST(CostCli, MeasureCalibrateAndPredictOnOneModel) {
  fs::path d = fresh_dir("calibrate");
  const std::string model = write_conv_model(d);
  // The MatMul sweep left out: this model alone (the sweep's manifest is MeasureListsTheMatMulSweep's).
  CliResult r = run_cli("measure " + model + " -o " + (d / "data").string() +
                        " --variants 1x1,2x1 --runs 3 --warmup 1 --min-ms 1 --no-gemm-sweep");
  ASSERT_EQ(r.code, 0) << r.err;
  auto manifest = lines(d / "data" / "manifest.jsonl");
  auto dataset = lines(d / "data" / "dataset.jsonl");
  ASSERT_GE(manifest.size(), 10u);
  // Every entry but the overhead timed, then the whole model's nodes in
  // context (its ORT profile shared among them): they sum to its run.
  std::size_t timed = 0;
  double model_run_ms = -1, context_ms = 0;
  for (const auto& e : dataset) {
    ASSERT_FALSE(e.contains("error")) << e.dump();
    if (e.at("kind") == "context") {
      EXPECT_GT(e.at("ms").get<double>(), 0);
      context_ms += e.at("ms").get<double>();
      continue;
    }
    ++timed;
    EXPECT_GT(e.at("median_ms").get<double>(), 0);
    EXPECT_GE(e.at("mad_ms").get<double>(), 0);
    // The runs' minor page faults, recorded with each timing (session 22).
    if (e.at("kind") != "dispatch") {
      EXPECT_GE(e.at("faults").get<double>(), 0) << e.dump();
    }
    if (e.at("kind") == "model") {
      EXPECT_FALSE(e.at("profile").empty()) << e.dump();
      // Timed in a process of its own, in blocks over at least 0.4 s: the
      // smallest block median (session 27, the VM's slow spells).
      EXPECT_GE(e.at("blocks").get<int>(), 3) << e.dump();
      EXPECT_GE(e.at("slowest_block_ms").get<double>(), e.at("median_ms").get<double>()) << e.dump();
      model_run_ms = e.at("median_ms").get<double>() - e.at("overhead_ms").get<double>();
    }
  }
  EXPECT_EQ(timed, manifest.size() - 1);
  ASSERT_GT(model_run_ms, 0);
  EXPECT_NEAR(context_ms, model_run_ms, 1e-6 + 1e-3 * model_run_ms);
  // Resumed: nothing is timed again.
  r = run_cli("measure " + model + " -o " + (d / "data").string() +
              " --variants 1x1,2x1 --runs 3 --warmup 1 --min-ms 1 --no-gemm-sweep");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines(d / "data" / "dataset.jsonl").size(), dataset.size());

  fs::path file = d / "cpu.ubj";
  r = run_cli("calibrate --target cpu --from " + (d / "data" / "dataset.jsonl").string() + " -o " + file.string());
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_TRUE(fs::exists(file));
  r = run_cli("cost " + model + " --target cpu --cost-model " + file.string() + " --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j.at("total_ms").get<double>(), j.at("run_overhead_ms").get<double>());
  // The file calibrate wrote is the one cost reads, in the dataset's units
  // and with the run overhead counted once: the model it was trained on
  // (its nodes in context) is predicted at its own measured run, less the
  // overhead timed beside it (in-sample, so this does not depend on how
  // loaded the machine was while measuring; the overhead does, and the
  // model stores the dataset's median one).
  // How well it predicts what it was not trained on is bench/cost's
  // question (docs/measurements.md), not a test's: a timing taken at
  // another moment on a shared machine differs by more than any fixed
  // tolerance (4x was seen under ctest -j2).
  for (const auto& e : dataset) {
    if (e.at("kind") != "model") continue;
    double ratio = (j.at("total_ms").get<double>() - j.at("run_overhead_ms").get<double>()) /
                   (e.at("median_ms").get<double>() - e.at("overhead_ms").get<double>());
    EXPECT_GT(ratio, 0.8) << e.dump();
    EXPECT_LT(ratio, 1.25) << e.dump();
  }
  // A dataset of another feature form (its features written otherwise):
  // --refeaturize computes them again from the micro-models and the model,
  // timings kept, and trains on that: the same features, the same model.
  const fs::path stale = d / "stale.jsonl", again = d / "again.jsonl", file2 = d / "cpu2.ubj";
  {
    std::ofstream out(stale);
    for (nlohmann::json e : dataset) {
      if (e.contains("features"))
        for (auto& row : e.at("features"))
          for (auto& v : row) v = 0;
      out << e.dump() << "\n";
    }
  }
  r = run_cli("calibrate --target cpu --from " + stale.string() + " --refeaturize " + again.string() + " -o " +
              file2.string());
  ASSERT_EQ(r.code, 0) << r.err;
  auto refeaturized = lines(again);
  ASSERT_EQ(refeaturized.size(), dataset.size());
  for (std::size_t i = 0; i < dataset.size(); ++i)
    EXPECT_EQ(refeaturized[i].value("features", nlohmann::json()), dataset[i].value("features", nlohmann::json()))
        << dataset[i].dump();
  auto bytes = [](const fs::path& f) {
    std::ifstream in(f, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(bytes(file2), bytes(file));
  // A record whose micro-model is gone: an error naming the dataset's
  // line, nothing written; --refeaturize needs --from.
  {
    std::ofstream out(stale);
    for (nlohmann::json e : dataset) {
      if (e.at("kind") == "kernel") e["file"] = (d / "gone.onnx").string();
      out << e.dump() << "\n";
    }
  }
  fs::remove(again);
  r = run_cli("calibrate --target cpu --from " + stale.string() + " --refeaturize " + again.string());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(stale.string() + ":"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(again));
  EXPECT_EQ(run_cli("calibrate --target cpu model.onnx --refeaturize " + again.string()).code, 2);
  // calibrate needs something to train on.
  EXPECT_EQ(run_cli("calibrate --target cpu -o " + file.string()).code, 2);
  EXPECT_EQ(run_cli("calibrate --target gpu --from x.jsonl").code, 2);
  r = run_cli("calibrate --target cpu-analytic --from " + (d / "data" / "dataset.jsonl").string() + " -o " +
              file.string());
  EXPECT_EQ(r.code, 2);  // the analytic model is not trained
  EXPECT_NE(r.err.find("'cpu-analytic' has no learned cost model"), std::string::npos) << r.err;
  fs::remove_all(d.parent_path());
}

}  // namespace
}  // namespace refinery::testing
