// End-to-end tests of the refinery command: help, inspect, convert, run, and
// the bad-input contract (one line naming the file and node, exit 2, nothing
// written).
#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "frontends/onnx.h"
#include "ir/text.h"
#include "tests/cli/cli_runner.h"

namespace refinery::testing {
namespace {

namespace fs = std::filesystem;

fs::path cli_scratch(const std::string& name) { return scratch_file("refinery_cli_test", name); }

TEST(Cli, EverySubcommandHasHelpWithAnExample) {
  for (std::string sub : {"inspect", "convert", "run"}) {
    CliResult r = run_cli(sub + " --help");
    EXPECT_EQ(r.code, 0) << sub;
    EXPECT_NE(r.out.find("Example"), std::string::npos) << sub << ":\n" << r.out;
    EXPECT_NE(r.out.find("refinery " + sub), std::string::npos) << sub;
  }
  CliResult top = run_cli("--help");
  EXPECT_EQ(top.code, 0);
  for (std::string sub : {"inspect", "convert", "run"}) EXPECT_NE(top.out.find(sub), std::string::npos);
}

TEST(Cli, InspectSummarisesTheExample) {
  CliResult r = run_cli(source_path("examples/tiny_cnn.onnx") + " ");  // no sub-command: usage error
  EXPECT_EQ(r.code, 2);
  r = run_cli("inspect " + source_path("examples/tiny_cnn.onnx"));
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* want : {"inputs:", "outputs:", "parameters:", "FLOPs:", "Conv", "BatchNormalization", "tensor<1x3x"})
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
}

TEST(Cli, ConvertRoundTripsThroughTheTextFormat) {
  fs::path ir = cli_scratch("tiny.ir"), back = cli_scratch("tiny_back.onnx");
  CliResult r = run_cli("convert " + source_path("examples/tiny_cnn.onnx") + " " + ir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  r = run_cli("convert " + ir.string() + " " + back.string());
  ASSERT_EQ(r.code, 0) << r.err;
  auto a = frontends::import_onnx(source_path("examples/tiny_cnn.onnx"));
  auto b = frontends::import_onnx(back);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(ir::graph_difference(*a, *b), "");
}

TEST(Cli, RunPrintsEveryOutputAndIsSeeded) {
  CliResult a = run_cli("run " + source_path("examples/tiny_cnn.onnx") + " --seed 5");
  ASSERT_EQ(a.code, 0) << a.err;
  CliResult b = run_cli("run " + source_path("examples/tiny_cnn.onnx") + " --seed 5");
  CliResult c = run_cli("run " + source_path("examples/tiny_cnn.onnx") + " --seed 6");
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, c.out);
  EXPECT_NE(a.out.find("min"), std::string::npos);
}

struct BadCase {
  const char* file;
  const char* node;  // the node the message must name ("" when the file is unreadable as a model)
};

class BadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInput, OneLineNamingFileAndNodeExitTwoNothingWritten) {
  const BadCase& c = GetParam();
  std::string model = source_path(std::string("tests/cli/data/") + c.file);
  for (const char* ext : {".ir", ".onnx"}) {
    fs::path out = cli_scratch(std::string("bad_out") + ext);
    CliResult r = run_cli("convert " + model + " " + out.string());
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("refinery: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.file), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.node), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  CliResult r = run_cli("inspect " + model);
  EXPECT_EQ(r.code, 2);
}

INSTANTIATE_TEST_SUITE_P(Cases, BadInput,
                         ::testing::Values(BadCase{"truncated.onnx", ""}, BadCase{"garbage.onnx", ""},
                                           BadCase{"missing_initializer.onnx", "add_bias"},
                                           BadCase{"dangling_input.onnx", "mul_ghost"}, BadCase{"cycle.onnx", "add_a"},
                                           BadCase{"wrong_types.onnx", "add_mixed"}),
                         [](const auto& info) {
                           std::string n = info.param.file;
                           return n.substr(0, n.find('.'));
                         });

TEST(Cli, BadDimFlagIsAnErrorNotACrash) {
  for (const char* flag : {"batch=abc", "batch", "batch=0", "=3", "batch=2x"}) {
    CliResult r = run_cli("run " + source_path("examples/tiny_cnn.onnx") + " --dim " + flag);
    EXPECT_EQ(r.code, 2) << flag << ": " << r.err;
    EXPECT_EQ(r.err,
              fmt::format("refinery: error: --dim expects NAME=VALUE with VALUE a positive integer, got '{}'\n", flag));
  }
}

TEST(Cli, MissingFileAndUnknownExtension) {
  CliResult r = run_cli("inspect /nonexistent/model.onnx");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("/nonexistent/model.onnx"), std::string::npos);
  r = run_cli("convert " + source_path("examples/tiny_cnn.onnx") + " " + cli_scratch("out.txt").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown model format '.txt'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(cli_scratch("out.txt")));
}

TEST(Cli, BadTextIrNamesLineAndColumn) {
  fs::path in = cli_scratch("broken.ir");
  {
    std::ofstream f(in);
    f << "graph @main(%x: tensor<4xf32>) {\n  %1 = relu(%x, %x) : tensor<4xf32>\n  return %1\n}\n";
  }
  fs::path out = cli_scratch("broken_out.onnx");
  CliResult r = run_cli("convert " + in.string() + " " + out.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "refinery: error: " + in.string() + ":2:8: relu takes 1 inputs, got 2\n");
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace refinery::testing
