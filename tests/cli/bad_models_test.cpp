// Hostile and invalid models through the command line: external data that
// points out of the model's folder, shapes ONNX calls invalid, claims past
// the limits, deep nesting, long chains, indices out of range. Each bad one
// gives exit 2 and one line naming the file and the place, and writes nothing.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>

#include "tests/cli/cli_runner.h"
#include "tests/frontends/model_builder.h"

namespace refinery::testing {
namespace {

namespace fs = std::filesystem;
using frontends::testing::ModelBuilder;
using TP = onnx::TensorProto;

class BadModel : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = frontends::testing::fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    out = dir / "out";
    fs::create_directory(out);
  }
  void TearDown() override { fs::remove_all(dir); }

  // `convert` to .onnx and .ir and `run`: exit 2, one line naming the model
  // and each of `names`, and nothing left in the output folder.
  void expect_refused(const fs::path& model, const std::vector<std::string>& names, int code = 2) {
    for (const std::string& cmd :
         {"convert " + model.string() + " " + (out / "m.onnx").string(),
          "convert " + model.string() + " " + (out / "m.ir").string(), "run " + model.string()}) {
      CliResult r = run_cli(cmd);
      EXPECT_EQ(r.code, code) << cmd << "\n" << r.err;
      EXPECT_EQ(r.err.rfind("refinery: error: " + model.string(), 0), 0u) << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      for (const auto& n : names) EXPECT_NE(r.err.find(n), std::string::npos) << n << " not in: " << r.err;
      EXPECT_TRUE(r.out.empty()) << r.out;
      EXPECT_TRUE(fs::is_empty(out)) << cmd << ": wrote " << fs::directory_iterator(out)->path();
    }
  }

  // x [2] + w [2] -> y, w's bytes at `location`.
  fs::path external_model(const std::string& location, std::vector<int64_t> dims = {2},
                          std::optional<uint64_t> offset = {}) {
    ModelBuilder b;
    b.input("x", TP::FLOAT, {int64_t{2}}).output("y", TP::FLOAT, {int64_t{2}});
    b.initializer_external("w", dims, location, offset);
    b.node("Add", {"x", "w"}, {"y"}, "add");
    return b.write(dir, "ext.onnx");
  }

  fs::path dir, out;
};

TEST_F(BadModel, ExternalDataUpTheTreeToEtcPasswd) {
  std::string up;
  for (const auto& part : dir.relative_path()) up += part.empty() ? "" : "../";
  expect_refused(external_model(up + "etc/passwd"), {"initializer 'w'", "contains '..'"});
  expect_refused(external_model("../../etc/passwd"), {"initializer 'w'", "contains '..'"});
}

TEST_F(BadModel, ExternalDataAtAnAbsolutePath) {
  expect_refused(external_model("/etc/passwd"), {"initializer 'w'", "'/etc/passwd' is absolute"});
}

TEST_F(BadModel, ExternalDataThroughALinkOutOfTheFolder) {
  fs::create_symlink("/etc/passwd", dir / "weights.bin");
  expect_refused(external_model("weights.bin"), {"initializer 'w'", "outside the model's folder"});
}

TEST_F(BadModel, ExternalDataInAFifoOrADirectory) {
  ASSERT_EQ(::mkfifo((dir / "pipe").c_str(), 0600), 0);
  expect_refused(external_model("pipe"), {"initializer 'w'", "is a FIFO"});
  fs::create_directory(dir / "folder");
  expect_refused(external_model("folder"), {"initializer 'w'", "is a directory"});
}

TEST_F(BadModel, ExternalDataPastTheEndAndTenGigabyteClaims) {
  std::ofstream(dir / "w.bin", std::ios::binary) << std::string(8, '\0');
  expect_refused(external_model("w.bin", {2}, 16), {"initializer 'w'", "run past its end"});
  expect_refused(external_model("w.bin", {int64_t{10} << 28}), {"initializer 'w'", "length 10737418240"});
}

TEST_F(BadModel, ExternalDataInsideTheFolderConverts) {
  std::ofstream(dir / "w.bin", std::ios::binary) << std::string(8, '\0');
  fs::path model = external_model("w.bin");
  CliResult r = run_cli("convert " + model.string() + " " + (out / "m.onnx").string());
  EXPECT_EQ(r.code, 0) << r.err;
  r = run_cli("run " + model.string());
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST_F(BadModel, DimsPastTwoToTheForty) {
  ModelBuilder b;
  b.input("x", TP::FLOAT, {int64_t{2}}).output("y", TP::FLOAT, {int64_t{2}});
  b.initializer_f32("w", {int64_t{1} << 62, 8}, {}).set_raw_data(std::string(8, '\0'));
  b.node("Relu", {"x"}, {"y"}, "relu");
  expect_refused(b.write(dir, "huge.onnx"), {"initializer 'w'", "overflows int64"});
  // Inline data past 2^40 elements cannot be in a file under 2 GB: bad input.
  b.model().mutable_graph()->mutable_initializer(0)->set_dims(0, int64_t{1} << 38);
  expect_refused(b.write(dir, "huge.onnx"), {"initializer 'w'", "more than 2^40 elements"});
  // A declared input of 2^41 elements is valid ONNX, past Refinery's limit: 3.
  ModelBuilder c;
  c.input("x", TP::FLOAT, {int64_t{1} << 21, int64_t{1} << 20}).output("y", TP::FLOAT, {int64_t{2}});
  c.node("Relu", {"x"}, {"y"}, "relu");
  expect_refused(c.write(dir, "huge_input.onnx"), {"graph input 'x'", "more than 2^40 elements"}, 3);
  // So is an external tensor of 2^41 elements (before its 8 TiB file is looked at).
  std::ofstream(dir / "w.bin", std::ios::binary) << std::string(8, '\0');
  expect_refused(external_model("w.bin", {int64_t{1} << 41}), {"initializer 'w'", "more than 2^40 elements"}, 3);
}

// A size that a constant input gives (Expand's shape, Tile's repeats, Pad's
// pads, ConstantOfShape's shape) is checked with the types, before anything
// allocates: past 2^40 elements a valid model is refused as Refinery's limit
// (exit 3); a size past int64 is a bad input (exit 2).
TEST_F(BadModel, SizesFromConstantsPastTheLimits) {
  struct Case {
    const char* op;
    int64_t x;                    // input x [x]
    std::vector<int64_t> values;  // the int64 constant input "c"
    const char* message;
    int code;
  };
  const Case cases[] = {
      {"Expand", 1, {int64_t{1} << 20, int64_t{1} << 20, int64_t{1} << 20}, "more than 2^40 elements", 3},
      {"ConstantOfShape", 1, {int64_t{1} << 21, int64_t{1} << 20}, "more than 2^40 elements", 3},
      {"Tile", 1024, {int64_t{1} << 31}, "more than 2^40 elements", 3},
      {"Pad", 2, {0, int64_t{1} << 41}, "more than 2^40 elements", 3},
      {"Tile", 4, {int64_t{1} << 62}, "overflows int64", 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    ModelBuilder b;
    b.input("x", TP::FLOAT, {c.x});
    std::vector<frontends::testing::DimSpec> out_dims;
    for (size_t i = 0;
         i < (std::string(c.op) == "ConstantOfShape" || std::string(c.op) == "Expand" ? c.values.size() : 1); ++i)
      out_dims.push_back("d" + std::to_string(i));
    b.output("y", TP::FLOAT, out_dims);
    auto* t = b.model().mutable_graph()->add_initializer();
    t->set_name("c");
    t->set_data_type(TP::INT64);
    t->add_dims(static_cast<int64_t>(c.values.size()));
    for (int64_t v : c.values) t->add_int64_data(v);
    if (std::string(c.op) == "ConstantOfShape")
      b.node(c.op, {"c"}, {"y"}, "big");
    else
      b.node(c.op, {"x", "c"}, {"y"}, "big");
    expect_refused(b.write(dir, std::string(c.op) + ".onnx"), {"node 'big'", c.message}, c.code);
  }
}

TEST_F(BadModel, NegativeDims) {
  ModelBuilder b;
  b.input("x", TP::FLOAT, {int64_t{-2}}).output("y", TP::FLOAT, {int64_t{2}});
  b.node("Relu", {"x"}, {"y"}, "relu");
  expect_refused(b.write(dir, "neg.onnx"), {"graph input 'x'", "negative dimension -2"});
}

TEST_F(BadModel, IfBranchesThatDisagree) {
  ModelBuilder b = frontends::testing::nested_ifs(1);
  onnx::GraphProto* else_g = b.model().mutable_graph()->mutable_node(0)->mutable_attribute(1)->mutable_g();
  *else_g->add_output() = else_g->output(0);
  expect_refused(b.write(dir, "if.onnx"), {"node 'if0'", "If branches disagree"});
}

TEST_F(BadModel, DeepNestingIsRefusedNotACrash) {
  // A valid model past a documented limit: exit 3, not 2.
  expect_refused(frontends::testing::nested_ifs(10000).write(dir, "deep.onnx"), {"nest more than 64 deep"}, 3);
  expect_refused(frontends::testing::nested_ifs(65).write(dir, "deep.onnx"), {"node 'if0'", "nest more than 64 deep"},
                 3);
}

TEST_F(BadModel, NestingUpToTheLimitConverts) {
  fs::path model = frontends::testing::nested_ifs(64).write(dir, "deep64.onnx");
  for (const char* to : {"m.onnx", "m.ir"}) {
    CliResult r = run_cli("convert " + model.string() + " " + (out / to).string());
    EXPECT_EQ(r.code, 0) << to << ": " << r.err;
  }
  CliResult r = run_cli("convert " + (out / "m.ir").string() + " " + (out / "back.onnx").string());
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST_F(BadModel, UnsortedNodesAreSortedAndSaidSo) {
  ModelBuilder b;
  b.input("x", TP::FLOAT, {int64_t{2}}).output("y", TP::FLOAT, {int64_t{2}});
  b.node("Neg", {"r"}, {"y"}, "neg");
  b.node("Relu", {"x"}, {"r"}, "relu");
  fs::path model = b.write(dir, "unsorted.onnx");
  CliResult r = run_cli("convert " + model.string() + " " + (out / "m.onnx").string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("refinery: note: " + model.string() + ":node 'neg': nodes are not in topological order"),
            std::string::npos)
      << r.err;
  onnx::ModelProto written = frontends::testing::read_model_proto(out / "m.onnx");
  ASSERT_EQ(written.graph().node_size(), 2);
  EXPECT_EQ(written.graph().node(0).name(), "relu");
  EXPECT_EQ(written.graph().node(1).name(), "neg");
}

TEST_F(BadModel, AHundredThousandNodeChainConvertsAndRuns) {
  fs::path model = frontends::testing::relu_chain(100000).write(dir, "chain.onnx");
  CliResult r = run_cli("convert " + model.string() + " " + (out / "m.onnx").string());
  EXPECT_EQ(r.code, 0) << r.err;
  r = run_cli("convert " + model.string() + " " + (out / "m.ir").string());
  EXPECT_EQ(r.code, 0) << r.err;
  r = run_cli("convert " + (out / "m.ir").string() + " " + (out / "back.onnx").string());
  EXPECT_EQ(r.code, 0) << r.err;
  r = run_cli("run " + model.string());
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST_F(BadModel, ConstantIndexOutOfRangeWhenRunning) {
  for (const char* op : {"Gather", "GatherElements"}) {
    ModelBuilder b;
    b.input("x", TP::FLOAT, {int64_t{4}}).output("y", TP::FLOAT, {int64_t{1}});
    auto* idx = b.model().mutable_graph()->add_initializer();
    idx->set_name("i");
    idx->set_data_type(TP::INT64);
    idx->add_dims(1);
    idx->add_int64_data(7);
    b.node(op, {"x", "i"}, {"y"}, "pick");
    fs::path model = b.write(dir, std::string(op) + ".onnx");
    CliResult r = run_cli("run " + model.string());
    EXPECT_EQ(r.code, 2) << op << ": " << r.err;
    EXPECT_EQ(r.err,
              "refinery: error: " + model.string() + ":node 'pick': index 7 is out of range for axis 0 of size 4\n")
        << op;
  }
}

}  // namespace
}  // namespace refinery::testing
