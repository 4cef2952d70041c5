// Which cost model a target name gets (targets::load_target): `cpu` is the
// learned model (the user's calibrated file first, else the one shipped
// beside the spec), `cpu-analytic` the same spec with the analytic model; a
// learned model that cannot be read is an error naming its file, never the
// analytic model in its place. Predicted prices are the learned model's own
// (it may be retrained): only which model prices is checked here.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "targets/cost_model.h"
#include "tests/targets/graph_builder.h"

namespace refinery::targets {
namespace {

namespace fs = std::filesystem;
using refinery::testing::GraphBuilder;

ir::Graph conv_relu() {
  GraphBuilder b;
  auto x = b.input("x", {1, 16, 32, 32});
  auto y = b.op1(ir::Op::Conv, {x, b.weight("w", {32, 16, 3, 3})});
  return b.finish({b.op1(ir::Op::Relu, {y})});
}

// REFINERY_COST_MODELS set for the scope of one test, then restored.
class CostModelsDir {
 public:
  explicit CostModelsDir(const fs::path& dir) {
    if (const char* v = std::getenv("REFINERY_COST_MODELS")) old_ = v;
    setenv("REFINERY_COST_MODELS", dir.c_str(), 1);
  }
  ~CostModelsDir() {
    if (old_)
      setenv("REFINERY_COST_MODELS", old_->c_str(), 1);
    else
      unsetenv("REFINERY_COST_MODELS");
  }

 private:
  std::optional<std::string> old_;
};

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("refinery_target_test_" + std::to_string(::getpid())) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(Target, CpuIsTheLearnedModelShippedBesideItsSpec) {
  CostModelsDir none(fresh_dir("none"));  // no calibrated model: the shipped one
  auto spec = find_spec("cpu");
  ASSERT_TRUE(spec.has_value()) << spec.error().str();
  auto t = load_target("cpu");
  ASSERT_TRUE(t.has_value()) << t.error().str();
  EXPECT_EQ(t->name, "cpu");
  EXPECT_EQ(t->model_kind(), "learned");
  EXPECT_EQ(t->learned_model_file, spec->folder / spec->learned_model);
  EXPECT_GT(t->model->run_overhead(), 0);  // an ONNX Runtime session run's fixed cost: the learned model's
  // --cost-model learned is the same model; a file names its own.
  auto learned = load_target("cpu", "learned");
  ASSERT_TRUE(learned.has_value()) << learned.error().str();
  EXPECT_EQ(learned->name, "cpu");
  EXPECT_EQ(learned->learned_model_file, t->learned_model_file);
  EXPECT_EQ(graph_cost(*learned->model, conv_relu()), graph_cost(*t->model, conv_relu()));
}

TEST(Target, CpuAnalyticIsTheSameSpecWithTheAnalyticModel) {
  auto spec = find_spec("cpu");
  auto analytic_spec = find_spec("cpu-analytic");
  ASSERT_TRUE(spec.has_value() && analytic_spec.has_value());
  EXPECT_EQ(analytic_spec->name, "cpu-analytic");
  EXPECT_TRUE(analytic_spec->learned_model.empty());
  EXPECT_EQ(analytic_spec->peak_flops, spec->peak_flops);  // one spec file, two names
  EXPECT_EQ(analytic_spec->op_overhead_s, spec->op_overhead_s);
  EXPECT_EQ(analytic_spec->folder, spec->folder);

  auto analytic = load_target("cpu-analytic");
  ASSERT_TRUE(analytic.has_value()) << analytic.error().str();
  EXPECT_EQ(analytic->name, "cpu-analytic");
  EXPECT_EQ(analytic->model_kind(), "analytic");
  EXPECT_TRUE(analytic->learned_model_file.empty());
  EXPECT_EQ(analytic->model->run_overhead(), 0);
  // Its prices are the analytic model's of the cpu spec (targets/models.cpp).
  const double expected = graph_cost(*make_cost_model(*spec), conv_relu());
  EXPECT_EQ(graph_cost(*analytic->model, conv_relu()), expected);
  // --cost-model analytic on cpu is the same target, named so.
  auto flag = load_target("cpu", "analytic");
  ASSERT_TRUE(flag.has_value()) << flag.error().str();
  EXPECT_EQ(flag->name, "cpu-analytic");
  EXPECT_EQ(flag->model_kind(), "analytic");
  EXPECT_EQ(graph_cost(*flag->model, conv_relu()), expected);
  auto both = load_target("cpu-analytic", "analytic");
  ASSERT_TRUE(both.has_value()) << both.error().str();
  EXPECT_EQ(both->name, "cpu-analytic");
}

TEST(Target, ACalibratedModelComesFirstAndABrokenOneIsAnError) {
  auto spec = find_spec("cpu");
  ASSERT_TRUE(spec.has_value());
  // The user's calibrated file is the one `--target cpu` reads.
  fs::path user = fresh_dir("calibrated");
  fs::copy_file(spec->folder / spec->learned_model, user / spec->learned_model);
  {
    CostModelsDir dir(user);
    auto t = load_target("cpu");
    ASSERT_TRUE(t.has_value()) << t.error().str();
    EXPECT_EQ(t->learned_model_file, user / spec->learned_model);
  }
  // One that does not load is an error naming it, not the shipped or the analytic model in its place.
  fs::path broken = fresh_dir("broken");
  std::ofstream(broken / spec->learned_model) << "not a model";
  {
    CostModelsDir dir(broken);
    auto t = load_target("cpu");
    ASSERT_FALSE(t.has_value());
    const std::string e = t.error().str();
    EXPECT_NE(e.find((broken / spec->learned_model).string()), std::string::npos) << e;
    EXPECT_NE(e.find("--target cpu-analytic"), std::string::npos) << e;
    EXPECT_TRUE(load_target("cpu-analytic").has_value()) << "the analytic model reads no model file";
  }
}

TEST(Target, AMissingLearnedModelIsAnErrorNamingTheFile) {
  CostModelsDir none(fresh_dir("none"));
  fs::path d = fresh_dir("spec");
  std::ofstream(d / "box.json") << R"({"name": "box", "kind": "cpu", "peak_flops": {"f32": 1e11},
                                       "memory_bandwidth": 2e10, "learned_model": "box.ubj"})";
  auto t = load_target((d / "box.json").string());
  ASSERT_FALSE(t.has_value());
  const std::string e = t.error().str();
  EXPECT_NE(e.find((d / "box.ubj").string()), std::string::npos) << e;
  EXPECT_NE(e.find("does not exist"), std::string::npos) << e;
  // A file given with --cost-model is named the same way.
  auto file = load_target("cpu", (d / "other.ubj").string());
  ASSERT_FALSE(file.has_value());
  EXPECT_NE(file.error().str().find((d / "other.ubj").string()), std::string::npos) << file.error().str();
  // --cost-model analytic needs no file.
  auto analytic = load_target((d / "box.json").string(), "analytic");
  ASSERT_TRUE(analytic.has_value()) << analytic.error().str();
  EXPECT_EQ(analytic->model_kind(), "analytic");
}

TEST(Target, NamesAndCostModelsThatDoNotGoTogether) {
  // The analytic target asked for a learned model.
  for (const char* cost_model : {"learned", "/some/model.ubj"}) {
    auto t = load_target("cpu-analytic", cost_model);
    ASSERT_FALSE(t.has_value()) << cost_model;
    EXPECT_NE(t.error().str().find("--target cpu"), std::string::npos) << t.error().str();
  }
  // A spec without a learned model has no NAME-analytic: its model is analytic already.
  auto gpu = load_target("h100-analytic");
  ASSERT_FALSE(gpu.has_value());
  EXPECT_NE(gpu.error().str().find("has no learned model"), std::string::npos) << gpu.error().str();
  // --cost-model is for cpu targets.
  EXPECT_FALSE(load_target("gpu", "analytic").has_value());
  EXPECT_FALSE(load_target("gpu", "learned").has_value());
  // An unknown name lists cpu-analytic beside cpu.
  auto unknown = load_target("cpu-learned");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.error().str().find("cpu, cpu-analytic, "), std::string::npos) << unknown.error().str();
}

}  // namespace
}  // namespace refinery::targets
