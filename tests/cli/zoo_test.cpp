// A convert round trip (.onnx -> .ir -> .onnx) works on every model of the
// zoo, and is the identity on the graph and in ONNX Runtime. The commands
// (`refinery inspect`, `refinery convert` both ways) run on two models; the
// others take the same functions in this process (ir::write_ir_file and
// read_ir_file, the ONNX reader and writer: what `convert` calls through
// cli/model_files.cpp), as each `refinery` process pays about 0.9 s of
// libtorch start-up (docs/measurements.md, "CI time").
#include <gtest/gtest.h>

#include <set>

#include "frontends/onnx.h"
#include "ir/text.h"
#include "tests/cli/cli_runner.h"

namespace refinery::testing {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> zoo_models() {
  std::vector<fs::path> out;
  fs::path dir = fs::path(REFINERY_BINARY_DIR) / "zoo";
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".onnx") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Zoo, InspectAndConvertRoundTripEveryModel) {
  auto models = zoo_models();
  if (models.empty()) GTEST_SKIP() << "no zoo in " << REFINERY_BINARY_DIR << "/zoo (build the 'zoo' target)";
  fs::path dir = fs::temp_directory_path() / "refinery_zoo_roundtrip";
  fs::create_directories(dir);
  // ONNX Runtime is part of the set-up: without it the check below would
  // pass unseen, so its absence fails here.
  ASSERT_TRUE(fs::exists(source_path("tools/ort/node_modules/onnxruntime-node")))
      << "tools/ort/node_modules/onnxruntime-node is missing: run scripts/setup.sh";
  const std::set<std::string> by_command = {"attn_matmul.onnx", "resnet18.onnx"};
  int commands_run = 0;
  for (const auto& m : models) {
    SCOPED_TRACE(m.filename().string());
    fs::path ir = dir / (m.stem().string() + ".ir"), back = dir / (m.stem().string() + ".onnx");
    if (by_command.contains(m.filename().string())) {
      ++commands_run;
      CliResult r = run_cli("inspect " + m.string());
      ASSERT_EQ(r.code, 0) << r.err;
      EXPECT_NE(r.out.find("FLOPs:"), std::string::npos);
      r = run_cli("convert " + m.string() + " " + ir.string());
      ASSERT_EQ(r.code, 0) << r.err;
      r = run_cli("convert " + ir.string() + " " + back.string());
      ASSERT_EQ(r.code, 0) << r.err;
    } else {
      auto g = frontends::import_onnx(m);
      ASSERT_TRUE(g.has_value()) << g.error().str();
      ASSERT_TRUE(ir::write_ir_file(*g, ir).has_value());
      auto text = ir::read_ir_file(ir);
      ASSERT_TRUE(text.has_value()) << text.error().str();
      auto written = frontends::export_onnx(*text, back);
      ASSERT_TRUE(written.has_value()) << written.error().str();
    }
    auto a = frontends::import_onnx(m);
    auto b = frontends::import_onnx(back);
    ASSERT_TRUE(a.has_value()) << a.error().str();
    ASSERT_TRUE(b.has_value()) << b.error().str();
    EXPECT_EQ(ir::graph_difference(*a, *b), "");
    std::string cmd = "node " + source_path("tools/ort/compare.mjs") + " " + m.string() + " " + back.string() +
                      " --exact > /dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << "ONNX Runtime outputs differ after the round trip";
    fs::remove(ir);
    fs::remove(fs::path(ir.string() + ".bin"));
    fs::remove(back);
  }
  EXPECT_EQ(commands_run, 2);
}

}  // namespace
}  // namespace refinery::testing
