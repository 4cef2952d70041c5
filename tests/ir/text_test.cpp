// Golden tests for the textual IR: every tests/ir/golden/*.ir prints back to
// itself byte for byte; every tests/ir/fail/*.ir fails with the message on its
// first line ("// ERROR: ...").
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ir/io.h"
#include "ir/text.h"

namespace refinery::ir {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> files_in(const std::string& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(REFINERY_SOURCE_DIR) / "tests/ir" / dir))
    if (e.path().extension() == ".ir") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(TextGolden, PrintsBackIdentically) {
  auto files = files_in("golden");
  ASSERT_GE(files.size(), 3u);
  for (const auto& f : files) {
    SCOPED_TRACE(f.filename().string());
    auto text = read_file(f);
    ASSERT_TRUE(text.has_value());
    auto g = parse_graph(*text, f.filename().string());
    ASSERT_TRUE(g.has_value()) << g.error().str();
    EXPECT_EQ(print_graph(*g), *text);
    auto again = parse_graph(print_graph(*g));
    ASSERT_TRUE(again.has_value()) << again.error().str();
    EXPECT_EQ(graph_difference(*g, *again), "");
  }
}

TEST(TextGolden, FailuresGiveExactMessages) {
  auto files = files_in("fail");
  ASSERT_GE(files.size(), 8u);
  for (const auto& f : files) {
    SCOPED_TRACE(f.filename().string());
    auto text = read_file(f);
    ASSERT_TRUE(text.has_value());
    std::string first = text->substr(0, text->find('\n'));
    ASSERT_EQ(first.rfind("// ERROR: ", 0), 0u) << "first line must state the expected error";
    auto g = parse_graph(*text, f.filename().string());
    ASSERT_FALSE(g.has_value());
    EXPECT_EQ(g.error().str(), first.substr(10));
  }
}

TEST(Text, NanConstantsAndLargeConstantsKeepTheirBits) {
  Graph g;
  ValueId x = g.add_input("x", TensorType{DType::f32, Shape({Dim(40)})});
  std::vector<float> big(40);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i) * 0.1f - 1.3f;
  big[7] = std::bit_cast<float>(0x7fc00123u);  // a NaN with a payload
  ValueId c = g.add_constant("c", std::make_shared<const Tensor>(Tensor::from_values<float>(DType::f32, {40}, big)));
  ValueId h = g.add_constant(
      "h", std::make_shared<const Tensor>(Tensor::from_values<uint16_t>(DType::f16, {2}, {0x3c00, 0x0001})));
  Node add;
  add.op = Op::Add;
  add.inputs = {x, c};
  NodeId n = g.add_node(add, {"y"}, {TensorType{DType::f32, Shape({Dim(40)})}});
  g.set_outputs({g.node(n).outputs[0], h});
  for (WeightsMode mode : {WeightsMode::Hex, WeightsMode::Blob}) {
    std::string blob;
    std::string text = print_graph(g, PrintOptions{.weights = mode}, &blob);
    fs::path dir = fs::temp_directory_path() / "refinery_text_test";
    fs::create_directories(dir);
    fs::path file = dir / "g.ir";
    ASSERT_TRUE(write_ir_file(g, file).has_value());
    auto back = mode == WeightsMode::Hex ? parse_graph(text) : read_ir_file(file);
    ASSERT_TRUE(back.has_value()) << back.error().str();
    EXPECT_EQ(graph_difference(g, *back), "");
    EXPECT_TRUE(fs::exists(dir / "g.ir.bin"));  // 40 floats exceed the inline limit
  }
}

// Found by fuzzing (tests/fuzz/ir_text): a huge offset wrapped the bounds
// check around and was read far past the sidecar; a huge constant was
// allocated before the sidecar's size was looked at.
TEST(Text, BlobsPastTheSidecarAreRefusedBeforeAnythingIsRead) {
  fs::path dir = fs::temp_directory_path() / "refinery_text_blob_test";
  fs::create_directories(dir);
  fs::path file = dir / "b.ir";
  auto error_of = [&](const std::string& constant) {
    std::ofstream(file) << "graph @main() {\n  %w = const " << constant << "\n  return %w\n}\n";
    std::ofstream(dir / "b.ir.bin", std::ios::binary) << std::string(8, '\0');
    auto g = read_ir_file(file);
    return g ? std::string("parsed") : g.error().str();
  };
  const std::string at = file.string() + ":2:14: ";
  EXPECT_EQ(error_of("blob<0> : tensor<2xf32>"), "parsed");
  EXPECT_EQ(error_of("blob<18446744073709551615> : tensor<2xf32>"),
            at + "blob<18446744073709551615> of 8 bytes runs past the end of the weights file (8 bytes)");
  EXPECT_EQ(error_of("blob<4> : tensor<2xf32>"),
            at + "blob<4> of 8 bytes runs past the end of the weights file (8 bytes)");
  EXPECT_EQ(error_of("blob<0> : tensor<1099511627776xf64>"),
            at + "blob<0> of 8796093022208 bytes runs past the end of the weights file (8 bytes)");
  fs::remove_all(dir);
}

TEST(Text, ElidedConstantsDoNotParse) {
  Graph g;
  std::vector<float> big(100, 1.0f);
  ValueId c = g.add_constant("c", std::make_shared<const Tensor>(Tensor::from_values<float>(DType::f32, {100}, big)));
  g.set_outputs({c});
  std::string text = print_graph(g, PrintOptions{.weights = WeightsMode::Elide});
  EXPECT_NE(text.find("elided<"), std::string::npos);
  auto back = parse_graph(text, "e.ir");
  ASSERT_FALSE(back.has_value());
  EXPECT_EQ(back.error().str(), "e.ir:2:14: elided constants cannot be parsed (print with weights)");
}

}  // namespace
}  // namespace refinery::ir
