// The open-addressing hashcons against a std::map model, through inserts
// and backward-shift erases.
#include "egraph/hashcons.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "egraph/basic_node.h"

namespace refinery::egraph {
namespace {

using Node = BasicNode<2>;

TEST(Hashcons, MatchesAMapModelUnderInsertAndErase) {
  std::mt19937 rng(7);
  Hashcons<Node> table;
  std::map<Node, Id> model;
  // Few distinct hashes force long probe runs and wrap-around.
  auto weak_hash = [](const Node& n) { return n.hash() & 0xffffffff0000000fULL; };
  for (int step = 0; step < 20000; ++step) {
    Node n(rng() % 3, {make_id(rng() % 50), make_id(rng() % 50)});
    auto it = model.find(n);
    if (it == model.end()) {
      EXPECT_FALSE(table.find(n, weak_hash(n)));
      Id owner = make_id(step);
      table.insert(n, weak_hash(n), owner);
      model.emplace(n, owner);
    } else if (rng() % 2) {
      EXPECT_EQ(table.find(n, weak_hash(n)), it->second);
      EXPECT_TRUE(table.erase(weak_hash(n), it->second));
      model.erase(it);
    }
    ASSERT_EQ(table.size(), model.size());
  }
  for (const auto& [n, id] : model) EXPECT_EQ(table.find(n, weak_hash(n)), id);
}

}  // namespace
}  // namespace refinery::egraph
