// The model zoo (bench/zoo, exported to ${REFINERY_BINARY_DIR}/zoo by the
// zoo_small / zoo targets): every model round-trips (checker, structure,
// ONNX Runtime bit for bit) and Refinery's shape inference agrees with ONNX's.
// Every zoo model that is built runs (the zoo target exports all of them);
// REFINERY_ZOO_ALL=0 leaves the large ones out for a quick local run.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <cstdlib>
#include <fstream>

#include "frontends/onnx.h"
#include "tests/frontends/model_builder.h"

namespace refinery::frontends {
namespace {

struct ZooModel {
  const char* name;
  bool small;
};

void PrintTo(const ZooModel& m, std::ostream* os) { *os << m.name; }

const ZooModel kZoo[] = {
    {"mlp", true},
    {"bert_encoder", true},
    {"squeezenet1_1", true},
    {"mobilenet_v2", true},
    {"shufflenet_v2_x1_0", true},
    {"resnet18", false},
    {"resnext50_32x4d", false},
    {"inception_v3", false},
    {"densenet121", false},
};

class Zoo : public ::testing::TestWithParam<ZooModel> {
 protected:
  void SetUp() override {
    file = std::filesystem::path(REFINERY_BINARY_DIR) / "zoo" / (std::string(GetParam().name) + ".onnx");
    if (!std::filesystem::exists(file)) GTEST_SKIP() << file << " is absent: build the zoo_small (or zoo) target first";
    const char* all = std::getenv("REFINERY_ZOO_ALL");
    if (!GetParam().small && all != nullptr && std::string(all) == "0")
      GTEST_SKIP() << GetParam().name << " is a large model and REFINERY_ZOO_ALL=0 leaves them out";
  }
  std::filesystem::path file;
};

TEST_P(Zoo, RoundTripIsExact) {
  auto g = import_onnx(file);
  ASSERT_TRUE(g) << g.error().str();
  auto dir = testing::fresh_dir(std::string("zoo_") + GetParam().name);
  auto out = dir / file.filename();
  ASSERT_TRUE(export_onnx(*g, out)) << export_onnx(*g, out).error().str();
  EXPECT_NO_THROW(onnx::checker::check_model(out.string()));
  auto again = import_onnx(out);
  ASSERT_TRUE(again) << again.error().str();
  EXPECT_EQ(testing::graph_differences(*g, *again), std::vector<std::string>{});
  auto ort = testing::ort_compare_exact(file, out);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(ort.status, 0) << ort.output;
}

// Where both Refinery and ONNX (with data propagation) know a dimension's
// size, they agree; element types always agree.
TEST_P(Zoo, ShapeInferenceAgreesWithOnnx) {
  // Import a copy without the exporter's value_info, so Refinery's types come
  // from its own rules only.
  onnx::ModelProto m = testing::read_model_proto(file);
  m.mutable_graph()->clear_value_info();
  auto dir = testing::fresh_dir(std::string("zoo_shapes_") + GetParam().name);
  {
    std::ofstream out(dir / file.filename(), std::ios::binary);
    ASSERT_TRUE(m.SerializeToOstream(&out));
  }
  auto g = import_onnx(dir / file.filename());
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(g) << g.error().str();
  onnx::ShapeInferenceOptions options(false, 1, true);
  ASSERT_NO_THROW(onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), options));
  std::vector<std::string> disagreements;
  int compared = 0, ours_less = 0;
  auto check = [&](const onnx::ValueInfoProto& vi) {
    auto v = g->find_value(vi.name());
    if (!v || !vi.type().has_tensor_type()) return;
    const ir::TensorType& ours = g->value(*v).type;
    const auto& theirs = vi.type().tensor_type();
    ++compared;
    if (ir::dtype_to_onnx(ours.dtype) != theirs.elem_type())
      disagreements.push_back(fmt::format("{}: ours {}, ONNX elem_type {}", vi.name(), ours.str(), theirs.elem_type()));
    if (!theirs.has_shape() || !ours.shape.ranked()) return;
    if (ours.shape.rank() != theirs.shape().dim_size()) {
      disagreements.push_back(
          fmt::format("{}: ours {}, ONNX rank {}", vi.name(), ours.str(), theirs.shape().dim_size()));
      return;
    }
    for (int i = 0; i < theirs.shape().dim_size(); ++i) {
      const auto& d = theirs.shape().dim(i);
      const ir::Dim& o = ours.shape[i];
      if (d.has_dim_value() && o.is_static() && d.dim_value() != o.size())
        disagreements.push_back(fmt::format("{}: ours {}, ONNX dim {} is {}", vi.name(), ours.str(), i, d.dim_value()));
      if (d.has_dim_value() && !o.is_static()) ++ours_less;
    }
  };
  for (const auto& vi : m.graph().value_info()) check(vi);
  for (const auto& vi : m.graph().output()) check(vi);
  std::cout << fmt::format(
      "[ zoo      ] {}: {} values compared, {} disagreements, {} dims ONNX knows and Refinery "
      "does not\n",
      GetParam().name, compared, disagreements.size(), ours_less);
  EXPECT_EQ(disagreements, std::vector<std::string>{});
  EXPECT_GT(compared, 0);
}

INSTANTIATE_TEST_SUITE_P(Models, Zoo, ::testing::ValuesIn(kZoo),
                         [](const ::testing::TestParamInfo<ZooModel>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace refinery::frontends
