// Import: initializers by reference, every typed field, Constant nodes,
// symbolic dims, node order, opaque ops and the opaque fallback.
#include <gtest/gtest.h>

#include <fstream>

#include <cstring>

#include "frontends/onnx.h"
#include "ir/text.h"
#include "tests/frontends/model_builder.h"

namespace refinery::frontends {
namespace {

using testing::ModelBuilder;
using TP = onnx::TensorProto;

class Import : public ::testing::Test {
 protected:
  void SetUp() override { dir = testing::fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name()); }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::filesystem::path dir;
};

ir::Graph import_ok(const std::filesystem::path& file) {
  auto g = import_onnx(file);
  EXPECT_TRUE(g.has_value()) << (g ? "" : g.error().str());
  return g ? std::move(*g) : ir::Graph{};
}

TEST_F(Import, InitializerIsOneConstantUsedByReference) {
  ModelBuilder b;
  b.input("x", TP::FLOAT, {int64_t{2}, int64_t{3}}).output("y", TP::FLOAT, {int64_t{2}, int64_t{3}});
  b.initializer_f32("W", {2, 3}, {1, 2, 3, 4, 5, 6});
  b.node("Add", {"x", "W"}, {"a"}, "add");
  b.node("Mul", {"a", "W"}, {"y"}, "mul");
  ir::Graph g = import_ok(b.write(dir, "m.onnx"));
  ASSERT_EQ(g.constants().size(), 1u);
  ir::ValueId w = g.constants()[0];
  EXPECT_EQ(g.nodes()[0].inputs[1], w);
  EXPECT_EQ(g.nodes()[1].inputs[1], w);
  EXPECT_EQ(g.value(w).constant->to_int_vector(), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(g.value(g.outputs()[0]).type.str(), "tensor<2x3xf32>");
}

// One initializer per typed field and the types stored in it; each read
// through an Identity so it is used.
TEST_F(Import, TypedFieldsOfEveryElementType) {
  ModelBuilder b;
  struct Case {
    const char* name;
    int type;
    std::vector<int64_t> values;
    std::vector<uint8_t> bytes;  // expected little-endian contents
  };
  const std::vector<Case> cases = {
      {"i32", TP::INT32, {-2, 7}, {0xfe, 0xff, 0xff, 0xff, 7, 0, 0, 0}},
      {"i16", TP::INT16, {-2, 7}, {0xfe, 0xff, 7, 0}},
      {"i8", TP::INT8, {-2, 7}, {0xfe, 7}},
      {"u8", TP::UINT8, {254, 7}, {254, 7}},
      {"u16", TP::UINT16, {65534, 7}, {0xfe, 0xff, 7, 0}},
      {"f16", TP::FLOAT16, {0x3c00, 0xc000}, {0x00, 0x3c, 0x00, 0xc0}},  // 1.0, -2.0
      {"bf16", TP::BFLOAT16, {0x3f80, 0x4000}, {0x80, 0x3f, 0x00, 0x40}},
      {"bool", TP::BOOL, {1, 0}, {1, 0}},
      {"i64", TP::INT64, {-1, 2}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 0, 0, 0}},
      {"u32", TP::UINT32, {4294967295, 1}, {0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0}},
      {"u64", TP::UINT64, {5, 1}, {5, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}},
  };
  for (const auto& c : cases) {
    auto* t = b.model().mutable_graph()->add_initializer();
    t->set_name(std::string("c_") + c.name);
    t->set_data_type(c.type);
    t->add_dims(2);
    for (int64_t v : c.values) {
      if (c.type == TP::INT64)
        t->add_int64_data(v);
      else if (c.type == TP::UINT32 || c.type == TP::UINT64)
        t->add_uint64_data(static_cast<uint64_t>(v));
      else
        t->add_int32_data(static_cast<int32_t>(v));
    }
    b.node("Identity", {t->name()}, {std::string("o_") + c.name});
    b.output(std::string("o_") + c.name, c.type, {int64_t{2}});
  }
  auto* d = b.model().mutable_graph()->add_initializer();
  d->set_name("c_f64");
  d->set_data_type(TP::DOUBLE);
  d->add_dims(1);
  d->add_double_data(0.5);
  b.node("Identity", {"c_f64"}, {"o_f64"});
  b.output("o_f64", TP::DOUBLE, {int64_t{1}});

  ir::Graph g = import_ok(b.write(dir, "typed.onnx"));
  ASSERT_EQ(g.constants().size(), cases.size() + 1);
  for (size_t i = 0; i < cases.size(); ++i) {
    const ir::Tensor& t = *g.value(g.constants()[i]).constant;
    std::vector<uint8_t> bytes(t.bytes().size());
    std::memcpy(bytes.data(), t.data(), bytes.size());
    EXPECT_EQ(bytes, cases[i].bytes) << cases[i].name;
    EXPECT_EQ(ir::dtype_to_onnx(t.dtype()), cases[i].type) << cases[i].name;
  }
  EXPECT_EQ(g.value(g.constants().back()).constant->as_double(0), 0.5);
}

TEST_F(Import, ConstantNodeStaysAConstantNode) {
  ModelBuilder b;
  b.output("y", TP::INT64, {int64_t{3}});
  auto& c = b.node("Constant", {}, {"y"}, "shape_const");
  auto* a = c.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(TP::INT64);
  a->mutable_t()->add_dims(3);
  for (int64_t v : {4, 5, 6}) a->mutable_t()->add_int64_data(v);
  ir::Graph g = import_ok(b.write(dir, "const.onnx"));
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.nodes()[0].op, ir::Op::Constant);
  EXPECT_EQ(g.nodes()[0].attrs.get_tensor("value")->to_int_vector(), (std::vector<int64_t>{4, 5, 6}));
  EXPECT_TRUE(g.constants().empty());
}

TEST_F(Import, SymbolicBatchStaysSymbolicThroughExport) {
  ModelBuilder b;
  b.input("x", TP::FLOAT, {std::string("N"), int64_t{4}}).output("y", TP::FLOAT, {std::string("N"), int64_t{4}});
  b.node("Relu", {"x"}, {"r"});
  b.node("Neg", {"r"}, {"y"});
  ir::Graph g = import_ok(b.write(dir, "sym.onnx"));
  EXPECT_EQ(g.value(g.outputs()[0]).type.shape[0], ir::Dim::symbol("N"));
  EXPECT_EQ(g.value(*g.find_value("r")).type.shape[0], ir::Dim::symbol("N"));
  ASSERT_TRUE(export_onnx(g, dir / "out.onnx"));
  onnx::ModelProto m = testing::read_model_proto(dir / "out.onnx");
  EXPECT_EQ(m.graph().input(0).type().tensor_type().shape().dim(0).dim_param(), "N");
  EXPECT_EQ(m.graph().output(0).type().tensor_type().shape().dim(0).dim_param(), "N");
  EXPECT_EQ(m.graph().output(0).type().tensor_type().shape().dim(1).dim_value(), 4);
}

// torch names an output dim it did not size ("MatMullogits_dim_1"); where
// inference proves the size, the size wins (a named dim prices as 1).
TEST_F(Import, DeclaredOutputNameGivesWayToAnInferredSize) {
  ModelBuilder b;
  b.input("x", TP::FLOAT, {std::string("N"), int64_t{64}})
      .output("y", TP::FLOAT, {std::string("N"), std::string("Reluy_dim_1")});
  b.node("Relu", {"x"}, {"y"});
  ir::Graph g = import_ok(b.write(dir, "named.onnx"));
  EXPECT_EQ(g.value(g.outputs()[0]).type.str(), "tensor<\"N\"x64xf32>");
}

TEST_F(Import, WithoutShapeInferenceTypesAreTheDeclaredOnes) {
  ModelBuilder b;
  b.input("x", TP::FLOAT, {int64_t{2}}).output("y", TP::FLOAT, {int64_t{2}});
  b.node("Relu", {"x"}, {"r"});
  b.node("Neg", {"r"}, {"y"});
  auto g = import_onnx(b.write(dir, "m.onnx"), {.infer_shapes = false});
  ASSERT_TRUE(g) << g.error().str();
  EXPECT_FALSE(g->value(*g->find_value("r")).type.shape.ranked());  // no value_info for r
  EXPECT_EQ(g->value(g->outputs()[0]).type.str(), "tensor<2xf32>");
}

TEST_F(Import, UnknownDimsStayUnknown) {
  ModelBuilder b;
  b.input("x", TP::FLOAT, {std::string(), int64_t{4}}).output("y", TP::FLOAT, {std::string(), int64_t{4}});
  b.node("Relu", {"x"}, {"y"});
  ir::Graph g = import_ok(b.write(dir, "unk.onnx"));
  EXPECT_TRUE(g.value(g.inputs()[0]).type.shape[0].is_unknown());
  EXPECT_EQ(g.value(g.outputs()[0]).type.str(), "tensor<?x4xf32>");
}

TEST_F(Import, NodesAreSortedTopologically) {
  ModelBuilder b;
  b.input("x", TP::FLOAT, {int64_t{2}}).output("y", TP::FLOAT, {int64_t{2}});
  b.node("Neg", {"b"}, {"y"}, "third");
  b.node("Relu", {"x"}, {"a"}, "first");
  b.node("Abs", {"a"}, {"b"}, "second");
  ir::Graph g = import_ok(b.write(dir, "unsorted.onnx"));
  ASSERT_EQ(g.num_nodes(), 3u);
  EXPECT_EQ(g.nodes()[0].name, "first");
  EXPECT_EQ(g.nodes()[1].name, "second");
  EXPECT_EQ(g.nodes()[2].name, "third");
}

// A custom-domain op keeps its domain, type and every attribute byte for
// byte, including kinds Refinery does not model (a subgraph).
TEST_F(Import, CustomDomainOpRoundTripsExactly) {
  ModelBuilder b;
  b.import_domain("com.example", 1);
  b.input("x", TP::FLOAT, {int64_t{2}, int64_t{3}}).output("y", TP::FLOAT, {int64_t{2}, int64_t{3}});
  auto& n = b.node("Fancy", {"x"}, {"f"}, "fancy", "com.example");
  testing::add_attr(n, "alpha", 0.25f);
  testing::add_attr(n, "axes", std::vector<int64_t>{0, 1});
  testing::add_attr(n, "mode", std::string("wide"));
  auto* ga = n.add_attribute();
  ga->set_name("body");
  ga->set_type(onnx::AttributeProto::GRAPH);
  ga->set_doc_string("kept as it is");
  auto* body = ga->mutable_g();
  body->set_name("body");
  auto* bi = body->add_input();
  bi->set_name("t");
  testing::set_dims(bi->mutable_type(), TP::FLOAT, {int64_t{1}});
  auto* bo = body->add_output();
  bo->set_name("u");
  testing::set_dims(bo->mutable_type(), TP::FLOAT, {int64_t{1}});
  auto* bn = body->add_node();
  bn->set_op_type("Neg");
  bn->add_input("t");
  bn->add_output("u");
  auto* fv = b.model().mutable_graph()->add_value_info();
  fv->set_name("f");
  testing::set_dims(fv->mutable_type(), TP::FLOAT, {int64_t{2}, int64_t{3}});
  b.node("Relu", {"f"}, {"y"}, "relu");
  const auto path = b.write(dir, "custom.onnx");

  ir::Graph g = import_ok(path);
  ASSERT_EQ(g.num_nodes(), 2u);
  const ir::Node& fancy = g.nodes()[0];
  EXPECT_EQ(fancy.op, ir::Op::Opaque);
  EXPECT_EQ(fancy.domain, "com.example");
  EXPECT_EQ(fancy.op_type, "Fancy");
  EXPECT_EQ(fancy.attrs.size(), 4u);
  EXPECT_EQ(g.value(fancy.outputs[0]).type.str(), "tensor<2x3xf32>");  // from value_info
  EXPECT_EQ(g.nodes()[1].op, ir::Op::Relu);

  ASSERT_TRUE(export_onnx(g, dir / "out.onnx"));
  onnx::ModelProto orig = testing::read_model_proto(path), back = testing::read_model_proto(dir / "out.onnx");
  const auto& on = orig.graph().node(0);
  const auto& bn2 = back.graph().node(0);
  EXPECT_EQ(bn2.domain(), "com.example");
  EXPECT_EQ(bn2.op_type(), "Fancy");
  ASSERT_EQ(bn2.attribute_size(), on.attribute_size());
  for (const auto& a : on.attribute()) {
    auto it = std::find_if(bn2.attribute().begin(), bn2.attribute().end(),
                           [&](const onnx::AttributeProto& x) { return x.name() == a.name(); });
    ASSERT_NE(it, bn2.attribute().end()) << a.name();
    EXPECT_EQ(it->SerializeAsString(), a.SerializeAsString()) << a.name();
  }
  bool imports_custom = false;
  for (const auto& o : back.opset_import()) imports_custom |= o.domain() == "com.example" && o.version() == 1;
  EXPECT_TRUE(imports_custom);
  ir::Graph again = import_ok(dir / "out.onnx");
  EXPECT_EQ(testing::graph_differences(g, again), std::vector<std::string>{});
}

// If is not in the op table: opaque, typed by ONNX's own inference, and its
// branches read a value of the enclosing graph, which stays ahead of it.
TEST_F(Import, DefaultDomainOpaqueOpGetsOnnxTypesAndRunsInOrt) {
  ModelBuilder b;
  b.input("x", TP::FLOAT, {int64_t{2}}).input("c", TP::BOOL, {}).output("y", TP::FLOAT, {int64_t{2}});
  auto branch = [](const char* name, const char* op) {
    onnx::GraphProto g;
    g.set_name(name);
    auto* o = g.add_output();
    o->set_name(std::string(name) + "_out");
    testing::set_dims(o->mutable_type(), TP::FLOAT, {int64_t{2}});
    auto* n = g.add_node();
    n->set_op_type(op);
    n->add_input("r");  // from the enclosing graph
    n->add_output(o->name());
    return g;
  };
  auto& iff = b.node("If", {"c"}, {"i"}, "if");
  for (auto [attr, name, op] : {std::tuple{"then_branch", "then", "Neg"}, std::tuple{"else_branch", "else", "Abs"}}) {
    auto* a = iff.add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = branch(name, op);
  }
  b.node("Relu", {"x"}, {"r"}, "relu");  // after its reader: the importer must sort
  b.node("Exp", {"i"}, {"y"}, "exp");
  const auto path = b.write(dir, "if.onnx");

  ir::Graph g = import_ok(path);
  ASSERT_EQ(g.num_nodes(), 3u);
  EXPECT_EQ(g.nodes()[0].name, "relu");
  EXPECT_EQ(g.nodes()[1].op, ir::Op::Opaque);
  EXPECT_EQ(g.value(g.nodes()[1].outputs[0]).type.str(), "tensor<2xf32>");
  ASSERT_TRUE(export_onnx(g, dir / "out.onnx"));
  // ORT needs the sorted original too.
  ASSERT_TRUE(export_onnx(import_ok(path), dir / "sorted.onnx"));
  auto ort = testing::ort_compare_exact(dir / "sorted.onnx", dir / "out.onnx");
  EXPECT_EQ(ort.status, 0) << ort.output;
}

// A model-local function: the node that calls it is opaque, and export
// writes the function back, so ONNX Runtime still runs the model.
TEST_F(Import, ModelLocalFunctionsAreWrittenBack) {
  ModelBuilder b;
  b.import_domain("com.example", 1);
  b.input("x", TP::FLOAT, {int64_t{3}}).output("y", TP::FLOAT, {int64_t{3}});
  b.node("Relu", {"x"}, {"r"}, "relu");
  b.node("Twice", {"r"}, {"y"}, "twice", "com.example");
  onnx::FunctionProto* f = b.model().add_functions();
  f->set_name("Twice");
  f->set_domain("com.example");
  f->add_input("a");
  f->add_output("b");
  auto* add = f->add_node();
  add->set_op_type("Add");
  add->add_input("a");
  add->add_input("a");
  add->add_output("b");
  auto* o = f->add_opset_import();
  o->set_domain("");
  o->set_version(17);
  const auto path = b.write(dir, "function.onnx");

  ir::Graph g = import_ok(path);
  ASSERT_EQ(g.num_nodes(), 2u);
  EXPECT_EQ(g.nodes()[1].op, ir::Op::Opaque);
  ASSERT_EQ(g.info.onnx_functions.size(), 1u);
  // The .ir text keeps them too (as hex), so a round trip through it loses nothing.
  std::string text = ir::print_graph(g);
  EXPECT_NE(text.find("onnx_functions = [\""), std::string::npos) << text;
  auto reparsed = ir::parse_graph(text);
  ASSERT_TRUE(reparsed.has_value()) << reparsed.error().str();
  EXPECT_EQ(ir::graph_difference(g, *reparsed), "");
  EXPECT_EQ(reparsed->info.onnx_functions, g.info.onnx_functions);
  ir::Graph dropped = g;
  dropped.info.onnx_functions.clear();
  EXPECT_NE(ir::graph_difference(g, dropped), "");
  ASSERT_TRUE(export_onnx(*reparsed, dir / "function_out.onnx"));
  onnx::ModelProto back;
  std::ifstream in(dir / "function_out.onnx", std::ios::binary);
  ASSERT_TRUE(back.ParseFromIstream(&in));
  ASSERT_EQ(back.functions_size(), 1);
  EXPECT_EQ(back.functions(0).name(), "Twice");
  EXPECT_EQ(back.functions(0).node(0).op_type(), "Add");
  auto ort = testing::ort_compare_exact(path, dir / "function_out.onnx");
  EXPECT_EQ(ort.status, 0) << ort.output;
}

// Constant's sparse_value is a kind Refinery does not model: the known op
// falls back to an opaque node, which round-trips and still runs.
TEST_F(Import, ConstantWithSparseValueFallsBackToOpaque) {
  ModelBuilder b;
  b.input("x", TP::FLOAT, {int64_t{4}}).output("y", TP::FLOAT, {int64_t{4}});
  auto& c = b.node("Constant", {}, {"s"}, "sparse_const");
  auto* a = c.add_attribute();
  a->set_name("sparse_value");
  a->set_type(onnx::AttributeProto::SPARSE_TENSOR);
  auto* sp = a->mutable_sparse_tensor();
  sp->add_dims(4);
  sp->mutable_values()->set_name("s_values");
  sp->mutable_values()->set_data_type(TP::FLOAT);
  sp->mutable_values()->add_dims(2);
  sp->mutable_values()->add_float_data(1.5f);
  sp->mutable_values()->add_float_data(-2.0f);
  sp->mutable_indices()->set_name("s_indices");
  sp->mutable_indices()->set_data_type(TP::INT64);
  sp->mutable_indices()->add_dims(2);
  sp->mutable_indices()->add_int64_data(1);
  sp->mutable_indices()->add_int64_data(3);
  b.node("Add", {"x", "s"}, {"y"}, "add");
  const auto path = b.write(dir, "sparse.onnx");
  ir::Graph g = import_ok(path);
  ASSERT_EQ(g.num_nodes(), 2u);
  EXPECT_EQ(g.nodes()[0].op, ir::Op::Opaque);
  EXPECT_EQ(g.nodes()[0].op_type, "Constant");
  EXPECT_EQ(g.value(g.nodes()[0].outputs[0]).type.str(), "tensor<4xf32>");  // from ONNX's inference
  EXPECT_EQ(g.nodes()[1].op, ir::Op::Add);
  ASSERT_TRUE(export_onnx(g, dir / "out.onnx"));
  onnx::ModelProto back = testing::read_model_proto(dir / "out.onnx");
  EXPECT_EQ(back.graph().node(0).attribute(0).SerializeAsString(),
            testing::read_model_proto(path).graph().node(0).attribute(0).SerializeAsString());
  auto ort = testing::ort_compare_exact(path, dir / "out.onnx");
  EXPECT_EQ(ort.status, 0) << ort.output;
}

}  // namespace
}  // namespace refinery::frontends
