// Every ```ir block in docs/ir.md parses and prints back to itself.
#include <gtest/gtest.h>

#include "ir/io.h"
#include "ir/text.h"

namespace refinery::ir {
namespace {

TEST(Docs, IrExamplesParseAndPrintBack) {
  auto doc = read_file(std::string(REFINERY_SOURCE_DIR) + "/docs/ir.md");
  ASSERT_TRUE(doc.has_value());
  size_t pos = 0, blocks = 0;
  while ((pos = doc->find("```ir\n", pos)) != std::string::npos) {
    size_t start = pos + 6, end = doc->find("```\n", start);
    ASSERT_NE(end, std::string::npos);
    std::string text = doc->substr(start, end - start);
    auto g = parse_graph(text, "docs/ir.md");
    ASSERT_TRUE(g.has_value()) << g.error().str() << "\n" << text;
    EXPECT_EQ(print_graph(*g), text);
    pos = end;
    ++blocks;
  }
  EXPECT_GE(blocks, 3u);
}

}  // namespace
}  // namespace refinery::ir
