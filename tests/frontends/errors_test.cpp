// Bad input: each case gives one line naming the file and, where there is
// one, the node. The exact text is checked.
#include <gtest/gtest.h>

#include <fstream>

#include "frontends/onnx.h"
#include "tests/frontends/model_builder.h"

namespace refinery::frontends {
namespace {

using testing::ModelBuilder;
using TP = onnx::TensorProto;

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override { dir = testing::fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name()); }
  void TearDown() override { std::filesystem::remove_all(dir); }

  // The import error's text, with the folder replaced by "DIR".
  std::string error_of(const std::filesystem::path& file) {
    auto g = import_onnx(file);
    if (g) return "(no error)";
    std::string text = g.error().str();
    EXPECT_EQ(text.find('\n'), std::string::npos) << "not one line: " << text;
    const std::string d = dir.string();
    for (size_t at; (at = text.find(d)) != std::string::npos;) text.replace(at, d.size(), "DIR");
    return text;
  }

  // x [2] -> Relu -> y [2], to break in each test.
  static ModelBuilder small_model() {
    ModelBuilder b;
    b.input("x", TP::FLOAT, {int64_t{2}}).output("y", TP::FLOAT, {int64_t{2}});
    return b;
  }

  std::filesystem::path dir;
};

TEST_F(BadInput, FileDoesNotExist) {
  EXPECT_EQ(error_of(dir / "missing.onnx"), "DIR/missing.onnx: cannot open the file: No such file or directory");
}

TEST_F(BadInput, GarbageFile) {
  std::ofstream(dir / "garbage.onnx") << "this is not an onnx model\n";
  EXPECT_EQ(error_of(dir / "garbage.onnx"),
            "DIR/garbage.onnx: not an ONNX model (the protobuf does not parse: truncated or corrupt file?)");
}

TEST_F(BadInput, TruncatedFile) {
  ModelBuilder b = small_model();
  b.initializer_f32("w", {64}, std::vector<float>(64, 1.0f));
  b.node("Relu", {"x"}, {"y"}, "relu");
  std::string bytes = b.model().SerializeAsString();
  std::ofstream(dir / "truncated.onnx", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  EXPECT_EQ(error_of(dir / "truncated.onnx"),
            "DIR/truncated.onnx: not an ONNX model (the protobuf does not parse: truncated or corrupt file?)");
}

TEST_F(BadInput, MissingInitializer) {
  ModelBuilder b;
  b.input("x", TP::FLOAT, {int64_t{1}, int64_t{1}, int64_t{4}, int64_t{4}})
      .output("y", TP::FLOAT, {int64_t{1}, int64_t{1}, int64_t{4}, int64_t{4}});
  b.node("Conv", {"x", "conv.weight"}, {"y"}, "conv1");
  EXPECT_EQ(error_of(b.write(dir, "noweight.onnx")),
            "DIR/noweight.onnx:node 'conv1': input 'conv.weight' is not defined by any node, graph input or initializer");
}

TEST_F(BadInput, DanglingInput) {
  ModelBuilder b = small_model();
  b.node("Add", {"x", "nowhere"}, {"y"}, "add1");
  EXPECT_EQ(error_of(b.write(dir, "dangling.onnx")),
            "DIR/dangling.onnx:node 'add1': input 'nowhere' is not defined by any node, graph input or initializer");
}

TEST_F(BadInput, Cycle) {
  ModelBuilder b = small_model();
  b.node("Relu", {"x"}, {"r"}, "entry");
  b.node("Add", {"r", "c"}, {"a"}, "loop_add");  // a depends on c ...
  b.node("Neg", {"a"}, {"c"}, "loop_neg");       // ... and c on a
  b.node("Identity", {"a"}, {"y"}, "exit");
  EXPECT_EQ(error_of(b.write(dir, "cycle.onnx")),
            "DIR/cycle.onnx:node 'loop_add': nodes form a cycle through value 'c'");
}

TEST_F(BadInput, ValueDefinedTwice) {
  ModelBuilder b = small_model();
  b.node("Relu", {"x"}, {"y"}, "first");
  b.node("Neg", {"x"}, {"y"}, "second");
  EXPECT_EQ(error_of(b.write(dir, "twice.onnx")),
            "DIR/twice.onnx:node 'second': value 'y' is defined twice (also by node 'first')");
}

TEST_F(BadInput, WrongInputTypes) {
  ModelBuilder b;
  b.input("x", TP::FLOAT, {int64_t{2}}).input("i", TP::INT64, {int64_t{2}}).output("y", TP::FLOAT, {int64_t{2}});
  b.node("Add", {"x", "i"}, {"y"}, "mixed_add");
  EXPECT_EQ(error_of(b.write(dir, "types.onnx")),
            "DIR/types.onnx:node 'mixed_add' (add): input 1 is i64 but input 0 is f32");
}

TEST_F(BadInput, OpsetOutsideRange) {
  ModelBuilder b(12);
  b.input("x", TP::FLOAT, {int64_t{2}}).output("y", TP::FLOAT, {int64_t{2}});
  b.node("Relu", {"x"}, {"y"}, "relu");
  EXPECT_EQ(error_of(b.write(dir, "old.onnx")),
            "DIR/old.onnx: default-domain opset 12 is not supported (Refinery reads opsets 13 to 17)");
  ModelBuilder c(18);
  c.input("x", TP::FLOAT, {int64_t{2}}).output("y", TP::FLOAT, {int64_t{2}});
  c.node("Relu", {"x"}, {"y"}, "relu");
  EXPECT_EQ(error_of(c.write(dir, "new.onnx")),
            "DIR/new.onnx: default-domain opset 18 is not supported (Refinery reads opsets 13 to 17)");
}

TEST_F(BadInput, CheckerRejectsUnknownDefaultDomainOp) {
  ModelBuilder b = small_model();
  b.node("NoSuchOp", {"x"}, {"y"}, "mystery");
  EXPECT_EQ(error_of(b.write(dir, "unknown.onnx")),
            "DIR/unknown.onnx:node 'mystery': ONNX checker: No Op registered for NoSuchOp with domain_version of 17");
}

TEST_F(BadInput, InitializerWithWrongByteCount) {
  ModelBuilder b = small_model();
  auto& w = b.initializer_f32("w", {3}, {});
  w.set_raw_data(std::string(8, '\0'));  // 2 floats for 3 elements
  b.node("Add", {"x", "w"}, {"y"}, "add");
  std::string err = error_of(b.write(dir, "bytes.onnx"));
  // The checker does not look at raw_data sizes; the importer does.
  EXPECT_EQ(err, "DIR/bytes.onnx:initializer 'w': raw_data holds 8 bytes, the tensor needs 12");
}

TEST_F(BadInput, MissingExternalDataFile) {
  ModelBuilder b = small_model();
  auto* w = b.model().mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(TP::FLOAT);
  w->add_dims(2);
  w->set_data_location(TP::EXTERNAL);
  auto* loc = w->add_external_data();
  loc->set_key("location");
  loc->set_value("weights.bin");
  b.node("Add", {"x", "w"}, {"y"}, "add");
  EXPECT_EQ(error_of(b.write(dir, "ext.onnx")),
            "DIR/ext.onnx: ONNX checker: Data of TensorProto ( tensor name: w) should be stored in "
            "DIR/weights.bin, but it doesn't exist or is not accessible.");
}

}  // namespace
}  // namespace refinery::frontends
