#include "egraph/union_find.h"

#include <gtest/gtest.h>

namespace refinery::egraph {
namespace {

TEST(UnionFind, MakeSetIsItsOwnRoot) {
  UnionFind uf;
  Id a = uf.make_set();
  Id b = uf.make_set();
  EXPECT_EQ(uf.find(a), a);
  EXPECT_EQ(uf.find(b), b);
  EXPECT_NE(a, b);
}

TEST(UnionFind, LinkJoinsAndCompresses) {
  UnionFind uf;
  std::vector<Id> ids;
  for (int i = 0; i < 10; ++i) ids.push_back(uf.make_set());
  for (int i = 9; i > 0; --i) uf.link(ids[i - 1], ids[i]);  // a chain 9 -> 8 -> ... -> 0
  for (Id id : ids) EXPECT_EQ(uf.find(id), ids[0]);
  EXPECT_EQ(uf.find_mut(ids[9]), ids[0]);
  EXPECT_TRUE(uf.is_root(ids[0]));
  EXPECT_FALSE(uf.is_root(ids[5]));
  Id member = uf.make_member_of(ids[0]);
  EXPECT_EQ(uf.find(member), ids[0]);
}

}  // namespace
}  // namespace refinery::egraph
