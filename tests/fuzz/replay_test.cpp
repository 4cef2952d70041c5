// Every regression input of the fuzz targets (tests/fuzz/<target>/, each a
// finding that was fixed) and the real files they are seeded with must end
// in a clean outcome: accepted, or a Diag (exit 2 or 3), never an internal
// error. A crash or a sanitizer report fails the test as well.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "bench/fuzz/targets.h"

namespace refinery::fuzz {
namespace {

namespace fs = std::filesystem;
const fs::path kSource = REFINERY_SOURCE_DIR;

std::string read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Files under `dir` whose name ends in `suffix` (all files for an empty one).
std::vector<fs::path> files_in(const fs::path& dir, const std::string& suffix = {}) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().string().ends_with(suffix) && e.path().filename() != "README.md")
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

Outcome run(std::string_view target, const std::string& bytes) {
  const Target* t = find_target(target);
  EXPECT_NE(t, nullptr) << target;
  return t->check({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
}

void expect_clean(std::string_view target, const std::vector<fs::path>& files) {
  for (const fs::path& f : files) {
    Outcome outcome = run(target, read_bytes(f));
    EXPECT_NE(outcome.verdict, Verdict::InternalError) << f.string() << ": " << outcome.message;
  }
}

TEST(FuzzRegression, Onnx) { expect_clean("onnx", files_in(kSource / "tests/fuzz/onnx")); }
TEST(FuzzRegression, Nir) { expect_clean("nir", files_in(kSource / "tests/fuzz/nir")); }
TEST(FuzzRegression, IrText) { expect_clean("ir_text", files_in(kSource / "tests/fuzz/ir_text")); }
TEST(FuzzRegression, Rules) { expect_clean("rules", files_in(kSource / "tests/fuzz/rules")); }

// The seeds: the real files in the tree, read as the fuzzers first read them.
TEST(FuzzSeeds, OnnxModelsAreAcceptedAndBrokenOnesRefused) {
  auto models = files_in(kSource / "examples", ".onnx");
  ASSERT_FALSE(models.empty());
  for (const fs::path& f : models) EXPECT_EQ(run("onnx", read_bytes(f)).verdict, Verdict::Accepted) << f.string();
  auto broken = files_in(kSource / "tests/cli/data", ".onnx");
  ASSERT_FALSE(broken.empty());
  for (const fs::path& f : broken) EXPECT_EQ(run("onnx", read_bytes(f)).verdict, Verdict::BadInput) << f.string();
}

TEST(FuzzSeeds, NirFiles) {
  auto files = files_in(kSource.parent_path() / "shared/nir", ".nir");
  if (files.empty()) GTEST_SKIP() << "no ../shared/nir";
  // Two of the real files are broken (docs/nir.md, "Errors"): no top-level
  // edges, and an edge to a missing node.
  const std::set<std::string> broken{"NIR-demo-repo_norse_demo_scnn_model.nir",
                                     "paper_03_rnn_extras_braille_noDelay_bias_zero_subgraph.nir"};
  for (const fs::path& f : files) {
    Outcome outcome = run("nir", read_bytes(f));
    EXPECT_EQ(outcome.verdict, broken.contains(f.filename().string()) ? Verdict::BadInput : Verdict::Accepted)
        << f.string() << ": " << outcome.message;
  }
}

TEST(FuzzSeeds, IrFilesPrintBackAndFailingOnesAreRefused) {
  for (const fs::path& f : files_in(kSource / "tests/ir/golden", ".ir")) {
    Outcome outcome = run("ir_text", read_bytes(f));
    EXPECT_EQ(outcome.verdict, Verdict::Accepted) << f.string() << ": " << outcome.message;
  }
  auto fails = files_in(kSource / "tests/ir/fail", ".ir");
  ASSERT_FALSE(fails.empty());
  for (const fs::path& f : fails) {
    Verdict v = run("ir_text", read_bytes(f)).verdict;
    EXPECT_TRUE(v == Verdict::BadInput || v == Verdict::Limitation) << f.string();
  }
}

TEST(FuzzSeeds, RuleFilesCompileAndFailingOnesAreRefused) {
  auto lib = files_in(kSource / "rules/lib", ".rules");
  ASSERT_FALSE(lib.empty());
  for (const fs::path& f : lib) {
    Outcome outcome = run("rules", read_bytes(f));
    EXPECT_EQ(outcome.verdict, Verdict::Accepted) << f.string() << ": " << outcome.message;
  }
  for (const fs::path& f : files_in(kSource / "tests/rules/fail", ".rules"))
    EXPECT_EQ(run("rules", read_bytes(f)).verdict, Verdict::BadInput) << f.string();
}

TEST(FuzzSeeds, IrSidecarFollowsTheNulByte) {
  std::string text = "graph @main() {\n  %w = const blob<0> : tensor<2xf32>\n  return %w\n}\n";
  EXPECT_EQ(run("ir_text", text).verdict, Verdict::BadInput);  // blob<> but no sidecar
  std::string with_sidecar = text + '\0' + std::string(8, '\0');
  Outcome outcome = run("ir_text", with_sidecar);
  EXPECT_EQ(outcome.verdict, Verdict::Accepted) << outcome.message;
}

}  // namespace
}  // namespace refinery::fuzz
