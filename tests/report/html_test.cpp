// The HTML shell's pieces: escaping, hrefs, sortable cells, the command line
// a shell reads back, and the SVG plots.
#include <gtest/gtest.h>

#include <cstdio>

#include "report/command.h"
#include "report/html.h"
#include "report/plot.h"

namespace refinery::report {
namespace {

TEST(Html, EscapesEveryCharacterThatEndsTextOrAnAttribute) {
  EXPECT_EQ(escape("<script>alert('x') & \"y\"</script>"),
            "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;");
  EXPECT_EQ(escape("plain/name_1.onnx"), "plain/name_1.onnx");
}

TEST(Html, HrefsArePercentEncodedPaths) {
  EXPECT_EQ(url_path("cpu/zoo/a b<c>.onnx.html"), "cpu/zoo/a%20b%3Cc%3E.onnx.html");
  EXPECT_EQ(url_path("cpu/\"onmouseover=x.html"), "cpu/%22onmouseover%3Dx.html");
  EXPECT_EQ(url_path("../index.html"), "../index.html");
}

TEST(Html, SortCellsCarryTheirSortValue) {
  EXPECT_EQ(sort_cell("1.5 ms", std::optional<double>(0.0015), "num"),
            "<td data-v=\"0.0015\" class=\"num\">1.5 ms</td>");
  EXPECT_EQ(sort_cell("—", std::optional<double>()), "<td data-v=\"\">—</td>");  // sorts last
  EXPECT_EQ(sort_cell("x", "a\"b"), "<td data-v=\"a&quot;b\">x</td>");
  EXPECT_EQ(
      sort_header("cost_after", "cost <after>", true),
      "<th data-key=\"cost_after\" data-type=\"number\" aria-sort=\"none\" tabindex=\"0\">cost &lt;after&gt;</th>");
}

TEST(Html, PageHasTheErrorCatcherFirstAndTheReadyMarkLast) {
  std::string page = html_page("t <x>", "<p>body</p>");
  EXPECT_NE(page.find("<title>t &lt;x&gt;</title>"), std::string::npos);
  auto catcher = page.find("window.onerror"), body = page.find("<p>body</p>"), ready = page.find("data-ready");
  ASSERT_NE(catcher, std::string::npos);
  EXPECT_LT(catcher, body);
  EXPECT_LT(body, ready);
  EXPECT_NE(page.find("default-src 'none'"), std::string::npos);  // nothing loads from the network
  EXPECT_EQ(page.find("http://"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
}

// The shell reads the line back into the same arguments.
TEST(Command, AShellReadsItBackIntoTheSameArgv) {
  std::vector<std::string> argv{"printf", "[%s]", "a b", "it's", "<x>;$(y)", "", "plain-1.onnx"};
  std::string line = shell_command(argv);
  EXPECT_EQ(line.rfind("printf '[%s]' 'a b' 'it'\\''s'", 0), 0u) << line;
  FILE* p = popen(line.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  for (int c; (c = fgetc(p)) != EOF;) out += static_cast<char>(c);
  pclose(p);
  EXPECT_EQ(out, "[a b][it's][<x>;$(y)][][plain-1.onnx]");
}

TEST(Plot, BarsScaleToTheLargestValueAndNameMissingOnes) {
  std::string svg = bar_chart_svg({.id = "g", .title = "gain", .unit = "%",
                                   .bars = {{"a<b>", 50.0, "cpu/a.html"}, {"c", 100.0, ""}, {"d", std::nullopt, ""}}});
  EXPECT_NE(svg.find("width=\"180.0\""), std::string::npos) << svg;  // 50 of 100 over 360 px
  EXPECT_NE(svg.find("width=\"360.0\""), std::string::npos);
  EXPECT_NE(svg.find("no value"), std::string::npos);
  EXPECT_NE(svg.find("a&lt;b&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("a<b>"), std::string::npos);
  EXPECT_NE(svg.find("<a href=\"cpu/a.html\">"), std::string::npos);
}

TEST(Plot, LinesHaveAPointPerValue) {
  std::string svg = line_chart_svg({.id = "l", .title = "growth", .series = {{"nodes", {10, 20, 40}}},
                                    .markers = {{0, "simplify"}, {2, "explore"}}});
  EXPECT_NE(svg.find("points=\"64.0,199.0 304.0,144.0 544.0,34.0\""), std::string::npos) << svg;
  EXPECT_NE(svg.find(">explore<"), std::string::npos);
}

}  // namespace
}  // namespace refinery::report
