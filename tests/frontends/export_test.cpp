// Export: model facts restored, external data, atomic writes, checker
// failures leave nothing behind, read_tensor_proto.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>

#include "frontends/onnx.h"
#include "ir/text.h"
#include "tests/frontends/model_builder.h"

namespace refinery::frontends {
namespace {

using testing::ModelBuilder;
using TP = onnx::TensorProto;

class Export : public ::testing::Test {
 protected:
  void SetUp() override { dir = testing::fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name()); }
  void TearDown() override { std::filesystem::remove_all(dir); }

  std::vector<std::string> files_in_dir() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  // x [N, 8] -> Gemm(w [4, 8], bias [4], transB) -> Relu -> y [N, 4]
  std::filesystem::path gemm_model(const std::string& file_name) {
    ModelBuilder b;
    b.input("x", TP::FLOAT, {std::string("N"), int64_t{8}}).output("y", TP::FLOAT, {std::string("N"), int64_t{4}});
    std::vector<float> w(32), bias(4);
    for (size_t i = 0; i < w.size(); ++i) w[i] = 0.03125f * static_cast<float>(i) - 0.5f;
    for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.25f * static_cast<float>(i);
    b.initializer_f32("w", {4, 8}, w);
    b.initializer_f32("bias", {4}, bias);
    auto& gemm = b.node("Gemm", {"x", "w", "bias"}, {"g"}, "gemm");
    testing::add_attr(gemm, "transB", int64_t{1});
    b.node("Relu", {"g"}, {"y"}, "relu");
    auto& m = b.model();
    m.set_producer_version("1.2.3");
    m.set_domain("org.refinery.tests");
    m.set_model_version(7);
    m.set_doc_string("a small gemm");
    auto* p = m.add_metadata_props();
    p->set_key("author");
    p->set_value("tests");
    return b.write(dir, file_name);
  }

  std::filesystem::path dir;
};

TEST_F(Export, RestoresModelFactsAndNames) {
  auto g = import_onnx(gemm_model("in.onnx"));
  ASSERT_TRUE(g) << g.error().str();
  ASSERT_TRUE(export_onnx(*g, dir / "out.onnx"));
  onnx::ModelProto m = testing::read_model_proto(dir / "out.onnx");
  EXPECT_EQ(m.ir_version(), 8);
  EXPECT_EQ(m.producer_name(), "refinery-tests");
  EXPECT_EQ(m.producer_version(), "1.2.3");
  EXPECT_EQ(m.domain(), "org.refinery.tests");
  EXPECT_EQ(m.model_version(), 7);
  EXPECT_EQ(m.doc_string(), "a small gemm");
  ASSERT_EQ(m.metadata_props_size(), 1);
  EXPECT_EQ(m.metadata_props(0).key(), "author");
  EXPECT_EQ(m.graph().name(), "test");
  ASSERT_EQ(m.opset_import_size(), 1);
  EXPECT_EQ(m.opset_import(0).version(), 17);
  ASSERT_EQ(m.graph().node_size(), 2);
  EXPECT_EQ(m.graph().node(0).name(), "gemm");
  EXPECT_EQ(m.graph().node(0).output(0), "g");
  ASSERT_EQ(m.graph().initializer_size(), 2);
  EXPECT_EQ(m.graph().initializer(0).raw_data().size(), 128u);
  EXPECT_EQ(m.graph().value_info_size(), 0);  // the source typed no intermediate value
  EXPECT_EQ(files_in_dir(), (std::vector<std::string>{"in.onnx", "out.onnx"}));

  auto again = import_onnx(dir / "out.onnx");
  ASSERT_TRUE(again) << again.error().str();
  EXPECT_EQ(testing::graph_differences(*g, *again), std::vector<std::string>{});
  auto ort = testing::ort_compare_exact(dir / "in.onnx", dir / "out.onnx");
  EXPECT_EQ(ort.status, 0) << ort.output;
}

// Einsum is an op of the table, not an opaque node: its type is inferred on
// import (ONNX 1.12 infers only its rank), its equation goes out as it came
// in, and ONNX Runtime computes the same on both files.
TEST_F(Export, TypesTheIntermediateValuesTheSourceTypedAndNoOthers) {
  std::filesystem::path in = gemm_model("plain.onnx");
  onnx::ModelProto typed = testing::read_model_proto(in);
  auto* vi = typed.mutable_graph()->add_value_info();
  vi->set_name("g");
  testing::set_dims(vi->mutable_type(), TP::FLOAT, {std::string("N"), int64_t{4}});
  {
    std::ofstream out(dir / "typed.onnx", std::ios::binary);
    ASSERT_TRUE(typed.SerializeToOstream(&out));
  }
  auto g = import_onnx(dir / "typed.onnx");
  ASSERT_TRUE(g) << g.error().str();
  // an intermediate value the optimizer adds is not typed
  const ir::TensorType t = g->value(g->outputs()[0]).type;
  ir::Node relu;
  relu.op = ir::Op::Relu;
  relu.inputs = {g->outputs()[0]};
  ir::ValueId extra = g->node(g->add_node(relu, {"extra"}, {t})).outputs[0];
  relu.inputs = {extra};
  ir::ValueId z = g->node(g->add_node(relu, {"z"}, {t})).outputs[0];
  g->set_outputs({g->outputs()[0], z});
  ASSERT_TRUE(export_onnx(*g, dir / "out.onnx"));
  onnx::ModelProto m = testing::read_model_proto(dir / "out.onnx");
  ASSERT_EQ(m.graph().value_info_size(), 1);
  EXPECT_EQ(m.graph().value_info(0).name(), "g");
  EXPECT_EQ(m.graph().value_info(0).type().tensor_type().shape().dim(0).dim_param(), "N");
}

TEST_F(Export, EinsumRoundTrips) {
  ModelBuilder b(13);
  b.input("q", TP::FLOAT, {std::string("batch"), int64_t{4}, std::string("seq"), int64_t{16}});
  b.input("k", TP::FLOAT, {std::string("batch"), int64_t{4}, std::string("seq"), int64_t{16}});
  b.output("c", TP::FLOAT, {std::string("batch"), int64_t{4}, std::string("seq"), int64_t{16}});
  testing::add_attr(b.node("Einsum", {"q", "k"}, {"s"}, "scores"), "equation", std::string("bhqd,bhkd->bhqk"));
  testing::add_attr(b.node("Einsum", {"s", "k"}, {"c"}, "context"), "equation", std::string("...qk,...kd->...qd"));
  auto g = import_onnx(b.write(dir, "in.onnx"));
  ASSERT_TRUE(g) << g.error().str();
  ASSERT_EQ(g->nodes().size(), 2u);
  EXPECT_EQ(g->nodes()[0].op, ir::Op::Einsum);
  EXPECT_EQ(g->value(*g->find_value("s")).type.str(), "tensor<\"batch\"x4x\"seq\"x\"seq\"xf32>");
  ASSERT_TRUE(export_onnx(*g, dir / "out.onnx"));
  onnx::ModelProto m = testing::read_model_proto(dir / "out.onnx");
  ASSERT_EQ(m.graph().node_size(), 2);
  EXPECT_EQ(m.graph().node(0).op_type(), "Einsum");
  EXPECT_EQ(m.graph().node(1).attribute(0).s(), "...qk,...kd->...qd");
  auto again = import_onnx(dir / "out.onnx");
  ASSERT_TRUE(again) << again.error().str();
  EXPECT_EQ(testing::graph_differences(*g, *again), std::vector<std::string>{});
  auto ort = testing::ort_compare_exact(dir / "in.onnx", dir / "out.onnx");
  EXPECT_EQ(ort.status, 0) << ort.output;
}

// ONNX Runtime's com.microsoft Attention imports as the IR's ms_attention
// with its attention_bias (ONNX input 5) as input 3, and exports back in
// its domain, the inputs in their ONNX places, the domain imported once;
// ONNX Runtime runs both files alike. A node using mask_index stays opaque.
TEST_F(Export, ContribAttentionRoundTrips) {
  ModelBuilder b(13);
  b.import_domain("com.microsoft", 1);
  // a static batch: with a symbolic one the Attention is written with a
  // Reshape after it (AttentionOutputKeepsTheBatchUnknownToOrt)
  b.input("x", TP::FLOAT, {int64_t{2}, int64_t{6}, int64_t{8}});
  b.input("bias5", TP::FLOAT, {int64_t{1}, int64_t{1}, int64_t{6}, int64_t{6}});
  b.input("mask", TP::INT32, {int64_t{2}, int64_t{6}});
  b.output("y", TP::FLOAT, {int64_t{2}, int64_t{6}, int64_t{8}});
  b.output("z", TP::FLOAT, {});
  std::vector<float> w(8 * 24), bias(24);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.01f * static_cast<float>(i % 17) - 0.08f;
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.02f * static_cast<float>(i) - 0.2f;
  b.initializer_f32("w", {8, 24}, w);
  b.initializer_f32("b", {24}, bias);
  testing::add_attr(b.node("Attention", {"x", "w", "b", "", "", "bias5"}, {"y"}, "attn", "com.microsoft"),
                    "num_heads", int64_t{2});
  testing::add_attr(b.node("Attention", {"x", "w", "b", "mask"}, {"z"}, "masked", "com.microsoft"), "num_heads",
                    int64_t{2});
  auto g = import_onnx(b.write(dir, "in.onnx"));
  ASSERT_TRUE(g) << g.error().str();
  ASSERT_EQ(g->nodes().size(), 2u);
  EXPECT_EQ(g->nodes()[0].op, ir::Op::MsAttention);
  EXPECT_EQ(g->nodes()[0].inputs.size(), 4u);
  EXPECT_EQ(g->value(g->nodes()[0].inputs[3]).name, "bias5");
  EXPECT_EQ(g->value(*g->find_value("y")).type.str(), "tensor<2x6x8xf32>");
  EXPECT_EQ(g->nodes()[1].op, ir::Op::Opaque);
  ASSERT_TRUE(export_onnx(*g, dir / "out.onnx"));
  onnx::ModelProto m = testing::read_model_proto(dir / "out.onnx");
  const onnx::NodeProto& n = m.graph().node(0);
  EXPECT_EQ(n.domain(), "com.microsoft");
  EXPECT_EQ(n.op_type(), "Attention");
  ASSERT_EQ(n.input_size(), 6);
  EXPECT_EQ(n.input(3), "");
  EXPECT_EQ(n.input(5), "bias5");
  int imports = 0;
  for (const auto& o : m.opset_import()) imports += o.domain() == "com.microsoft";
  EXPECT_EQ(imports, 1);
  auto again = import_onnx(dir / "out.onnx");
  ASSERT_TRUE(again) << again.error().str();
  EXPECT_EQ(testing::graph_differences(*g, *again), std::vector<std::string>{});
}

// ONNX Runtime types an Attention's output [batch, S, H] itself, and fuses a
// residual Add of two values of that shape and the LayerNormalization after
// it into SkipLayerNormalization, slower on its CPU than the two (3.7x at
// [1, 64, 256]). The exporters' graph that the fused op replaces leaves the
// batch unknown to ONNX Runtime (its head join reshapes to [-1, S, H]), so
// export writes the Attention through Reshape [-1, 0, 0]: the same values
// (bit for bit, unfused), and no SkipLayerNormalization.
TEST_F(Export, AttentionOutputKeepsTheBatchUnknownToOrt) {
  ModelBuilder b(17);
  b.import_domain("com.microsoft", 1);
  b.input("x", TP::FLOAT, {std::string("batch"), int64_t{6}, int64_t{8}});
  b.output("y", TP::FLOAT, {std::string("batch"), int64_t{6}, int64_t{8}});
  std::vector<float> w(8 * 24), bias(24), gamma(8, 1.5f), beta(8, 0.25f);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.01f * static_cast<float>(i % 17) - 0.08f;
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.02f * static_cast<float>(i) - 0.2f;
  b.initializer_f32("w", {8, 24}, w);
  b.initializer_f32("b", {24}, bias);
  b.initializer_f32("gamma", {8}, gamma);
  b.initializer_f32("beta", {8}, beta);
  testing::add_attr(b.node("Attention", {"x", "w", "b"}, {"a"}, "attn", "com.microsoft"), "num_heads", int64_t{2});
  b.node("Add", {"a", "x"}, {"s"}, "residual");
  b.node("LayerNormalization", {"s", "gamma", "beta"}, {"y"}, "ln");
  auto g = import_onnx(b.write(dir, "in.onnx"));
  ASSERT_TRUE(g) << g.error().str();
  ASSERT_TRUE(export_onnx(*g, dir / "out.onnx"));
  onnx::ModelProto m = testing::read_model_proto(dir / "out.onnx");
  std::vector<std::string> ops;
  for (const auto& n : m.graph().node()) ops.push_back(n.op_type());
  EXPECT_EQ(ops, (std::vector<std::string>{"Attention", "Reshape", "Add", "LayerNormalization"}));
  EXPECT_EQ(m.graph().node(1).output(0), "a");
  std::vector<int64_t> shape;
  for (const auto& t : m.graph().initializer())
    if (t.name() == m.graph().node(1).input(1)) {
      shape.resize(t.raw_data().size() / sizeof(int64_t));
      std::memcpy(shape.data(), t.raw_data().data(), shape.size() * sizeof(int64_t));
    }
  EXPECT_EQ(shape, (std::vector<int64_t>{-1, 0, 0}));
  std::string why;
  auto source = testing::ort_optimized_ops(dir / "in.onnx", dir / "in.ort.onnx", &why);
  EXPECT_EQ(source, (std::vector<std::string>{"Attention", "SkipLayerNormalization"})) << why;
  auto written = testing::ort_optimized_ops(dir / "out.onnx", dir / "out.ort.onnx", &why);
  EXPECT_EQ(written, (std::vector<std::string>{"Attention", "Reshape", "Add", "LayerNormalization"})) << why;
  auto same = testing::ort_compare_exact(dir / "in.onnx", dir / "out.onnx", "basic");
  EXPECT_EQ(same.status, 0) << same.output;
}

// A Sub of a floating-point constant is written as the Add of its negation:
// bit for bit the same values, and ONNX Runtime's BiasGelu fusion (it
// matches a bias Add before the erf GELU) then fuses the bias. A Sub of a
// value that is not a constant, and an integer Sub, stay Subs; the result
// keeps its name, and the constant no other node reads is not written.
TEST_F(Export, SubOfAConstantIsWrittenAsTheAddOfItsNegation) {
  ModelBuilder b(17);
  b.input("x", TP::FLOAT, {std::string("batch"), int64_t{4}, int64_t{8}});
  b.input("n", TP::INT64, {int64_t{3}});
  b.output("y", TP::FLOAT, {std::string("batch"), int64_t{4}, int64_t{16}});
  b.output("z", TP::FLOAT, {std::string("batch"), int64_t{4}, int64_t{8}});
  b.output("k", TP::INT64, {int64_t{3}});
  std::vector<float> w(8 * 16), c(16);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.01f * static_cast<float>(i % 13) - 0.06f;
  for (size_t i = 0; i < c.size(); ++i) c[i] = 0.05f * static_cast<float>(i) - 0.4f;
  c[3] = 0.0f;
  c[5] = -0.0f;
  b.initializer_f32("w", {8, 16}, w);
  b.initializer_f32("c", {16}, c);
  b.initializer_f32("sqrt2", {}, {1.4142135f});
  b.initializer_f32("one", {}, {1.0f});
  b.initializer_f32("half", {}, {0.5f});
  onnx::TensorProto& two = *b.model().mutable_graph()->add_initializer();
  two.set_name("two");
  two.set_data_type(TP::INT64);
  two.add_dims(3);
  for (int64_t v : {2, 2, 2}) two.add_int64_data(v);
  b.node("MatMul", {"x", "w"}, {"m"}, "proj");
  b.node("Sub", {"m", "c"}, {"s"}, "bias");
  b.node("Div", {"s", "sqrt2"}, {"d"}, "scaled");
  b.node("Erf", {"d"}, {"e"}, "erf");
  b.node("Add", {"e", "one"}, {"p"}, "one_plus");
  b.node("Mul", {"s", "p"}, {"q"}, "product");
  b.node("Mul", {"q", "half"}, {"y"}, "gelu");
  b.node("Sub", {"x", "x"}, {"z"}, "variable");
  b.node("Sub", {"n", "two"}, {"k"}, "integer");
  auto g = import_onnx(b.write(dir, "in.onnx"));
  ASSERT_TRUE(g) << g.error().str();
  ASSERT_TRUE(export_onnx(*g, dir / "out.onnx"));
  onnx::ModelProto m = testing::read_model_proto(dir / "out.onnx");
  std::map<std::string, std::string> op_of;
  for (const auto& n : m.graph().node()) op_of[n.name()] = n.op_type();
  EXPECT_EQ(op_of["bias"], "Add");
  EXPECT_EQ(op_of["variable"], "Sub");
  EXPECT_EQ(op_of["integer"], "Sub");
  for (const auto& n : m.graph().node()) {
    if (n.name() == "bias") {
      EXPECT_EQ(n.output(0), "s");
    }
  }
  std::vector<std::string> initializers;  // c, read by the Sub alone, is left out
  for (const auto& t : m.graph().initializer()) initializers.push_back(t.name());
  EXPECT_EQ(initializers, (std::vector<std::string>{"w", "sqrt2", "one", "half", "two", "s/negated"}));
  std::string why;
  auto source = testing::ort_optimized_ops(dir / "in.onnx", dir / "in.ort.onnx", &why);
  EXPECT_EQ(source, (std::vector<std::string>{"MatMul", "Sub", "Gelu", "Sub", "Sub"})) << why;
  auto written = testing::ort_optimized_ops(dir / "out.onnx", dir / "out.ort.onnx", &why);
  EXPECT_EQ(written, (std::vector<std::string>{"MatMul", "BiasGelu", "Sub", "Sub"})) << why;
  for (const char* opt : {"disable", "all"}) {
    auto same = testing::ort_compare_exact(dir / "in.onnx", dir / "out.onnx", opt);
    EXPECT_EQ(same.status, 0) << opt << ": " << same.output;
  }
}

// A LayerNormalization in a graph whose model is below opset 17 (the
// optimizer's rule layer-norm-decomposed makes one) is written as the nine
// ops torch exports at opset 13; ONNX Runtime fuses them back into its
// LayerNormalization kernel (an 'extended' optimization), so at 'all' its
// output is bit for bit the opset-17 node's, and at 'basic', unfused, it is
// not. The output keeps its name.
TEST_F(Export, LayerNormBelowOpset17IsWrittenAsTheFormOrtFuses) {
  ModelBuilder b(17);
  b.input("x", TP::FLOAT, {std::string("batch"), int64_t{5}, int64_t{8}});
  b.output("y", TP::FLOAT, {std::string("batch"), int64_t{5}, int64_t{8}});
  std::vector<float> gamma(8), beta(8);
  for (size_t i = 0; i < 8; ++i) {
    gamma[i] = 0.75f + 0.125f * static_cast<float>(i);
    beta[i] = 0.0625f * static_cast<float>(i) - 0.25f;
  }
  b.initializer_f32("gamma", {8}, gamma);
  b.initializer_f32("beta", {8}, beta);
  testing::add_attr(b.node("LayerNormalization", {"x", "gamma", "beta"}, {"y"}, "ln"), "epsilon", 1e-5f);
  auto g = import_onnx(b.write(dir, "in.onnx"));
  ASSERT_TRUE(g) << g.error().str();
  g->info.opsets[""] = 13;
  ASSERT_TRUE(export_onnx(*g, dir / "out.onnx"));
  onnx::ModelProto m = testing::read_model_proto(dir / "out.onnx");
  ASSERT_EQ(m.opset_import_size(), 1);
  EXPECT_EQ(m.opset_import(0).version(), 13);
  std::vector<std::string> ops;
  for (const auto& n : m.graph().node()) ops.push_back(n.op_type());
  EXPECT_EQ(ops, (std::vector<std::string>{"ReduceMean", "Sub", "Pow", "ReduceMean", "Add", "Sqrt", "Div", "Mul",
                                           "Add"}));
  EXPECT_EQ(m.graph().node(8).output(0), "y");
  // the axes counted from the end, as torch writes them: ONNX Runtime fuses
  // them also where it does not know the input's rank
  for (int i : {0, 3}) {
    ASSERT_EQ(m.graph().node(i).attribute_size(), 1);
    EXPECT_EQ(m.graph().node(i).attribute(0).name(), "axes");
    EXPECT_EQ(std::vector<int64_t>(m.graph().node(i).attribute(0).ints().begin(),
                                   m.graph().node(i).attribute(0).ints().end()),
              std::vector<int64_t>{-1});
  }
  auto fused = testing::ort_compare_exact(dir / "in.onnx", dir / "out.onnx", "all");
  EXPECT_EQ(fused.status, 0) << fused.output;
  auto unfused = testing::ort_compare_exact(dir / "in.onnx", dir / "out.onnx", "basic");
  EXPECT_EQ(unfused.status, 1) << unfused.output;
}

// Its mean and inverse-deviation outputs have no older form: a limitation
// (exit 3 in the CLI), and nothing is written.
TEST_F(Export, LayerNormStatisticsBelowOpset17AreALimitation) {
  ModelBuilder b(17);
  b.input("x", TP::FLOAT, {int64_t{2}, int64_t{4}});
  b.output("y", TP::FLOAT, {int64_t{2}, int64_t{4}});
  b.output("mean", TP::FLOAT, {int64_t{2}, int64_t{1}});
  b.initializer_f32("gamma", {4}, {1, 2, 3, 4});
  b.node("LayerNormalization", {"x", "gamma"}, {"y", "mean"}, "ln");
  auto g = import_onnx(b.write(dir, "in.onnx"));
  ASSERT_TRUE(g) << g.error().str();
  g->info.opsets[""] = 13;
  auto ok = export_onnx(*g, dir / "out.onnx");
  ASSERT_FALSE(ok);
  EXPECT_TRUE(ok.error().limitation);
  EXPECT_EQ(ok.error().str(), (dir / "out.onnx").string() +
                                  ":node 'ln': LayerNormalization at opset 13: its mean and inverse deviation outputs "
                                  "are used");
  EXPECT_EQ(files_in_dir(), std::vector<std::string>{"in.onnx"});
}

// Gelu (opset 20, past what the reader takes) is written as torch's five
// ops; ONNX Runtime fuses them into its com.microsoft Gelu kernel at 'all'
// (bit for bit that node's output) and not at 'basic'.
TEST_F(Export, GeluIsWrittenAsTheFormOrtFuses) {
  ModelBuilder b(13);
  b.import_domain("com.microsoft", 1);
  b.input("x", TP::FLOAT, {std::string("batch"), int64_t{64}});
  b.output("y", TP::FLOAT, {std::string("batch"), int64_t{64}});
  b.node("Gelu", {"x"}, {"y"}, "gelu", "com.microsoft");
  b.write(dir, "contrib.onnx");
  auto g = ir::parse_graph(R"(graph @main(%x: tensor<"batch"x64xf32>) attributes {ir_version = 8, opsets = {"" = 13}} {
  %y = gelu(%x) : tensor<"batch"x64xf32>
  return %y
})");
  ASSERT_TRUE(g) << g.error().str();
  ASSERT_TRUE(export_onnx(*g, dir / "out.onnx"));
  onnx::ModelProto m = testing::read_model_proto(dir / "out.onnx");
  std::vector<std::string> ops;
  for (const auto& n : m.graph().node()) ops.push_back(n.op_type());
  EXPECT_EQ(ops, (std::vector<std::string>{"Div", "Erf", "Add", "Mul", "Mul"}));
  EXPECT_EQ(m.graph().node(4).output(0), "y");
  auto fused = testing::ort_compare_exact(dir / "contrib.onnx", dir / "out.onnx", "all");
  EXPECT_EQ(fused.status, 0) << fused.output;
  auto unfused = testing::ort_compare_exact(dir / "contrib.onnx", dir / "out.onnx", "basic");
  EXPECT_EQ(unfused.status, 1) << unfused.output;
}

TEST_F(Export, ForceExternalWritesDataBesideTheModel) {
  auto g = import_onnx(gemm_model("in.onnx"));
  ASSERT_TRUE(g) << g.error().str();
  ASSERT_TRUE(export_onnx(*g, dir / "ext.onnx", {.external_threshold = 0, .force_external = true}));
  EXPECT_EQ(files_in_dir(), (std::vector<std::string>{"ext.onnx", "ext.onnx.data", "in.onnx"}));
  onnx::ModelProto m = testing::read_model_proto(dir / "ext.onnx");
  for (const auto& t : m.graph().initializer()) {
    EXPECT_EQ(t.data_location(), TP::EXTERNAL) << t.name();
    EXPECT_FALSE(t.has_raw_data()) << t.name();
    EXPECT_EQ(t.external_data(0).value(), "ext.onnx.data");
  }
  EXPECT_EQ(std::filesystem::file_size(dir / "ext.onnx.data"), 128u + 16u);  // 16 bytes at offset 128

  // Import maps the data file; the bytes are the same.
  auto back = import_onnx(dir / "ext.onnx");
  ASSERT_TRUE(back) << back.error().str();
  EXPECT_EQ(testing::graph_differences(*g, *back), std::vector<std::string>{});
  // The threshold still applies: with 64, the 16-byte bias stays inline.
  ASSERT_TRUE(export_onnx(*back, dir / "ext64.onnx", {.external_threshold = 64, .force_external = true}));
  onnx::ModelProto m64 = testing::read_model_proto(dir / "ext64.onnx");
  EXPECT_EQ(m64.graph().initializer(0).data_location(), TP::EXTERNAL);
  EXPECT_TRUE(m64.graph().initializer(1).has_raw_data());
  EXPECT_EQ(std::filesystem::file_size(dir / "ext64.onnx.data"), 128u);
  // And a copy exported from the mapped graph is inline again.
  ASSERT_TRUE(export_onnx(*back, dir / "inline.onnx"));
  EXPECT_TRUE(testing::read_model_proto(dir / "inline.onnx").graph().initializer(0).has_raw_data());
  auto ort = testing::ort_compare_exact(dir / "in.onnx", dir / "ext.onnx");
  EXPECT_EQ(ort.status, 0) << ort.output;
}

TEST_F(Export, ThresholdKeepsSmallTensorsInline) {
  auto g = import_onnx(gemm_model("in.onnx"));
  ASSERT_TRUE(g) << g.error().str();
  // Not forced and far below 2 GB: everything inline, no data file.
  ASSERT_TRUE(export_onnx(*g, dir / "out.onnx", {.external_threshold = 64}));
  EXPECT_EQ(files_in_dir(), (std::vector<std::string>{"in.onnx", "out.onnx"}));
}

TEST_F(Export, OverwritesAnExistingFile) {
  std::ofstream(dir / "out.onnx") << "old contents";
  auto g = import_onnx(gemm_model("in.onnx"));
  ASSERT_TRUE(g) << g.error().str();
  ASSERT_TRUE(export_onnx(*g, dir / "out.onnx"));
  EXPECT_TRUE(import_onnx(dir / "out.onnx"));
  EXPECT_EQ(files_in_dir(), (std::vector<std::string>{"in.onnx", "out.onnx"}));
}

TEST_F(Export, CheckerFailureLeavesNothingWritten) {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", ir::TensorType{ir::DType::f32, ir::Shape{2}});
  ir::Node n;
  n.op = ir::Op::Opaque;
  n.op_type = "NoSuchOp";
  n.name = "mystery";
  n.inputs = {x};
  ir::NodeId id = g.add_node(n, {"y"}, {ir::TensorType{ir::DType::f32, ir::Shape{2}}});
  g.set_outputs({g.node(id).outputs[0]});
  for (bool external : {false, true}) {
    auto ok = export_onnx(g, dir / "bad.onnx", {.force_external = external});
    ASSERT_FALSE(ok);
    EXPECT_EQ(ok.error().str(),
              (dir / "bad.onnx").string() +
                  ":node 'mystery': ONNX checker: No Op registered for NoSuchOp with domain_version of 17");
    EXPECT_EQ(files_in_dir(), std::vector<std::string>{});
  }
}

TEST_F(Export, MissingFolderIsAnError) {
  ir::Graph g;
  auto ok = export_onnx(g, dir / "no" / "such" / "out.onnx");
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().str(),
            (dir / "no" / "such" / "out.onnx").string() + ": cannot write: the folder does not exist");
}

TEST_F(Export, ReadTensorProto) {
  TP t;
  t.set_name("input_0");
  t.set_data_type(TP::INT64);
  t.add_dims(2);
  t.add_dims(2);
  for (int64_t v : {1, -2, 3, -4}) t.add_int64_data(v);
  std::ofstream(dir / "input_0.pb", std::ios::binary) << t.SerializeAsString();
  auto tensor = read_tensor_proto(dir / "input_0.pb");
  ASSERT_TRUE(tensor) << tensor.error().str();
  EXPECT_EQ(tensor->dtype(), ir::DType::i64);
  EXPECT_EQ(tensor->dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(tensor->to_int_vector(), (std::vector<int64_t>{1, -2, 3, -4}));

  auto missing = read_tensor_proto(dir / "output_0.pb");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().str(),
            (dir / "output_0.pb").string() + ": cannot open the file: No such file or directory");
}

}  // namespace
}  // namespace refinery::frontends
