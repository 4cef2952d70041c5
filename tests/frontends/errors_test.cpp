// Bad input: each case gives one line naming the file and, where there is
// one, the node. The exact text is checked.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

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
  EXPECT_EQ(
      error_of(b.write(dir, "noweight.onnx")),
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

TEST_F(BadInput, EinsumDimMismatch) {
  ModelBuilder b(13);
  b.input("q", TP::FLOAT, {int64_t{2}, int64_t{16}}).input("k", TP::FLOAT, {int64_t{3}, int64_t{8}});
  b.output("s", TP::FLOAT, {int64_t{2}, int64_t{3}});
  testing::add_attr(b.node("Einsum", {"q", "k"}, {"s"}, "scores"), "equation", std::string("qd,kd->qk"));
  EXPECT_EQ(error_of(b.write(dir, "einsum.onnx")),
            "DIR/einsum.onnx:node 'scores' (einsum): einsum label 'd' is 16 in input 0 and 8 in input 1");
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
  b.initializer_external("w", {2}, "weights.bin");
  b.node("Add", {"x", "w"}, {"y"}, "add");
  EXPECT_EQ(error_of(b.write(dir, "ext.onnx")),
            "DIR/ext.onnx:initializer 'w': cannot open external data 'weights.bin': No such file or directory");
}

// --- external data must stay inside the model's folder (CVE-2022-25882) ---

// x [2] + w [2] -> y, with w's bytes at `location`.
std::filesystem::path external_model(const std::filesystem::path& dir, const std::string& location,
                                     std::vector<int64_t> dims = {2}, std::optional<uint64_t> offset = {},
                                     std::optional<uint64_t> length = {}) {
  ModelBuilder b;
  b.input("x", TP::FLOAT, {int64_t{2}}).output("y", TP::FLOAT, {int64_t{2}});
  b.initializer_external("w", dims, location, offset, length);
  b.node("Add", {"x", "w"}, {"y"}, "add");
  return b.write(dir, "ext.onnx");
}

void write_bytes(const std::filesystem::path& file, size_t n) {
  std::ofstream(file, std::ios::binary) << std::string(n, '\0');
}

TEST_F(BadInput, ExternalDataUpTheTreeIsRefused) {
  // Enough ".." to reach / from the test's folder, then /etc/passwd.
  std::string up;
  for (const auto& part : dir.relative_path()) up += part.empty() ? "" : "../";
  const std::string location = up + "etc/passwd";
  EXPECT_EQ(error_of(external_model(dir, location)), "DIR/ext.onnx:initializer 'w': external data location '" +
                                                         location +
                                                         "' contains '..'; it must stay inside the model's folder");
  // ".." that comes back inside is refused too: the rule is about the text.
  write_bytes(dir / "w.bin", 8);
  EXPECT_EQ(error_of(external_model(dir, "sub/../w.bin")),
            "DIR/ext.onnx:initializer 'w': external data location 'sub/../w.bin' contains '..'; it must stay "
            "inside the model's folder");
}

TEST_F(BadInput, AbsoluteExternalDataIsRefused) {
  EXPECT_EQ(error_of(external_model(dir, "/etc/passwd")),
            "DIR/ext.onnx:initializer 'w': external data location '/etc/passwd' is absolute; it must be relative "
            "to the model's folder");
}

TEST_F(BadInput, ExternalDataThroughALinkOutOfTheFolderIsRefused) {
  std::filesystem::create_symlink("/etc/passwd", dir / "passwd");
  EXPECT_EQ(error_of(external_model(dir, "passwd")),
            "DIR/ext.onnx:initializer 'w': external data location 'passwd' resolves to '/etc/passwd' (through a "
            "symbolic link), outside the model's folder");
  std::filesystem::create_directory_symlink("/etc", dir / "etc");
  EXPECT_EQ(error_of(external_model(dir, "etc/passwd")),
            "DIR/ext.onnx:initializer 'w': external data location 'etc/passwd' resolves to '/etc/passwd' (through "
            "a symbolic link), outside the model's folder");
}

TEST_F(BadInput, ExternalDataThroughALinkInsideTheFolderIsRead) {
  std::filesystem::create_directory(dir / "data");
  write_bytes(dir / "data" / "w.bin", 8);
  std::filesystem::create_symlink("data/w.bin", dir / "alias.bin");
  EXPECT_EQ(error_of(external_model(dir, "alias.bin")), "(no error)");
}

TEST_F(BadInput, ExternalDataThatIsNotAPlainFileIsRefused) {
  ASSERT_EQ(::mkfifo((dir / "pipe").c_str(), 0600), 0);  // opening it would block
  EXPECT_EQ(error_of(external_model(dir, "pipe")),
            "DIR/ext.onnx:initializer 'w': external data 'pipe' is a FIFO, not a regular file");
  std::filesystem::create_directory(dir / "folder");
  EXPECT_EQ(error_of(external_model(dir, "folder")),
            "DIR/ext.onnx:initializer 'w': external data 'folder' is a directory, not a regular file");
  std::filesystem::create_symlink("/dev/zero", dir / "zero");
  EXPECT_EQ(error_of(external_model(dir, "zero")),
            "DIR/ext.onnx:initializer 'w': external data location 'zero' resolves to '/dev/zero' (through a "
            "symbolic link), outside the model's folder");
}

TEST_F(BadInput, ExternalDataPastTheEndOfItsFileIsRefused) {
  write_bytes(dir / "w.bin", 8);
  EXPECT_EQ(error_of(external_model(dir, "w.bin", {2}, 16)),
            "DIR/ext.onnx:initializer 'w': external data 'w.bin' has 8 bytes; offset 16 and length 8 run past its "
            "end");
  EXPECT_EQ(error_of(external_model(dir, "w.bin", {2}, 4)),
            "DIR/ext.onnx:initializer 'w': external data 'w.bin' has 8 bytes; offset 4 and length 8 run past its "
            "end");
  EXPECT_EQ(error_of(external_model(dir, "w.bin", {2}, 0, 4)),
            "DIR/ext.onnx:initializer 'w': external data length 4 disagrees with the tensor's 8 bytes");
  EXPECT_EQ(error_of(external_model(dir, "w.bin", {2}, 0, 8)), "(no error)");
}

TEST_F(BadInput, AnExternalTensorClaimingTenGigabytesIsRefusedBeforeReading) {
  write_bytes(dir / "w.bin", 8);
  const int64_t n = int64_t{10} << 28;  // 10 GiB of f32
  EXPECT_EQ(error_of(external_model(dir, "w.bin", {n})),
            "DIR/ext.onnx:initializer 'w': external data 'w.bin' has 8 bytes; offset 0 and length 10737418240 run "
            "past its end");
}

TEST_F(BadInput, ATensorPastTwoToTheFortyElementsIsRefused) {
  auto error_for = [&](std::vector<int64_t> dims) {
    ModelBuilder b = small_model();
    auto& w = b.initializer_f32("w", dims, {});
    w.set_raw_data(std::string(8, '\0'));
    b.node("Relu", {"x"}, {"y"}, "relu");
    return error_of(b.write(dir, "huge.onnx"));
  };
  EXPECT_EQ(error_for({int64_t{1} << 20, int64_t{1} << 20, 2}),
            "DIR/huge.onnx:initializer 'w': has dims [1048576, 1048576, 2]: more than 2^40 elements, Refinery's "
            "limit");
  // ONNX's checker multiplies these to 0 and says "0-element but contains data".
  EXPECT_EQ(error_for({int64_t{1} << 62, 8}),
            "DIR/huge.onnx:initializer 'w': has dims [4611686018427387904, 8], whose element count overflows int64");
  EXPECT_EQ(error_for({int64_t{1} << 40}),
            "DIR/huge.onnx:initializer 'w': raw_data holds 8 bytes, the tensor needs "
            "4398046511104");  // 2^40 itself is allowed: the bytes are wrong
}

TEST_F(BadInput, AConstantAttributeWithBadExternalDataIsAnErrorNotAnOpaqueNode) {
  ModelBuilder b = small_model();
  auto& c = b.node("Constant", {}, {"w"}, "const_w");
  auto& a = testing::add_attr(c, "value", int64_t{0});
  a.set_type(onnx::AttributeProto::TENSOR);
  a.clear_i();
  auto* t = a.mutable_t();
  t->set_data_type(TP::FLOAT);
  t->add_dims(2);
  t->set_data_location(TP::EXTERNAL);
  auto* e = t->add_external_data();
  e->set_key("location");
  e->set_value("/etc/passwd");
  b.node("Add", {"x", "w"}, {"y"}, "add");
  EXPECT_EQ(error_of(b.write(dir, "const.onnx")),
            "DIR/const.onnx:node 'const_w' attribute 'value': external data location '/etc/passwd' is absolute; it "
            "must be relative to the model's folder");
}

TEST_F(BadInput, ExternalDataOfASubgraphIsCheckedToo) {
  ModelBuilder b = testing::nested_ifs(2);
  onnx::GraphProto* inner = b.model().mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
  auto* t = inner->add_initializer();
  t->set_name("w");
  t->set_data_type(TP::FLOAT);
  t->add_dims(1);
  t->set_data_location(TP::EXTERNAL);
  auto* e = t->add_external_data();
  e->set_key("location");
  e->set_value("../../etc/passwd");
  EXPECT_EQ(error_of(b.write(dir, "sub.onnx")),
            "DIR/sub.onnx:initializer 'w' (in node 'if0'): external data location '../../etc/passwd' contains '..'; "
            "it must stay inside the model's folder");
}

// --- what ONNX calls invalid ---

TEST_F(BadInput, NegativeDimsInADeclaredShape) {
  ModelBuilder b;
  b.input("x", TP::FLOAT, {int64_t{2}, int64_t{-3}}).output("y", TP::FLOAT, {int64_t{2}, int64_t{3}});
  b.node("Relu", {"x"}, {"y"}, "relu");
  EXPECT_EQ(error_of(b.write(dir, "neg_input.onnx")),
            "DIR/neg_input.onnx: graph input 'x' has a negative dimension -3 (axis 1)");
  ModelBuilder c = small_model();
  c.node("Relu", {"x"}, {"r"}, "relu");
  c.node("Neg", {"r"}, {"y"}, "neg");
  auto* vi = c.model().mutable_graph()->add_value_info();
  vi->set_name("r");
  testing::set_dims(vi->mutable_type(), TP::FLOAT, {int64_t{-1}});
  EXPECT_EQ(error_of(c.write(dir, "neg_value_info.onnx")),
            "DIR/neg_value_info.onnx: value_info 'r' has a negative dimension -1 (axis 0)");
}

TEST_F(BadInput, IfBranchesWithDifferentOutputs) {
  ModelBuilder b = testing::nested_ifs(1);
  auto* node = b.model().mutable_graph()->mutable_node(0);
  onnx::GraphProto* else_g = node->mutable_attribute(1)->mutable_g();
  *else_g->add_output() = else_g->output(0);  // two outputs, then_branch one
  EXPECT_EQ(error_of(b.write(dir, "if_count.onnx")),
            "DIR/if_count.onnx:node 'if0': If branches disagree: then_branch has 1 outputs, else_branch 2, the node 1");
  ModelBuilder c = testing::nested_ifs(1);
  node = c.model().mutable_graph()->mutable_node(0);
  node->mutable_attribute(1)->mutable_g()->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      TP::INT64);
  EXPECT_EQ(error_of(c.write(dir, "if_type.onnx")),
            "DIR/if_type.onnx:node 'if0': If branches disagree: output 0 is FLOAT in then_branch and INT64 in "
            "else_branch");
}

TEST_F(BadInput, NodesOutOfOrderAreSortedAndSaidSo) {
  ModelBuilder b = small_model();
  b.node("Neg", {"r"}, {"y"}, "neg");
  b.node("Relu", {"x"}, {"r"}, "relu");
  std::vector<Diag> notes;
  auto g = import_onnx(b.write(dir, "unsorted.onnx"), {.notes = &notes});
  ASSERT_TRUE(g) << g.error().str();
  EXPECT_EQ(g->node_label(ir::NodeId{0}), "relu");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].str(), (dir / "unsorted.onnx").string() +
                                ":node 'neg': nodes are not in topological order (this node reads 'r' before node "
                                "'relu' defines it); sorted");
}

// --- limits: deep nesting and long chains neither overflow the stack nor pass silently ---

TEST_F(BadInput, SubgraphsNestedPastTheLimitAreRefused) {
  // 64 levels import, export and import again (protobuf's own default
  // depth, 100 messages, stops at about 32).
  auto deep = import_onnx(testing::nested_ifs(64).write(dir, "deep64.onnx"));
  ASSERT_TRUE(deep) << deep.error().str();
  auto exported = export_onnx(*deep, dir / "deep64_out.onnx");
  ASSERT_TRUE(exported) << exported.error().str();
  EXPECT_EQ(error_of(dir / "deep64_out.onnx"), "(no error)");
  // 70 levels parse; 10,000 levels are past what protobuf parses, and are
  // told apart from a corrupt file.
  EXPECT_EQ(error_of(testing::nested_ifs(70).write(dir, "deep70.onnx")),
            "DIR/deep70.onnx:node 'if0': subgraphs (If / Loop / Scan bodies) nest more than 64 deep, Refinery's limit");
  EXPECT_EQ(error_of(testing::nested_ifs(10000).write(dir, "deep10000.onnx")),
            "DIR/deep10000.onnx: subgraphs (If / Loop / Scan bodies) nest more than 64 deep, Refinery's limit");
}

TEST_F(BadInput, AHundredThousandNodeChainImportsAndExports) {
  auto g = import_onnx(testing::relu_chain(100000).write(dir, "chain.onnx"));
  ASSERT_TRUE(g) << g.error().str();
  EXPECT_EQ(g->num_nodes(), 100000u);
  ASSERT_TRUE(export_onnx(*g, dir / "chain_out.onnx"));
  auto back = import_onnx(dir / "chain_out.onnx");
  ASSERT_TRUE(back) << back.error().str();
  EXPECT_EQ(back->num_nodes(), 100000u);
}

}  // namespace
}  // namespace refinery::frontends
