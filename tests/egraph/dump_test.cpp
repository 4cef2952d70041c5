// Dot and extraction-gym JSON dumps; the JSON is parsed back and checked.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <variant>

#include "egraph/dump.h"
#include "tests/egraph/math_suite.h"

namespace refinery::egraph::math {
namespace {

// A minimal JSON reader, enough for the dump's objects, arrays, strings and
// numbers.
struct Json {
  std::variant<std::nullptr_t, double, std::string, std::vector<Json>, std::map<std::string, Json>> v;
  const Json& operator[](const std::string& k) const { return std::get<4>(v).at(k); }
  const std::vector<Json>& array() const { return std::get<3>(v); }
  const std::map<std::string, Json>& object() const { return std::get<4>(v); }
  const std::string& str() const { return std::get<2>(v); }
};

struct JsonReader {
  std::string_view s;
  std::size_t i = 0;
  void ws() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  }
  void expect(char c) {
    ws();
    if (i >= s.size() || s[i] != c) throw std::runtime_error(fmt::format("expected '{}' at {}", c, i));
    ++i;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (s.at(i) != '"') {
      if (s[i] == '\\') ++i;
      out += s.at(i++);
    }
    ++i;
    return out;
  }
  Json value() {
    ws();
    char c = s.at(i);
    if (c == '"') return Json{string()};
    if (c == '[') {
      ++i;
      std::vector<Json> out;
      ws();
      if (s.at(i) == ']') return ++i, Json{out};
      for (;;) {
        out.push_back(value());
        ws();
        if (s.at(i++) == ']') return Json{out};
      }
    }
    if (c == '{') {
      ++i;
      std::map<std::string, Json> out;
      ws();
      if (s.at(i) == '}') return ++i, Json{out};
      for (;;) {
        std::string k = string();
        expect(':');
        out.emplace(k, value());
        ws();
        if (s.at(i++) == '}') return Json{out};
      }
    }
    std::size_t used = 0;
    double d = std::stod(std::string(s.substr(i)), &used);
    i += used;
    return Json{d};
  }
};

TEST(Dump, ExtractionGymJsonParsesBack) {
  EGraph<MathNode, NoAnalysis> g;
  Id root = g.add_expr(must_parse("(+ x (* 2 y))"));
  Id twice = g.add_expr(must_parse("(+ y y)"));
  g.merge(*g.lookup_expr(must_parse("(* 2 y)")), twice);
  g.rebuild();
  std::string text = to_extraction_gym_json(g, std::span<const Id>(&root, 1));
  JsonReader reader{text};
  Json doc = reader.value();
  const auto& nodes = doc["nodes"].object();
  EXPECT_EQ(nodes.size(), g.num_class_nodes());
  std::set<std::string> classes;
  for (const auto& [id, node] : nodes) {
    classes.insert(node["eclass"].str());
    EXPECT_EQ(id.substr(0, id.find('.')), node["eclass"].str());
    for (const Json& child : node["children"].array()) EXPECT_TRUE(nodes.contains(child.str())) << child.str();
    EXPECT_EQ(std::get<double>(node["cost"].v), 1.0);
  }
  EXPECT_EQ(classes.size(), g.num_classes());
  ASSERT_EQ(doc["root_eclasses"].array().size(), 1u);
  EXPECT_EQ(doc["root_eclasses"].array()[0].str(), std::to_string(index(g.find(root))));
  // The + class holds the root's node; the merged class holds * and +.
  std::size_t products = 0;
  for (const auto& [id, node] : nodes) products += node["op"].str() == "*";
  EXPECT_EQ(products, 1u);
}

TEST(Dump, JsonEscapesOperatorText) { EXPECT_EQ(json_escape("a\"b\\c\n"), "a\\\"b\\\\c\\n"); }

TEST(Dump, DotHasOneClusterPerClass) {
  EGraph<MathNode, NoAnalysis> g;
  g.add_expr(must_parse("(+ x (sin x))"));
  g.rebuild();
  std::string dot = to_dot(g);
  EXPECT_TRUE(dot.starts_with("digraph egraph {"));
  std::size_t clusters = 0;
  for (std::size_t p = dot.find("subgraph cluster_"); p != std::string::npos; p = dot.find("subgraph cluster_", p + 1))
    ++clusters;
  EXPECT_EQ(clusters, g.num_classes());
  EXPECT_NE(dot.find("[label=\"sin\"]"), std::string::npos);
  EXPECT_NE(dot.find("lhead=cluster_"), std::string::npos);
  EXPECT_TRUE(dot.ends_with("}\n"));
}

}  // namespace
}  // namespace refinery::egraph::math
