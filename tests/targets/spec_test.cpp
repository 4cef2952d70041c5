// Hardware specs: every bundled spec loads with published figures; bad specs
// are refused with the file and the field named.
#include <gtest/gtest.h>

#include "targets/cost_model.h"
#include "targets/spec.h"

namespace refinery::targets {
namespace {

TEST(Spec, EveryBundledSpecLoads) {
  for (const char* name : {"cpu", "h100", "h200", "tpu_v4", "tpu_v5e"}) {
    auto s = find_spec(name);
    ASSERT_TRUE(s.has_value()) << name << ": " << s.error().str();
    EXPECT_EQ(s->name, name);
    EXPECT_FALSE(s->source.empty()) << name << " must say where its figures come from";
    EXPECT_GT(s->memory_bandwidth, 0);
  }
}

TEST(Spec, AliasesAndPublishedFigures) {
  auto gpu = find_spec("gpu");
  ASSERT_TRUE(gpu.has_value());
  EXPECT_EQ(gpu->name, "h100");
  EXPECT_EQ(gpu->kind, TargetKind::Gpu);
  EXPECT_DOUBLE_EQ(gpu->peak(ir::DType::bf16, true), 989.4e12);
  EXPECT_DOUBLE_EQ(gpu->peak(ir::DType::f32, true), 494.7e12);  // f32 matmuls on TF32 tensor cores
  EXPECT_DOUBLE_EQ(gpu->peak(ir::DType::f32, false), 67e12);
  auto h200 = find_spec("h200");
  ASSERT_TRUE(h200.has_value());
  EXPECT_DOUBLE_EQ(h200->memory_bandwidth, 4.8e12);
  auto tpu = find_spec("tpu");
  ASSERT_TRUE(tpu.has_value());
  EXPECT_EQ(tpu->name, "tpu_v4");
  EXPECT_EQ(tpu->mxu.rows, 128);
  EXPECT_EQ(tpu->tiling.sublanes, 8);
  EXPECT_EQ(tpu->tiling.lanes, 128);
  EXPECT_DOUBLE_EQ(tpu->peak(ir::DType::bf16, true), 275e12);
}

TEST(Spec, UnknownTargetListsTheKnownOnes) {
  auto s = find_spec("quantum");
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().str().find("unknown target 'quantum'"), std::string::npos);
  EXPECT_NE(s.error().str().find("tpu_v5e"), std::string::npos);
}

TEST(Spec, BadSpecsNameTheField) {
  auto missing = parse_spec(R"({"name": "x", "kind": "gpu", "peak_flops": {"f32": 1e12}})", "x.json");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().str(), "x.json: missing field 'memory_bandwidth'");
  auto kind =
      parse_spec(R"({"name": "x", "kind": "fpga", "peak_flops": {"f32": 1e12}, "memory_bandwidth": 1})", "x.json");
  ASSERT_FALSE(kind.has_value());
  EXPECT_NE(kind.error().str().find("field 'kind'"), std::string::npos);
  auto launch =
      parse_spec(R"({"name": "x", "kind": "gpu", "peak_flops": {"f32": 1e12}, "memory_bandwidth": 1})", "x.json");
  ASSERT_FALSE(launch.has_value());
  EXPECT_NE(launch.error().str().find("kernel_launch_s"), std::string::npos);
  auto family = parse_spec(R"({"name": "x", "kind": "gpu", "peak_flops": {"f32": 1e12}, "memory_bandwidth": 1,
      "kernel_launch_s": 1e-6, "kernel_latency_s": {"attention": 1e-6}})",
                           "x.json");
  ASSERT_FALSE(family.has_value());
  EXPECT_EQ(family.error().str(), "x.json: field 'kernel_latency_s.attention': unknown kernel family (known: conv, "
                                  "matmul, reduction, movement)");
  auto json = parse_spec("{", "x.json");
  ASSERT_FALSE(json.has_value());
  EXPECT_NE(json.error().str().find("not valid JSON"), std::string::npos);
}

// The export vocabulary: only the cpu target (ONNX Runtime) may emit
// com.microsoft contrib ops; every target may emit the standard ones.
TEST(Spec, OnlyTheCpuTargetEmitsContribOps) {
  for (const char* name : {"cpu", "h100", "h200", "tpu_v4", "tpu_v5e"}) {
    auto s = find_spec(name);
    ASSERT_TRUE(s.has_value());
    EXPECT_TRUE(s->may_emit(ir::Op::MatMul)) << name;
    EXPECT_EQ(s->may_emit(ir::Op::MsAttention), std::string_view(name) == "cpu") << name;
  }
  auto bad = parse_spec(
      R"({"name": "x", "kind": "cpu", "peak_flops": {"f32": 1e12}, "memory_bandwidth": 1, "export_domains": ["ai.x"]})",
      "x.json");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().str().find("field 'export_domains': unknown domain 'ai.x'"), std::string::npos);
}

}  // namespace
}  // namespace refinery::targets
